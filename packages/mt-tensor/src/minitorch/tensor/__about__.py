"""Version of mt-tensor (read by hatchling)."""

__version__ = "0.5.0"
