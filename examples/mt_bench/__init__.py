"""MiniTorch's benchmarks: each module runs as ``python -m mt_bench.<name>``.

``common`` holds what they share (the optional torch import, ``Row``, timing, the
elementwise cases, the common options and the Markdown table); ``scalar``, ``tensor``,
``fast``, ``cuda`` and ``nn`` measure one layer each (``hatch run bench:<name>``),
``report`` the speed issues' workloads in one table, and ``parallel_check`` makes the calls
of the course's ``project/parallel_check.py`` with Numba's parallel diagnostics.
"""
