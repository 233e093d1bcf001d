import sys
from pathlib import Path

# The course tool is a folder of modules run as a script, not an installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
