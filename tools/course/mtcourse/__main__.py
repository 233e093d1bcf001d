"""``python -m mtcourse``: the course tool's command line."""

import sys

from .cli import main

sys.exit(main())
