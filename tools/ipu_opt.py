"""`ipu-opt`: xDSL's opt driver over the ipu dialects and passes.

It parses builtin, func and the ipu dialects, and offers our passes plus the generic ones that
apply to our IR (`GENERIC_PASSES`); xDSL's printing and debugging flags (`--print-op-generic`,
`--print-between-passes`, `--time-passes`, `--verify-diagnostics`, `--split-input-file`…) are kept.
`--target NAME` is the machine: it sets the target of the passes that fix it (plan-ops,
plan-decide, plan-materialize, ipu-compile) and must agree with every later pass's module
target. xDSL's own `-t/--target` (the output format) is gone: our IR prints as MLIR text only,
so there is nothing to choose."""

from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any, ClassVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from ipu.atomic import atomic_path, check_outputs
from ipu.dialects import get_all_dialects
from ipu.dialects.ipu import target_attr_of
from ipu.passes import get_all_passes
from ipu.target import DEFAULT_TARGET, TargetError, available_targets, load_target
from ipu.tools.common import (
    ToolError,
    closed_output,
    collect_less,
    exit_fast,
    fail,
    internal_error,
    interruptible,
    setup_logging,
)
from ipu.xdsl_fixes import ParseErrorText, check_text

TARGETED = (
    "stripe-causal-attention",
    "plan-ops",
    "plan-decide",
    "plan-materialize",
    "screen-tiles",
    "schedule-exchange",
    "select-finalist",
    "place-storage",
    "lower-to-tasm",
    "ipu-compile",
)
"""Our passes with a `target` option (unset by default: the module's `#ipu.target`)."""

GENERIC_PASSES = ("canonicalize", "cse", "dce")
"""xDSL's passes that apply to our IR (op-local folding, common subexpressions, dead code)."""

_HIDDEN = ("--shrink", "--frontend", "--print-no-properties")
"""xDSL flags kept working but left out of `--help` (no use on our IR)."""


class IpuOptMain(xDSLOptMain):
    version_format: ClassVar[str] = "ipu-opt (xdsl {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="ipu-compiler optimizer: the ipu dialects and passes", args=args)

    def register_all_dialects(self) -> None:
        from xdsl.dialects.builtin import Builtin
        from xdsl.dialects.func import Func

        self.ctx.load_dialect(Builtin)
        self.ctx.load_dialect(Func)
        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        from xdsl.transforms import get_all_passes as xdsl_passes

        generic = xdsl_passes()
        for name in GENERIC_PASSES:
            self.register_pass(name, generic[name])
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        from xdsl.targets import get_all_targets

        self.available_targets = {"mlir": get_all_targets()["mlir"]}

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        add: Callable[..., Any] = arg_parser.add_argument

        def add_argument(*names: str, **kw: Any) -> Any:
            if "--target" in names:  # xDSL's output format: MLIR text is our only one
                arg_parser.set_defaults(target="mlir")
                return add(
                    "--target",
                    dest="machine",
                    metavar="NAME",
                    default=None,
                    help=f"machine to compile for ({', '.join(available_targets())}): the target of "
                    "stripe-causal-attention, plan-ops (or plan-decide, plan-materialize) and ipu-compile "
                    f"(default: the module's #ipu.target, else {DEFAULT_TARGET}); later passes "
                    "read it from the module and refuse a different one",
                )
            if "--passes" in names:
                kw["help"] = f"comma-separated pass pipeline; passes: {', '.join(self.available_passes)}"
            if any(n in _HIDDEN for n in names):
                kw["help"] = argparse.SUPPRESS
            return add(*names, **kw)

        arg_parser.add_argument = add_argument  # type: ignore[method-assign]
        try:
            super().register_all_arguments(arg_parser)
        finally:
            arg_parser.add_argument = add  # type: ignore[method-assign]
        add(
            "--log-level",
            default="warning",
            metavar="LEVEL",
            help="structured events on stderr: debug, info, warning (default), error",
        )

    def setup_pipeline(self) -> None:
        self.args.passes = with_target(self.args.passes, self.args.machine)
        super().setup_pipeline()

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        """xDSL's parse after the readers' pre-parse check (nesting depth, bounded time)."""
        data = chunk.read()
        try:
            text = data.decode()
        except UnicodeDecodeError as e:
            raise ToolError(f"{self.get_input_name()} is not UTF-8 text ({e.reason} at byte {e.start})") from None
        try:
            check_text(text, self.get_input_name())
        except ParseErrorText as e:
            raise ToolError(f"parse error: {e}") from None
        try:
            return super().parse_chunk(io.BytesIO(data), file_extension, start_offset)
        except (OverflowError, MemoryError) as e:
            raise ToolError(f"parse error in {self.get_input_name()}: {e}") from None
        except RecursionError:
            raise ToolError(f"parse error in {self.get_input_name()}: nesting too deep") from None

    def apply_passes(self, prog: ModuleOp) -> None:
        """`--target` must agree with the input's own target, whichever passes run."""
        attr = target_attr_of(prog)
        if self.args.machine and attr is not None and attr.target_name.data != self.args.machine:
            raise ToolError(
                f"--target {self.args.machine} contradicts the module's target {attr.target_name.data} "
                f'(ipu.target = #ipu.target<"{attr.target_name.data}">)'
            )
        super().apply_passes(prog)


def with_target(pipeline: str, target: str | None) -> str:
    """`pipeline` with `target` given to every targeted pass that names none; a pass naming a
    different one is an error (a pass that names none and no `--target`: the module's)."""
    if target is None:
        return pipeline
    load_target(target)
    parts = []
    for p in _split_pipeline(pipeline) if pipeline else []:
        name = p.split("{")[0].strip()
        if name in TARGETED:
            m = re.search(r"[{\s]target=\"?([\w-]+)", p)
            if m and m.group(1) != target:
                raise ToolError(f"--target {target} contradicts {name}{{target={m.group(1)}}}")
            if "{" not in p:
                p = f"{name}{{target={target}}}"
            elif not m:
                p = p.replace("{", f"{{target={target} ", 1)
        parts.append(p)
    return ",".join(parts)


def _split_pipeline(pipeline: str) -> list[str]:
    """The pipeline's pass specs: split at the commas outside `{…}`."""
    parts, depth, cur = [], 0, ""
    for ch in pipeline:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def main(argv: Sequence[str] | None = None) -> None:
    """The tool on `argv` (default: the command line); run as the command, it collects garbage
    less often and ends without the interpreter's teardown once it has succeeded (errors exit
    inside `_run`)."""
    if argv is None:
        collect_less()
    with interruptible(command=argv is None):
        _run(argv)
    if argv is None:
        exit_fast()


def _run(argv: Sequence[str] | None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if "-t" in args or any(a.startswith("-t") and not a.startswith("--") for a in args):
            raise ToolError("-t is not an option: --target NAME names the machine (ipu-opt prints MLIR only)")
        level = _peek(args, "--log-level") or "warning"
        setup_logging(level)
        opt = IpuOptMain(args=args)  # parses every spelling of -o (-oFILE, --output FILE, --output-file=FILE)
        out_path = opt.args.output_file
        if not out_path or out_path == "-":
            opt.args.output_file = None
            opt.run()
            return
        check_outputs({"-o": out_path}, [opt.args.input_file] if opt.args.input_file else [])
        # write to a temporary file next to the output and rename on success: nothing half-written
        with atomic_path(out_path, "-o") as tmp:
            opt.args.output_file = tmp
            opt.run()
    except TargetError as e:
        fail(str(e))
    except ToolError as e:
        fail(str(e))
    except ParseError as e:
        fail(f"parse error:\n{e}")
    except DiagnosticException as e:
        fail(str(e))
    except FileNotFoundError as e:
        fail(f"no such file: {e.filename}")
    except BrokenPipeError:
        closed_output()
    except OSError as e:
        fail(f"cannot read or write {e.filename2 or e.filename}: {e.strerror}")
    except ValueError as e:  # pass-pipeline syntax errors from xDSL, an output refused
        fail(str(e))
    except ArgSpecParseError as e:  # a malformed pass pipeline (a BaseException in xDSL)
        fail(str(e))
    except Exception as e:  # noqa: BLE001
        internal_error(e)


def _peek(argv: list[str], flag: str) -> str | None:
    """The value of `flag VALUE` / `flag=VALUE` in argv (the last one), else None."""
    value = None
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith(flag + "="):
            value = a.split("=", 1)[1]
    return value


__all__ = ["GENERIC_PASSES", "IpuOptMain", "main", "with_target"]

if __name__ == "__main__":
    main()
