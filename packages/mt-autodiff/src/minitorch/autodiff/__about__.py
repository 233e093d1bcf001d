"""Version of mt-autodiff (read by hatchling)."""

__version__ = "0.5.1"
