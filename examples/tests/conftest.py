"""Put ``examples/`` on ``sys.path``, as ``python examples/<name>.py`` does.

The scripts import their shared helpers with ``from example_support import ...``, and the
tests load the scripts with ``example_support.load_example(name)``.
"""

import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))
