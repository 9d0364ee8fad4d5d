"""Shared tool plumbing: contexts, parsing, error reporting without tracebacks, logging."""

from __future__ import annotations

import gc
import logging
import os
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.utils.exceptions import DiagnosticException

from ipu.context import make_context

__all__ = [
    "ToolError",
    "collect_less",
    "exit_fast",
    "flush_output",
    "interruptible",
    "make_context",
    "parse_file",
    "setup_logging",
    "user_errors",
]


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


def exit_fast(code: int = 0) -> None:
    """End a tool without the interpreter's teardown, which deallocates the compiler's objects
    one by one (about 0.8 s after an mk2 compile, 0.3 s after packaging it): with `code` 0 once
    it has succeeded, or 130 once interrupted (a teardown that long is a window for another
    interruption to end the process by signal instead of exit code). Its output files are closed
    (or removed) by then; standard output, standard error and the log handlers are flushed here.
    Under coverage (whose exit hook saves its data), or when a flush fails, it returns and the
    interpreter exits as usual; a closed standard output ends it quietly (`closed_output`)."""
    if "coverage" in sys.modules:
        return
    logging.shutdown()
    if not flush_output():
        return
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def closed_output() -> None:
    """Standard output's reader has gone (`ipu-run … | head`): stop quietly, with the status of a
    pipeline's writer ended by SIGPIPE (141), rather than report the failed write as an error.
    Standard output goes to the null device first, so the interpreter's last flush cannot fail."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(141)


def flush_output() -> bool:
    """Flush standard output, ending quietly if its reader has gone (`closed_output`); False when
    it cannot be flushed otherwise (closed, or another error)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        closed_output()
    except (OSError, ValueError):
        return False
    return True


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def internal_error(e: BaseException) -> None:
    """A compiler bug: one line naming it and where it happened (the pass and the op it was
    working on, when the traceback shows them; set IPU_TRACEBACK=1 for the traceback), exit 2."""
    if os.environ.get("IPU_TRACEBACK"):
        raise e
    text = str(e).strip().splitlines()
    what = f"{type(e).__name__}: {text[0][:300]}" if text else type(e).__name__
    where = _where(e)
    print(f"internal error{where}: {what} (set IPU_TRACEBACK=1 for details)", file=sys.stderr)
    sys.exit(2)


def _where(e: BaseException) -> str:
    """` in pass P on 'op'` from the innermost pass instance in `e`'s traceback and the innermost
    operation a frame of ours holds below it (`op` by preference; '' when no pass shows)."""
    from xdsl.ir import Operation
    from xdsl.passes import ModulePass

    ours = str(Path(__file__).resolve().parent.parent)
    pass_name, op_text = None, None
    tb = e.__traceback__
    while tb is not None:  # outermost frame first: the op is the innermost one inside the pass
        frame = tb.tb_frame
        local = frame.f_locals
        if isinstance(local.get("self"), ModulePass):
            pass_name, op_text = local["self"].name, None
        elif pass_name is not None and frame.f_code.co_filename.startswith(ours):
            ops = [local.get("op"), *local.values()]
            op = next((v for v in ops if isinstance(v, Operation)), None)
            if op is not None:
                op_text = _describe_op(op)
        tb = tb.tb_next
    parts = ([f" in pass {pass_name}"] if pass_name else []) + ([f" on {op_text}"] if op_text else [])
    return "".join(parts)


def _describe_op(op) -> str:
    """An op as a reader finds it: its name, its first result's name and its ONNX node."""
    res = f"%{op.results[0].name_hint} = " if op.results and op.results[0].name_hint else ""
    node = op.attributes.get("onnx.node")
    at = f" (ONNX node {node.data})" if node is not None and hasattr(node, "data") else ""
    return f"'{res}{op.name}'{at}"


_LAZY_USER_ERRORS = (
    ("ipu.golden.evaluator", "GoldenError"),
    ("ipu.runtime.emulator", "EmulatorError"),
    ("ipu.abi.package", "PackageError"),
    ("ipu.target", "TargetError"),
)
"""User errors of modules a tool may not import (the emulator pulls in numba): an exception of
such a class can only have been raised once its module is loaded, so it is looked up then."""


def _user_error_types() -> tuple[type[BaseException], ...]:
    """The user-error classes of the modules loaded so far (ToolError, diagnostics, ...)."""
    loaded = (getattr(sys.modules[m], name, None) for m, name in _LAZY_USER_ERRORS if m in sys.modules)
    from ipu.atomic import OutputError

    return (ToolError, OutputError, DiagnosticException, *(t for t in loaded if isinstance(t, type)))


@contextmanager
def interruptible(command: bool = False) -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does, so a killed tool unwinds: its temporary
    outputs are removed and it says so in one line (exit 130) instead of a traceback. The
    previous handler comes back afterwards (a tool called in-process leaves its caller as it was).
    `command` (the tool runs as its own process): exit there without the teardown (`exit_fast`)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum, frame):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, on_term)
    before_int = signal.getsignal(signal.SIGINT)
    try:
        yield
    except KeyboardInterrupt:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second signal now changes nothing
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("error: interrupted", file=sys.stderr)
        if command:
            exit_fast(130)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, before)
        if before_int is not None:  # None: set outside Python, cannot be put back
            signal.signal(signal.SIGINT, before_int)


def user_errors(fn):
    """Run a tool's body: user errors print `error: …` and exit 1, bugs print one line and exit 2,
    an interruption (Ctrl-C, SIGTERM) exits 130 with its temporary files removed, a closed standard
    output ends it quietly (141, `closed_output`)."""
    import functools

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with interruptible():
            try:
                return fn(*args, **kwargs)
            except BrokenPipeError:
                closed_output()
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
    from ipu.log import PHASE_HOOKS

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


def check_npz(path: str, want: dict[str, tuple[int, ...]]) -> None:
    """Refuse an inputs file from its array headers alone, before any data is read or allocated:
    not an .npz, missing or unexpected names, object (pickled) or non-numeric arrays, wrong shapes."""
    found: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    headers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if not info.filename.endswith(".npy"):
                    raise ValueError(f"member '{info.filename}' is not a .npy array")
                with z.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    if version not in headers:
                        raise ValueError(f"member '{info.filename}': unsupported .npy version {version}")
                    try:
                        shape, _, dtype = headers[version](f)
                    except (ValueError, EOFError, zipfile.BadZipFile):
                        raise
                    except Exception as e:  # noqa: BLE001 -- a damaged header: NumPy's parser raises many kinds
                        raise ValueError(
                            f"member '{info.filename}': unreadable .npy header ({type(e).__name__})"
                        ) from None
                found[info.filename[: -len(".npy")]] = (tuple(shape), dtype)
    except (OSError, ValueError, EOFError, RuntimeError, NotImplementedError, zipfile.BadZipFile) as e:
        raise ToolError(f"cannot read inputs {path}: {e}") from None  # encrypted, unknown compression too
    missing, extra = sorted(set(want) - set(found)), sorted(set(found) - set(want))
    if missing or extra:
        raise ToolError(f"inputs: missing {missing}, unexpected {extra}")
    for name, (shape, dtype) in found.items():
        if dtype.hasobject:
            raise ToolError(f"cannot read inputs {path}: '{name}' holds Python objects (pickles are never loaded)")
        if dtype.kind not in "biuf":
            raise ToolError(f"input '{name}': dtype {dtype} is not a real number type")
        if shape != want[name]:
            raise ToolError(f"input '{name}': shape {shape}, expected {want[name]}")
