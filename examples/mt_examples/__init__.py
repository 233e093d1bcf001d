"""MiniTorch's examples as one importable package (``examples/`` of the repository).

``python examples/<name>.py`` runs ``mt_examples.<name>.main``; the explorer app
(``examples/app``) and the tests import the same modules. ``support`` holds what the
training scripts share, ``bench`` what the benchmarks share, ``toy`` the toy-dataset
training loop of ``train_scalar`` and ``train_tensor``.
"""
