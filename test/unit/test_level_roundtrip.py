"""Every example at every level of the pipeline prints, in custom and generic form, to text that
parses back and prints to the same text; the generic form parses back to the custom text too.

The small examples go through every level on their sim targets; the mk2 examples at the graph
level, and `mlp.mlir` (the one mk2 example that compiles in seconds) through every level.
`IPU_ROUNDTRIP_MK2=1` takes every mk2 example through every level (minutes)."""

from __future__ import annotations

import io
import os

import pytest
from conftest import EXAMPLES
from xdsl.dialects import builtin
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from ipu.context import make_context
from ipu.transforms.exchange.place_storage import PlaceStoragePass
from ipu.transforms.exchange.schedule_exchange import ScheduleExchangePass
from ipu.transforms.plan.plan_ops import PlanOpsPass
from ipu.transforms.tasm.lower_to_tasm import LowerToTasmPass
from ipu.transforms.tilemap.map_tiles import MapTilesPass
from ipu.transforms.tilemap.screen_tiles import ScreenTilesPass
from ipu.transforms.tilemap.select_finalist import SelectFinalistPass

SMALL = {
    "mlp_small": "sim16",
    "attention_small": "sim64",
    "transformer_block_small": "sim64",
    "transformer_stack_small": "sim64",
    "embedding_small": "sim16",
}
MK2 = ["mlp", "attention_gqa", "attention_long", "transformer_block", "transformer_stack", "gpt2_embedding"]
MK2_EVERY_LEVEL = MK2 if os.environ.get("IPU_ROUNDTRIP_MK2") else ["mlp"]

LEVELS = [
    "graph",
    "plan-ops",
    "map-tiles",
    "screen-tiles",
    "select-finalist",
    "schedule-exchange",
    "place-storage",
    "lower-to-tasm",
]


def _passes(target: str) -> dict[str, ModulePass]:
    """The pass that produces each level below the graph (plan-ops alone names the target)."""
    return {
        "plan-ops": PlanOpsPass(target=target),
        "map-tiles": MapTilesPass(),
        "screen-tiles": ScreenTilesPass(),
        "select-finalist": SelectFinalistPass(),
        "schedule-exchange": ScheduleExchangePass(),
        "place-storage": PlaceStoragePass(),
        "lower-to-tasm": LowerToTasmPass(),
    }


def _print(module: builtin.ModuleOp, generic: bool) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def _parse(text: str, name: str) -> builtin.ModuleOp:
    module = Parser(make_context(), text, name).parse_module()
    module.verify()
    return module


_LEVEL_TEXTS: dict[tuple[str, str], dict[str, str]] = {}


def level_texts(example: str, target: str) -> dict[str, str]:
    """The custom-form text of `example` at every level, each level produced from the parsed text
    of the previous one (as `ipu-opt PREV -p PASS` does); computed once per example."""
    key = (example, target)
    if key not in _LEVEL_TEXTS:
        ctx = make_context()
        text = (EXAMPLES / f"{example}.mlir").read_text()
        module = _parse(text, example)
        texts = {"graph": _print(module, False)}
        for level, p in _passes(target).items():
            module = _parse(texts[LEVELS[LEVELS.index(level) - 1]], f"{example}@{level}")
            p.apply(ctx, module)
            module.verify()
            texts[level] = _print(module, False)
        _LEVEL_TEXTS[key] = texts
    return _LEVEL_TEXTS[key]


CASES = [(ex, t, lvl) for ex, t in SMALL.items() for lvl in LEVELS]
CASES += [(ex, "mk2", "graph") for ex in MK2 if ex not in MK2_EVERY_LEVEL]
CASES += [(ex, "mk2", lvl) for ex in MK2_EVERY_LEVEL for lvl in LEVELS]


@pytest.mark.parametrize("generic", [False, True], ids=["custom", "generic"])
@pytest.mark.parametrize(("example", "target", "level"), CASES, ids=[f"{e}-{t}-{lv}" for e, t, lv in CASES])
def test_level_prints_parses_and_prints_the_same(example: str, target: str, level: str, generic: bool) -> None:
    if level == "graph":
        custom = _print(_parse((EXAMPLES / f"{example}.mlir").read_text(), example), False)
    else:
        custom = level_texts(example, target)[level]
    module = _parse(custom, f"{example}@{level}")
    text = _print(module, generic)
    again = _parse(text, f"{example}@{level} ({'generic' if generic else 'custom'})")
    assert _print(again, generic) == text
    assert _print(again, False) == custom  # the generic form carries everything the custom one says
