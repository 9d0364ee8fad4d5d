"""The one output writer of every tool: whole files over regular files only.

An output is written to a temporary file beside its destination and renamed over it once
complete (`os.replace` is atomic within a file system), so a run that fails, is interrupted or
is killed never leaves a partial file under the final name and never touches the earlier one.
A destination that exists must be a regular file: a symbolic link, FIFO, device, socket or
directory is refused by name (replacing `/dev/null` or a link's target is not what anyone
asked for). Nothing is created but the file itself: a missing directory is an error, not made.

Tools check every output up front (`check_outputs`), before any work, so an unwritable output
is reported before a long compile rather than after it; the rename re-checks the destination.
The file gets the permissions an ordinary `open()` would give it (mkstemp's are 0600).
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path


class OutputError(ValueError):
    """An output the tools will not write: its message names the path and the reason."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _refuse_special(dest: Path, what: str) -> None:
    """Raise unless `dest` is absent or a regular file (a symbolic link counts as special)."""
    try:
        st = os.lstat(dest)
    except FileNotFoundError:
        return
    except OSError as e:
        raise OutputError(f"{what} {dest}: {e.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(f"{what} {dest} is a symbolic link: outputs are written over regular files only")
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise OutputError(f"{what} {dest} is {kind}: outputs are written over regular files only")


_HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Defer SIGINT and SIGTERM over a few system calls that create and remove (or hand over) a
    temporary file, so an interruption cannot land between them and leave the file behind. The
    Python-level handlers are swapped, not the thread's signal mask: the OS may hand a process
    signal to any thread, but Python runs its handlers in the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    before = {}
    for sig in _HELD:
        handler = signal.getsignal(sig)
        if handler is not None:  # None: installed outside Python, cannot be put back
            before[sig] = signal.signal(sig, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        for sig in pending:
            signal.raise_signal(sig)


def _parent(dest: Path) -> Path:
    return dest.parent if str(dest.parent) else Path(".")


def check_output(path: str | os.PathLike[str], what: str = "output") -> Path:
    """`path` as an output destination, or `OutputError` naming it: an absent or regular file in
    an existing directory where a file can be created (probed by creating and removing one)."""
    if not str(path):
        raise OutputError(f"{what}: empty file name")
    dest = Path(path)
    _refuse_special(dest, what)
    parent = _parent(dest)
    if not parent.is_dir():
        raise OutputError(f"{what} {dest}: directory {parent} does not exist")
    with _signals_held():
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".probe", dir=parent)
        except OSError as e:
            raise OutputError(f"{what} {dest}: cannot create a file in {parent} ({e.strerror})") from None
        os.close(fd)
        os.unlink(tmp)
    return dest


def _identity(p: Path) -> tuple[int, int] | str:
    try:
        st = os.stat(p)
        return (st.st_dev, st.st_ino)
    except OSError:
        return str(p.resolve())


def check_outputs(
    outputs: Mapping[str, str | os.PathLike[str] | None], inputs: Iterable[str | os.PathLike[str]] = ()
) -> None:
    """Check every named output (option -> path; None or `-` skipped) before any work: each one
    writable (`check_output`), no two naming the same file, none naming an input."""
    seen: dict[tuple[int, int] | str, str] = {}
    for p in inputs:
        if p and str(p) != "-" and Path(p).exists():
            seen[_identity(Path(p))] = f"input {p}"
    for what, p in outputs.items():
        if p is None or str(p) == "-":
            continue
        dest = check_output(p, what)
        key = _identity(dest)
        if key in seen:
            raise OutputError(f"{what} {dest} names the same file as {seen[key]}")
        seen[key] = f"{what} {dest}"


@contextmanager
def atomic_path(path: str | os.PathLike[str], what: str = "output") -> Iterator[str]:
    """Yield a temporary path beside `path` for a writer that takes a file name; on success it
    replaces `path` (still absent or a regular file), on any error or interruption it is removed.
    An OS error names the destination, never the temporary file."""
    dest = check_output(path, what)
    tmp: str | None = None
    try:
        with _signals_held():  # an interruption is raised only once `tmp` names the file
            fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=_parent(dest))
            os.close(fd)
        try:
            yield tmp
        except OSError as e:
            raise OutputError(f"cannot write {what} {dest}: {e.strerror}") from None
        _refuse_special(dest, what)
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            os.replace(tmp, dest)
        except OSError as e:
            raise OutputError(f"cannot write {what} {dest}: {e.strerror}") from None
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes(path: str | os.PathLike[str], data: bytes, what: str = "output") -> None:
    """Write `data` to `path` atomically."""
    with atomic_path(path, what) as tmp, open(tmp, "wb") as f:
        f.write(data)


def write_text(path: str | os.PathLike[str], text: str, what: str = "output") -> None:
    """Write `text` to `path` atomically."""
    write_bytes(path, text.encode(), what)


__all__ = ["OutputError", "atomic_path", "check_output", "check_outputs", "write_bytes", "write_text"]
