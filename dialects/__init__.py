"""The dialect ladder: graph, plan, tilemap, exchange, tasm, `table` (named-column tables), `ipu`
(attributes shared by every level) and `system` (a model cut into stages over chips), one dialect per
file; `stablehlo` and `chlo` are JAX input."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    def graph():
        from ipu.dialects.graph import Graph

        return Graph

    def plan():
        from ipu.dialects.plan import Plan

        return Plan

    def tilemap():
        from ipu.dialects.tilemap import Tilemap

        return Tilemap

    def exchange():
        from ipu.dialects.exchange import Exchange

        return Exchange

    def tasm():
        from ipu.dialects.tasm import Tasm

        return Tasm

    def table():
        from ipu.dialects.table import Table

        return Table

    def ipu():
        from ipu.dialects.ipu import Ipu

        return Ipu

    def system():
        from ipu.dialects.system import System

        return System

    def stablehlo():
        from ipu.dialects.stablehlo import StableHLO

        return StableHLO

    def chlo():
        from ipu.dialects.chlo import Chlo

        return Chlo

    return {
        "ipu": ipu,
        "table": table,
        "graph": graph,
        "plan": plan,
        "tilemap": tilemap,
        "exchange": exchange,
        "tasm": tasm,
        "system": system,  # a model cut into stages over the chips of a system (partition-stages)
        "stablehlo": stablehlo,  # JAX input (frontends/stablehlo_import.py)
        "chlo": chlo,
    }


def _guard_readers() -> None:
    """Every reader of MLIR text registers these dialects: install the parser guards first."""
    from ipu.xdsl_fixes import apply

    apply()


_guard_readers()
