"""Version of mt-fast (read by hatchling)."""

__version__ = "0.5.6"
