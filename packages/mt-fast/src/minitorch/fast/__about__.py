"""Version of mt-fast (read by hatchling)."""

__version__ = "0.3.0"
