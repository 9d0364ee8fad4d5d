"""The emulator's worker threads: a CALL's chunks of tiles, and a phase's copies, side by side.

Tiles are independent within a CALL and a phase writes no word twice, so both split into pieces
that touch disjoint memory. The pieces are the ones a single thread runs in turn (a CALL's
chunks keep their boundaries), so results are bit-identical for any thread count. The heavy
work releases the GIL: BLAS and NumPy's loops, and the compiled loops (`nogil`).

IPU_EMULATOR_THREADS sets the count; the default is the CPUs this process may run on (at most
8). Each BLAS call keeps one thread (`Emulator.run`): OpenBLAS's own spinning workers slowed
the batched per-tile matmuls 5-10x on a loaded 2-core machine, where threads that each run
whole single-threaded calls do not spin.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MAX_THREADS = 8

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_background: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def emulator_threads() -> int:
    """Threads an emulator runs a CALL or a phase on: IPU_EMULATOR_THREADS, else the CPUs this
    process may use (at most `MAX_THREADS`)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (a platform without affinity)
        cpus = os.cpu_count() or 1
    try:
        return max(1, int(os.environ.get("IPU_EMULATOR_THREADS", min(cpus, MAX_THREADS))))
    except ValueError:
        return 1


def _executor(threads: int) -> ThreadPoolExecutor:
    """The process's pool of `threads` workers (made again when the count changes)."""
    global _pool, _pool_size  # noqa: PLW0603
    with _lock:
        if _pool is None or _pool_size != threads:
            if _pool is not None:
                _pool.shutdown(wait=True)
            _pool, _pool_size = ThreadPoolExecutor(threads, thread_name_prefix="ipu-emulator"), threads
        return _pool


def run_pieces(fn: Callable[[T], R], pieces: Sequence[T], threads: int) -> list[R]:
    """[fn(p) for p in pieces], on up to `threads` threads. Every piece runs to its end before
    this returns; the first piece's exception (in piece order) is raised, as a loop would."""
    if threads <= 1 or len(pieces) <= 1:
        return [fn(p) for p in pieces]
    futures = [_executor(threads).submit(fn, p) for p in pieces]
    errors = [f.exception() for f in futures]  # waits for every piece: none is left writing memory
    for e in errors:
        if e is not None:
            raise e
    return [f.result() for f in futures]


def background() -> ThreadPoolExecutor:
    """The process's one thread for work that runs beside an emulator's run (its phases' checks):
    one queue, so several emulators' work does not crowd the pieces of a CALL."""
    global _background  # noqa: PLW0603
    with _lock:
        if _background is None:
            _background = ThreadPoolExecutor(1, thread_name_prefix="ipu-emulator-ahead")
        return _background
