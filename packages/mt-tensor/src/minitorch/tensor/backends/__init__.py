"""Backends: the protocol, the simple backend, and the registry of the others.

``protocol.py`` is what a backend supplies and what all share (``TensorOps``,
``TensorBackend``); ``simple.py`` the reference backend in plain Python (task 2.3);
``registry.py`` finds the other backends by name and keeps the default one.
"""
