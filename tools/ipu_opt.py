"""`ipu-opt`: xDSL's opt driver with the ipu dialects, passes and a `--target` option."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from ipu.atomic import atomic_path
from ipu.dialects import get_all_dialects
from ipu.target import DEFAULT_TARGET, TargetError, load_target
from ipu.tools.common import ToolError, fail, internal_error, setup_logging
from ipu.transforms import get_all_passes

TARGETED = (
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


class IpuOptMain(xDSLOptMain):
    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for name, factory in get_all_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)


def _take(argv: list[str], flag: str, default: str) -> tuple[str, list[str]]:
    """Remove `flag VALUE` / `flag=VALUE` from argv (xDSL's own `--target` means output format)."""
    value, out, skip = default, [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
        elif a == flag:
            if i + 1 >= len(argv):
                raise ToolError(f"{flag} needs a value")
            value, skip = argv[i + 1], True
        elif a.startswith(flag + "="):
            value = a.split("=", 1)[1]
        else:
            out.append(a)
    return value, out


def _with_target(argv: list[str]) -> list[str]:
    """Apply `--target` to every targeted pass in `-p` that has no explicit target option."""
    target, argv = _take(argv, "--target", DEFAULT_TARGET)
    load_target(target)
    out = []
    for i, a in enumerate(argv):
        prev = argv[i - 1] if i else ""
        if prev in ("-p", "--passes"):
            parts = []
            for p in a.split(","):
                name = p.split("{")[0]
                if name in TARGETED and "{" not in p:
                    p = f"{name}{{target={target}}}"
                elif name in TARGETED and not re.search(r"[{\s]target=", p):  # options, but no target
                    p = p.replace("{", f"{{target={target} ", 1)
                parts.append(p)
            a = ",".join(parts)
        out.append(a)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if any(a in ("-h", "--help") for a in args):
            print(
                "ipu-opt extra options: --target NAME (mk2, mk1, ipu21, sim16, sim64; default mk2), "
                "--log-level LEVEL (structured events on stderr)"
            )
        level, args = _take(args, "--log-level", "warning")
        out_path, args = _take(args, "-o", "")
        if not out_path:
            out_path, args = _take(args, "--output-file", "")
        args = _with_target(args)
        setup_logging(level)
        if not out_path:
            IpuOptMain(args=args).run()
            return
        # write to a temporary file next to the output and rename on success: nothing half-written
        with atomic_path(out_path) as tmp:
            IpuOptMain(args=[*args, "-o", tmp]).run()
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
    except OSError as e:  # e.g. -o naming a directory
        fail(f"cannot write {e.filename2 or e.filename}: {e.strerror}")
    except ValueError as e:  # pass-pipeline syntax errors from xDSL
        fail(str(e))
    except ArgSpecParseError as e:  # a malformed pass pipeline (a BaseException in xDSL)
        fail(str(e))
    except Exception as e:  # noqa: BLE001
        internal_error(e)


if __name__ == "__main__":
    main()
