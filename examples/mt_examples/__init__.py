"""MiniTorch's examples as one importable package.

Each launcher beside this folder (``train_*.py``) runs the ``main`` of the module of the
same name here; in the repository they are in ``examples/``, where the explorer app and the
tests import the same modules.
"""
