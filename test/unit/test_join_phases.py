"""`join-phases` on real models: back-to-back independent phases run as one exchange (one sync
fewer each, priced exactly as the emulator counts it), and place-storage keeps every input of a
joined group live to the group's end, so no part writes over a buffer another part reads."""

from __future__ import annotations

import numpy as np
from conftest import ROOT
from xdsl.dialects import func

from ipu import api
from ipu.context import make_context
from ipu.dialects import exchange
from ipu.target import load_target
from ipu.transforms.exchange.join_phases import group_of, join_block
from ipu.transforms.exchange.refined_cycles import refined_cycles
from ipu.transforms.exchange.slots import slot
from ipu.transforms.pipeline import compile_passes

MODEL = ROOT / "test" / "models" / "fixtures" / "mobilenet_v2_small.dynamo23.onnx"


def _placed() -> list[exchange.PhaseOp]:
    module = api.load_model(str(MODEL), precision="f16").module
    ctx = make_context()
    for label, p in compile_passes("sim64", {"finalists": 1}):
        p.apply(ctx, module)
        if label == "place_storage":
            break
    return [op for op in module.walk() if isinstance(op, exchange.PhaseOp)]


def _extent(v) -> tuple[int, int, int, int]:
    """(first tile, end tile, first byte, end byte) of a placed buffer."""
    s, t = slot(v), v.type
    return t.first.data, t.first.data + t.count.data, s.address.data, s.address.data + s.size.data


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def test_joined_parts_never_write_what_an_earlier_part_reads_or_writes() -> None:
    phases = _placed()
    joined = [p for p in phases if p.joined is not None]
    assert joined, "the model has back-to-back independent phases"
    for ph in joined:
        group = group_of(ph)
        assert ph.zero_fill is None
        earlier = group[: group.index(ph)]
        assert all(ph.input is not e.result for e in earlier)  # reads nothing its group writes
        for e in earlier:
            for v in (e.input, e.result):
                assert not _overlap(_extent(ph.result), _extent(v)), (v.name_hint, ph.result.name_hint)


def test_a_joined_model_runs_and_is_priced_as_emulated() -> None:
    joined = api.compile(str(MODEL), "sim64", precision="f16", options={"finalists": 1})
    inputs = dict(np.load(str(MODEL).removesuffix(".onnx") + ".inputs.npz"))
    report = api.run(joined, inputs)
    assert report.passed
    assert report.total_cycles == joined.package.metrics["estimated_cycles"]


def test_select_finalist_prices_the_joins_join_phases_will_make() -> None:
    """Before `join-phases` runs, `refined_cycles(..., joins=True)` leaves out the sync of every
    phase it will join (the same rule): the figure equals the joined function's own price, and
    each join saves one sync against the unjoined figure."""
    module = api.load_model(str(MODEL), precision="f16").module
    ctx = make_context()
    for label, p in compile_passes("sim64", {"finalists": 1}):
        if label == "join_phases":
            break
        p.apply(ctx, module)
    t = load_target("sim64")
    f = next(o for o in module.ops if isinstance(o, func.FuncOp))
    plain, _ = refined_cycles(f, t)
    preview, _ = refined_cycles(f, t, joins=True)
    joins = join_block(f.body.block)
    assert joins > 0
    joined, _ = refined_cycles(f, t)
    assert refined_cycles(f, t, joins=True)[0] == joined  # joined phases are not counted twice
    assert plain - preview == joins * t.exchange["sync_cycles"]
    assert abs(preview - joined) <= joins * t.exchange["route_tail_cycles"]  # a group waits its longest route
