"""Version of mt-autodiff (read by hatchling)."""

__version__ = "0.3.2"
