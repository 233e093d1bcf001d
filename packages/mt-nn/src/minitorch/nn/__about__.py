"""Version of mt-nn (read by hatchling)."""

__version__ = "0.7.0"
