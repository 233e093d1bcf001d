"""Version of mt-operators (read by hatchling)."""

__version__ = "0.6.0"
