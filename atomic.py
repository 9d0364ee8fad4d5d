"""Atomic output files: a tool that fails leaves no partial file behind.

Every output is written to a temporary file in the destination's directory and renamed over
the destination only once complete (`os.replace` is atomic within a file system). The file gets
the permissions an ordinary `open()` would give it (mkstemp's are 0600).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path beside `path` for a writer that takes a file name; on success it
    replaces `path`, on any error it is removed."""
    dest = Path(path)
    parent = dest.parent if str(dest.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=dest.suffix or ".tmp", dir=parent)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` to `path` atomically."""
    write_bytes(path, text.encode())
