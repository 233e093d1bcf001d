"""Version of mt-nn (read by hatchling)."""

__version__ = "0.2.0"
