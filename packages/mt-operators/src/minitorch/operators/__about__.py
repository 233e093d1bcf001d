"""Version of mt-operators (read by hatchling)."""

__version__ = "0.5.0"
