"""The dataset exceptions, shared by the readers (``data``) and the downloader."""

from __future__ import annotations

__all__ = ["CorruptDataError", "DatasetError", "DownloadError", "MissingDataError"]


class DatasetError(Exception):
    """A dataset file could not be used."""


class MissingDataError(DatasetError, FileNotFoundError):
    """A dataset file is not where it was looked for."""


class CorruptDataError(DatasetError, ValueError):
    """A dataset file exists but its contents are not what the format says."""


class DownloadError(DatasetError):
    """A dataset file could not be downloaded, or what arrived is not the expected file."""
