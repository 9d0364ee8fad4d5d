"""Shared tool plumbing: contexts, parsing, error reporting without tracebacks, logging."""

from __future__ import annotations

import gc
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.utils.exceptions import DiagnosticException

from ipu.context import make_context

__all__ = ["ToolError", "collect_less", "exit_fast", "make_context", "parse_file", "setup_logging", "user_errors"]


class ToolError(Exception):
    """A user-facing error: printed as one message, exit status 1."""


def parse_file(ctx: Context, path: str | Path) -> builtin.ModuleOp:
    p = Path(path)
    if not p.is_file():
        raise ToolError(f"no such file: {p}")
    from ipu.ir_text import ApiError, parse_path

    try:
        return parse_path(ctx, p)
    except ApiError as e:
        raise ToolError(str(e)) from None


def setup_logging(level: str) -> None:
    lvl = getattr(logging, level.upper(), None)
    if not isinstance(lvl, int):
        raise ToolError(f"unknown log level '{level}' (use debug, info, warning, error)")
    logging.basicConfig(stream=sys.stderr, level=lvl, format="%(asctime)s %(levelname)s %(message)s")


def collect_less() -> None:
    """Collect cyclic garbage every 10000 net allocations rather than 700: building the IR of an
    mk2 compile allocates millions of objects and few cycles, and Python's default spent ~0.45 s
    in 460 collections there (0.23 s in 28 with this). For the commands only (process-wide)."""
    gc.set_threshold(10_000, 10, 10)


def exit_fast() -> None:
    """End a tool that has succeeded without the interpreter's teardown, which deallocates the
    compiler's objects one by one (about 0.8 s after an mk2 compile, 0.3 s after packaging it).
    Its output files are closed by then; standard output, standard error and the log handlers
    are flushed here. Under coverage (whose exit hook saves its data), or when a flush fails
    (a closed pipe), it returns and the interpreter exits as usual."""
    if "coverage" in sys.modules:
        return
    logging.shutdown()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(0)


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def internal_error(e: BaseException) -> None:
    """A compiler bug: one line naming it (set IPU_TRACEBACK=1 for the traceback), exit 2."""
    import os

    if os.environ.get("IPU_TRACEBACK"):
        raise e
    print(f"internal error: {type(e).__name__}: {e} (set IPU_TRACEBACK=1 for details)", file=sys.stderr)
    sys.exit(2)


_LAZY_USER_ERRORS = (
    ("ipu.golden.evaluator", "GoldenError"),
    ("ipu.runtime.emulator", "EmulatorError"),
    ("ipu.runtime.package", "PackageError"),
    ("ipu.target", "TargetError"),
)
"""User errors of modules a tool may not import (the emulator pulls in numba): an exception of
such a class can only have been raised once its module is loaded, so it is looked up then."""


def _user_error_types() -> tuple[type[BaseException], ...]:
    """The user-error classes of the modules loaded so far (ToolError, diagnostics, ...)."""
    loaded = (getattr(sys.modules[m], name, None) for m, name in _LAZY_USER_ERRORS if m in sys.modules)
    return (ToolError, DiagnosticException, *(t for t in loaded if isinstance(t, type)))


def user_errors(fn):
    """Run a tool's body: user errors print `error: …` and exit 1, bugs print one line and exit 2."""
    import functools

    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001
            if isinstance(e, _user_error_types()):
                print(f"error: {e}", file=sys.stderr)
                sys.exit(1)
            internal_error(e)

    return run


@contextmanager
def progress(label: str) -> Iterator[None]:
    """A spinner on stderr naming the pipeline phase in progress, when stderr is a terminal (never
    in pipes, files or tests, so output stays plain and byte-stable)."""
    from ipu.transforms.log import PHASE_HOOKS

    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(f"{label}…") as status:

        def hook(name: str) -> None:
            status.update(f"{label}: {name.replace('_', ' ')}…")

        PHASE_HOOKS.append(hook)
        try:
            yield
        finally:
            PHASE_HOOKS.remove(hook)
