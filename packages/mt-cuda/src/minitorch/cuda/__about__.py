"""Version of mt-cuda (read by hatchling)."""

__version__ = "0.3.4"
