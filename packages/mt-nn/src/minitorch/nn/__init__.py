"""MiniTorch module 4: convolution, pooling, softmax, dropout and layers.

``conv1d``/``conv2d`` run the kernels of the input's backend, one module per backend in
``kernels/`` (``simple``: plain loops, the course's reference; ``fast``: parallel Numba,
which a course starter leaves out and runs ``simple`` for; ``cuda``: CUDA, with the
``cuda`` extra), chosen in ``conv.CONV_KERNELS``. Everything
else is built from the backend primitives, so it runs on any backend.
"""

from .__about__ import __version__
from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .conv import Conv1dFun, Conv2dFun, conv1d, conv2d
from .data import (
    MNIST,
    SST2,
    CorruptDataError,
    DatasetError,
    DownloadError,
    GloVe,
    MissingDataError,
)
from .download import MIRROR_ENV
from .functions import (
    argmax,
    avgpool2d,
    dropout,
    logsoftmax,
    max,
    maxpool2d,
    softmax,
    tile,
)
from .loss import cross_entropy, nll_loss, one_hot
from .modules import Conv1d, Conv2d, Linear

__all__ = [
    "MNIST",
    "SST2",
    "CheckpointError",
    "Conv1d",
    "Conv1dFun",
    "Conv2d",
    "Conv2dFun",
    "CorruptDataError",
    "DatasetError",
    "DownloadError",
    "GloVe",
    "Linear",
    "MIRROR_ENV",
    "MissingDataError",
    "__version__",
    "argmax",
    "avgpool2d",
    "conv1d",
    "conv2d",
    "cross_entropy",
    "dropout",
    "load_checkpoint",
    "logsoftmax",
    "max",
    "maxpool2d",
    "nll_loss",
    "one_hot",
    "save_checkpoint",
    "softmax",
    "tile",
]
