"""Manual: task 0.5's network with its weights set by hand (``mt_examples.run_manual``).

The page is ``run_manual.page``, the one a starter opens with ``python run_manual.py
--app``; its Save button writes ``$MINITORCH_MANUAL_EXPORT``, else
``mt_examples/manual_weights.json``.
"""

from mt_examples.run_manual import page

page()
