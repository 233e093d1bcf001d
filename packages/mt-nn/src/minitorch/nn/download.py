"""Fetching dataset files from their public homes: verified, atomic and resumable.

The readers' ``download`` class methods (``MNIST.download``, ``SST2.download``,
``GloVe.download``) use ``fetch``. What it guarantees:

- **Verified.** The file's SHA-256 must be the pinned one (or, for a gzipped file that
  pins the SHA-256 of its content, the gunzipped content's, so a mirror that recompressed
  the file still passes). A mismatch raises ``DownloadError`` and nothing is kept.
- **Atomic.** Bytes go to ``.<name>.part`` next to the target; the target name appears
  only once the whole file is there and verified (``os.replace``).
- **One download at a time per folder.** Two processes (or threads) fetching into one
  folder would share that ``.part`` file: each truncated and appended to the other's
  bytes, and the losers' renames failed. A download holds an exclusive lock on its
  folder (``flock`` of the folder itself, so no lock file is left behind; released by the
  system when a process dies), and looks for a finished, verified file once it has the
  lock: the others wait, then find the file the first one wrote. Where the system has no
  ``flock`` (Windows), each process writes a ``.part`` file of its own instead.
- **Resumable.** A transfer cut short is retried with an HTTP ``Range`` request from where
  it stopped, in the same call (``retries`` times) and in a later call (the ``.part`` file
  stays). A server that ignores ``Range`` makes it start again from zero, cleanly.
- **Mirrors.** ``mirror=`` or the ``MINITORCH_MIRROR`` environment variable replaces the
  public homes by one base URL that serves ``<base>/<dataset>/<file>`` (``mnist/``,
  ``sst2/``, ``glove/``), for example a folder of the original files behind any static
  HTTP server, or a ``file://`` URL.
- **Progress.** A tqdm bar on stderr when tqdm is installed (``pip install
  "mt-nn[progress]"``), else one line per file.

Only the standard library speaks HTTP here (``urllib``).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.client
import importlib
import os
import shutil
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import DownloadError

try:
    import fcntl
except ImportError:  # Windows: no flock
    fcntl = None  # type: ignore[assignment]

__all__ = ["MIRROR_ENV", "DownloadError", "Remote", "extract", "fetch", "folder_lock", "sources"]

MIRROR_ENV = "MINITORCH_MIRROR"
"""Environment variable holding a mirror base URL (``<base>/<dataset>/<file>``)."""

_CHUNK = 1 << 16
_RETRY_DELAY = 1.0
"""Seconds before the first retry of a broken transfer (doubled each time)."""
_USER_AGENT = "minitorch-nn (python urllib)"


@dataclass(frozen=True)
class Remote:
    """One file of a dataset as its public home serves it.

    Attributes:
        name: the file name on the server, and of the downloaded file.
        urls: the public homes, tried in order.
        sha256: SHA-256 of the file.
        size: its size in bytes, if known.
        content_sha256: for a gzipped file, the SHA-256 of its gunzipped content, also
            accepted (a mirror may have recompressed the file).
    """

    name: str
    urls: tuple[str, ...]
    sha256: str
    size: int | None = None
    content_sha256: str | None = None


def sources(remote: Remote, dataset: str, mirror: str | None = None) -> list[str]:
    """The URLs to try for ``remote``: ``<mirror>/<dataset>/<name>``, else its homes.

    ``mirror`` falls back to ``$MINITORCH_MIRROR``; an empty value means no mirror.
    """
    base = mirror or os.environ.get(MIRROR_ENV) or ""
    if base:
        return [f"{base.rstrip('/')}/{dataset}/{remote.name}"]
    return list(remote.urls)


class _Held(threading.local):
    """The folders this thread holds locked, with how many ``folder_lock`` blocks deep."""

    def __init__(self) -> None:
        self.depth: dict[str, int] = {}


_HELD = _Held()


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock on the existing ``folder`` while the block runs.

    Other processes and threads that ask for the same folder wait until it is released
    (the system releases it when a process dies). A thread that holds it already may ask
    again (a reader's download locks its folder around ``fetch`` and ``extract``, which
    lock it too). Without ``flock`` (Windows) it locks nothing.
    """
    key = os.path.realpath(folder)
    depth = _HELD.depth
    if fcntl is None or key in depth:
        depth[key] = depth.get(key, 0) + 1
        try:
            yield
        finally:
            depth[key] -= 1
            if not depth[key]:
                del depth[key]
        return
    fd = os.open(key, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # blocks (without the GIL) until it is ours
        depth[key] = 1
        try:
            yield
        finally:
            del depth[key]
    finally:
        os.close(fd)  # releases the lock


def _part(path: Path) -> Path:
    """The temporary file a download or extraction of ``path`` writes, before the rename.

    One name per folder where downloads take turns (``folder_lock``); without ``flock``,
    one per process, so that two processes never write into the same file.
    """
    own = "" if fcntl is not None else f".{os.getpid()}"
    return path.with_name(f".{path.name}{own}.part")


def _sha256(path: Path, gunzip: bool = False) -> str:
    digest = hashlib.sha256()
    with gzip.open(path, "rb") if gunzip else open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _matches(path: Path, remote: Remote) -> bool:
    """Whether ``path`` is the file ``remote`` pins (its bytes or its gunzipped content)."""
    if _sha256(path) == remote.sha256:
        return True
    if remote.content_sha256 is None:
        return False
    try:
        return _sha256(path, gunzip=True) == remote.content_sha256
    except (OSError, EOFError, zlib.error):
        return False


class _Line:
    """The progress "bar" without tqdm: the one line printed when the transfer starts."""

    def update(self, n: int) -> None:
        """Nothing to draw."""

    def close(self) -> None:
        """Nothing to close."""


def _human(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _progress(enabled: bool, url: str, total: int | None, initial: int) -> Any:
    """A tqdm bar on stderr, or a ``_Line`` after one line of notice."""
    if not enabled:
        return _Line()
    size = f" ({_human(total)})" if total else ""
    resumed = f", resuming at {_human(initial)}" if initial else ""
    try:
        tqdm = importlib.import_module("tqdm").tqdm
    except ImportError:
        print(
            f"downloading {url}{size}{resumed} (pip install 'mt-nn[progress]' for a progress bar)",
            file=sys.stderr,
            flush=True,
        )
        return _Line()
    print(f"downloading {url}{size}{resumed}", file=sys.stderr, flush=True)
    tty = sys.stderr.isatty()
    return tqdm(
        total=total,
        initial=initial,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=url.rsplit("/", 1)[-1],
        file=sys.stderr,
        mininterval=0.1 if tty else 1.0,  # at most one line a second into a log
    )


def _resumed_at(response: Any, have: int) -> bool:
    """Whether ``response`` is the rest of the file from byte ``have`` (a 206 for it)."""
    if not have or getattr(response, "status", None) != 206:
        return False
    content_range = response.headers.get("Content-Range", "")
    return str(content_range).startswith(f"bytes {have}-")


def _total(response: Any, start: int) -> int | None:
    length = response.headers.get("Content-Length")
    return start + int(length) if length and str(length).isdigit() else None


def _transfer(url: str, part: Path, retries: int, timeout: float, progress: bool) -> None:
    """Download ``url`` into ``part``, resuming what ``part`` holds; retry broken transfers."""
    failures = 0
    while True:
        have = part.stat().st_size if part.is_file() else 0
        headers = {"User-Agent": _USER_AGENT}
        if have:
            headers["Range"] = f"bytes={have}-"
        request = urllib.request.Request(url, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                start = have if _resumed_at(response, have) else 0
                total = _total(response, start)
                bar = _progress(progress, url, total, start)
                try:
                    with open(part, "ab" if start else "wb") as out:
                        while chunk := response.read(_CHUNK):
                            out.write(chunk)
                            bar.update(len(chunk))
                        out.flush()
                        os.fsync(out.fileno())
                finally:
                    bar.close()
            got = part.stat().st_size
            if total is not None and got != total:
                raise http.client.IncompleteRead(b"", total - got)
            return
        except urllib.error.HTTPError as e:
            if e.code == 416 and have:  # the part file is not a prefix of this file
                part.unlink(missing_ok=True)
                continue
            if e.code < 500 or failures >= retries:
                raise DownloadError(f"{url}: HTTP {e.code} {e.reason}") from e
            error: Exception = e
        except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
            if failures >= retries:
                raise DownloadError(
                    f"{url}: {type(e).__name__}: {e} (gave up after {retries} retries; "
                    "run the download again to resume)"
                ) from e
            error = e
        failures += 1
        delay = _RETRY_DELAY * 2 ** (failures - 1)
        if progress:
            print(f"{url}: {error}; retrying in {delay:.0f} s", file=sys.stderr, flush=True)
        time.sleep(delay)


def fetch(
    urls: Sequence[str],
    dest: str | os.PathLike[str],
    remote: Remote,
    *,
    progress: bool = True,
    retries: int = 3,
    timeout: float = 60.0,
) -> Path:
    """Download ``remote`` to ``dest`` from the first of ``urls`` that works.

    A ``dest`` that is already there and matches the checksum is kept as it is; one that
    does not match is downloaded again. The download holds ``folder_lock`` on ``dest``'s
    folder: a second process or thread fetching the same file waits, then finds it.

    Args:
        urls: where to get it, tried in order (see ``sources``).
        dest: the file to write.
        remote: the file's name, size and checksums.
        progress: show a progress bar (tqdm) or a line per file on stderr.
        retries: how many times a broken transfer is resumed before giving up on a URL.
        timeout: seconds without an answer before a connection counts as broken.

    Returns:
        ``dest``.

    Raises:
        DownloadError: if no URL gave the file, or what arrived does not match the
            checksum (the message names the URL, what was expected and what came; no
            file is left behind).
    """
    target = Path(dest)
    if target.is_file() and _matches(target, remote):
        return target  # no lock needed: the name appears only for a whole, verified file
    target.parent.mkdir(parents=True, exist_ok=True)
    with folder_lock(target.parent):
        return _fetch_locked(urls, target, remote, progress, retries, timeout)


def _fetch_locked(
    urls: Sequence[str], target: Path, remote: Remote, progress: bool, retries: int, timeout: float
) -> Path:
    """``fetch`` once it holds the folder's lock: another may have fetched it meanwhile."""
    if target.is_file():
        if _matches(target, remote):
            return target
        if progress:
            print(f"{target} does not match its checksum: downloading it again", file=sys.stderr)
    part = _part(target)
    failures = []
    for url in urls:
        for attempt in range(2):  # a second time from zero if a resumed file is wrong
            resumed = part.is_file() and part.stat().st_size > 0
            try:
                _transfer(url, part, retries, timeout, progress)
            except DownloadError as e:
                failures.append(str(e))
                break
            if _matches(part, remote):
                os.replace(part, target)
                return target
            digest, size = _sha256(part), part.stat().st_size
            part.unlink()
            if resumed and attempt == 0:
                continue
            raise DownloadError(
                f"{url}: the file that arrived ({size} bytes, SHA-256 {digest}) is not "
                f"{remote.name} (expected SHA-256 {remote.sha256}"
                + (f", {remote.size} bytes" if remote.size else "")
                + "); nothing was kept. Is the mirror serving the original file?"
            )
    raise DownloadError(
        f"could not download {remote.name}: "
        + "; ".join(failures)
        + f". Check the network, or set ${MIRROR_ENV} to a mirror that serves it, or put "
        f"the file at {target} yourself."
    )


def extract(archive: str | os.PathLike[str], members: Mapping[str, Path]) -> None:
    """Copy ``members`` (archive name -> destination) out of a zip ``archive``, atomically.

    Each member's CRC is checked as it is read; a destination appears only when complete.

    Raises:
        DownloadError: if the archive is damaged or lacks a member (delete it and download
            it again).
    """
    source = Path(archive)
    for member, dest in members.items():
        part = _part(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        with folder_lock(dest.parent):  # one writer of the .part file at a time
            try:
                with (
                    zipfile.ZipFile(source) as zf,
                    zf.open(member) as src,
                    open(part, "wb") as out,
                ):
                    shutil.copyfileobj(src, out, 1 << 20)
                os.replace(part, dest)
            except (zipfile.BadZipFile, KeyError, OSError, EOFError, zlib.error) as e:
                part.unlink(missing_ok=True)
                raise DownloadError(
                    f"{source}: cannot extract {member} ({type(e).__name__}: {e}); delete "
                    "the archive and download it again"
                ) from e
