"""``python -m grader calibrate|grade``: the autograder bundle's entry point."""

import sys

from .grading import main

sys.exit(main())
