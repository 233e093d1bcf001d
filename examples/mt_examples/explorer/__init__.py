"""What the MiniTorch explorer's pages compute, kept apart from Streamlit so it can be tested.

- ``expression``: a safe evaluator of expressions over Scalars (``ast``, a small whitelist).
- ``autodiff_graph``: the computation graph of a Scalar, with every node's derivative, as DOT.
- ``strides``: shapes, strides and storage positions of a tensor after permute/view calls.
- ``training``: a training run in a background thread, reusing ``examples/train_*.py``.
- ``mnist``: MNIST images, a checkpoint's predictions and the first layer's filters.
- ``plots``: the Plotly figures the pages show.
"""
