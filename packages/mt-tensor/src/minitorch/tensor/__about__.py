"""Version of mt-tensor (read by hatchling)."""

__version__ = "0.7.3"
