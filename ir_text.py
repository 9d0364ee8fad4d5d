"""IR text in: a verified module from text or a file, and the error that names what is wrong.

The API re-exports all of this; it lives apart so that a tool that only parses and packages
(`ipu-translate --to-ipuexe`) does not import the compiler, the emulator and the reference."""

from __future__ import annotations

import re
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError


class ApiError(ValueError):
    """A user error the API itself detects: a model that does not parse or verify, a missing or
    non-text file, an unknown or invalid pipeline option. Passes that cannot compile a model (e.g.
    it does not fit) raise their `DiagnosticException`; bad run inputs raise `EmulatorError`."""


def parse_text(ctx: Context, text: str, name: str) -> builtin.ModuleOp:
    """A verified module from IR text (`name` is what messages call it). Every reader of MLIR
    text comes here: the text is first checked for nesting deeper than the parser can take
    (`xdsl_fixes.check_text`), and whatever the parser or a verifier refuses (including sizes it
    cannot allocate) is an `ApiError` naming the file."""
    from ipu.xdsl_fixes import ParseErrorText, apply, check_text

    apply()
    try:
        check_text(text, name)
        m = Parser(ctx, text, name).parse_module()
        m.verify()
    except ParseErrorText as e:
        raise ApiError(f"parse error: {e}") from None
    except ParseError as e:
        raise ApiError(f"parse error in {name}:\n{e}") from None
    except DiagnosticException as e:
        raise ApiError(f"verification failed in {name}:\n{e}") from None
    except (ValueError, OverflowError, MemoryError) as e:  # values xDSL's builders refuse or cannot hold
        raise ApiError(f"parse error in {name}: {e}") from None
    except RecursionError:
        raise ApiError(f"parse error in {name}: nesting too deep") from None
    return m


def parse_path(ctx: Context, path: Path) -> builtin.ModuleOp:
    """A verified module from an IR file."""
    try:
        text = path.read_text()
    except UnicodeDecodeError as e:
        raise ApiError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    return parse_text(ctx, text, str(path))


def is_tasm_level(module: builtin.ModuleOp) -> bool:
    """Whether `module` is at the tasm level (its body holds tasm programs and tables)."""
    return any(op.dialect_name() == "tasm" for op in module.body.block.ops)


def looks_like_stablehlo(text: str) -> bool:
    """Whether IR text is a StableHLO program (any `stablehlo.` or `chlo.` op). Here, not in the
    StableHLO frontend, so that parsing our own IR does not import the ONNX frontends."""
    pretty = r"(^|=)[ \t]*(stablehlo|chlo)\.[a-z_]+[ \t(]"  # `%0 = stablehlo.add %a, …`, `stablehlo.return %x`
    generic = r'"(stablehlo|chlo)\.[a-z_]+"\('  # `"stablehlo.add"(%a, %b)`
    return re.search(f"{pretty}|{generic}", text, re.MULTILINE) is not None
