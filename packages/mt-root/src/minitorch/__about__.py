"""Version of mt-root (read by hatchling)."""

__version__ = "0.1.1"
