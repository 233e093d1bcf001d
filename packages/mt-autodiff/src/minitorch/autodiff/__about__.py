"""Version of mt-autodiff (read by hatchling)."""

__version__ = "0.4.0"
