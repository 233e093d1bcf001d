"""MiniTorch's examples as one importable package (``examples/`` of the repository).

``python examples/<name>.py`` runs ``mt_examples.<name>.main``; the explorer app
(``examples/app``) and the tests import the same modules.
"""
