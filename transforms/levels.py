"""Which level of the ladder a module is at, and the check every pass makes before it works: a
pass given IR of a level it does not work on says so, naming both, instead of doing nothing.

A function's level is read from its ops' dialects (plan, tilemap; StableHLO) and the marks the
passes leave: an `exchange.phase` op (schedule-exchange), `exchange.memory` (place-storage). A
module holding `tasm` ops is at the last level. A module's level is its most lowered function's;
a module with no function has none (every pass accepts it: there is nothing to do).
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects import builtin, func
from xdsl.utils.exceptions import DiagnosticException

LEVELS = ("stablehlo", "graph", "stages", "plan", "tilemap", "exchange", "placed", "tasm")
"""The ladder's levels in lowering order (`exchange`: phases scheduled; `placed`: storage too)."""

DESCRIBE = {
    "stablehlo": "StableHLO (JAX's input)",
    "graph": "graph-level",
    "stages": "partitioned graph-level (a system.pipeline over stage functions, one per chip)",
    "plan": "plan-level (plan-ops' finalists)",
    "tilemap": "tilemap-level (mapped by map-tiles)",
    "exchange": "exchange-level (phases scheduled by schedule-exchange)",
    "placed": "exchange-level with storage placed (place-storage)",
    "tasm": "tasm-level (lowered by lower-to-tasm)",
}


def function_level(f: func.FuncOp) -> str:
    """The level of one function, from the marks the passes leave on it and its ops' dialects."""
    if "exchange.memory" in f.attributes:
        return "placed"
    names = {op.name for op in f.body.walk()}
    dialects = {n.split(".", 1)[0] for n in names}
    if "tilemap.mapping" in f.attributes or "tilemap" in dialects:
        return "exchange" if "exchange.phase" in names else "tilemap"
    if "plan.metrics" in f.attributes or "plan" in dialects:
        return "plan"
    if dialects & {"stablehlo", "chlo"}:
        return "stablehlo"
    return "graph"


def module_level(module: builtin.ModuleOp) -> str | None:
    """The level of `module`: its most lowered function's (None: no function, nothing lowered)."""
    ops = list(module.body.block.ops)
    if any(op.dialect_name() == "tasm" for op in ops):
        return "tasm"
    if any(op.name == "system.pipeline" for op in ops):
        return "stages"
    for f in ops:
        if isinstance(f, func.FuncOp) and not f.body.blocks:
            raise DiagnosticException(
                f"@{f.sym_name.data} is a declaration without a body: the passes work on functions with one"
            )
    levels = [function_level(f) for f in ops if isinstance(f, func.FuncOp)]
    return max(levels, key=LEVELS.index) if levels else None


def expect_level(module: builtin.ModuleOp, pass_name: str, accepted: Iterable[str]) -> None:
    """Refuse `module` unless its level is one `pass_name` works on (an empty module passes)."""
    level = module_level(module)
    ok = tuple(accepted)
    if level is None or level in ok:
        return
    want = " or ".join(DESCRIBE[a] for a in ok)
    if level == "stages":
        raise DiagnosticException(
            f"{pass_name}: the module is partitioned into stages (system.pipeline): compile it for its system "
            "(ipu-run MODULE, or ipu.systems.compile_system)"
        )
    raise DiagnosticException(f"{pass_name}: works on {want} IR; this module is {DESCRIBE[level]} IR")


__all__ = ["DESCRIBE", "LEVELS", "expect_level", "function_level", "module_level"]
