"""Systems of chips: the system data, the partitioner's cut, the system package, the pipeline's
timing, and zoo models pipelined over 2 and 4 chips on both backends, against onnxruntime."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import DiagnosticException

from ipu import systems
from ipu.abi.package import PackageError
from ipu.abi.pod import Route, pod_bytes, read_pod, validate_pod, write_pod
from ipu.runtime.system import run_pod
from ipu.target import TargetError
from ipu.target.system import LinkTransfer, available_systems, load_system, with_overrides
from ipu.transforms.system.cuts import best_cut

FIXTURES = Path(__file__).resolve().parents[1] / "models" / "fixtures"
LIT = Path(__file__).resolve().parents[1] / "lit" / "system"


def test_every_system_file_loads_and_cites():
    names = available_systems()
    assert {"pod4", "pod8", "pod16", "sim16x2", "sim16x4", "sim64x2", "sim64x4"} <= set(names)
    for n in names:
        s = load_system(n)
        assert s.name == n and s.chips >= 2
        text = (Path(__file__).resolve().parents[2] / "target" / "systems" / f"{n}.toml").read_text()
        for key in ("link_bytes_per_cycle", "link_latency_cycles", "external_sync_cycles", "lanes", "topology"):
            line = next(ln for ln in text.splitlines() if ln.startswith(key))
            assert "# SY" in line, f"{n}: {key} cites no source"


def test_unknown_system_names_the_known_ones():
    with pytest.raises(TargetError, match=r"unknown system 'pod3' \(known: pod16, pod2, pod4"):
        load_system("pod3")


def test_ladder_links_chain_and_routes():
    s = load_system("pod8")
    # rungs (0,1) (2,3) (4,5) (6,7); rails 0-2-4-6 and 1-3-5-7
    assert set(s.links) == {(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (2, 4), (4, 6), (1, 3), (3, 5), (5, 7)}
    assert s.chain == (0, 2, 4, 6, 7, 5, 3, 1)
    for a, b in zip(s.chain, s.chain[1:], strict=False):
        assert len(s.route(a, b)) == 1  # pipeline neighbours are link neighbours
    assert len(s.route(0, 7)) == 4
    assert load_system("sim64x2").chain == (0, 1)


def test_link_phase_cycles_by_hand():
    s = load_system("sim64x4")  # 2 lanes x 12 B/cycle, latency 1000, sync 1500, tile port 4 B/cycle
    # 8,192 bytes over one hop: 1500 + 1000 + ceil(8192 / 24) = 2842
    assert s.link_phase_cycles([LinkTransfer(0, 2, 8192, 128)]) == 2842
    # the busiest tile holds 4,096 bytes: its port (1,024 cycles) is slower than the link (342)
    assert s.link_phase_cycles([LinkTransfer(0, 2, 8192, 4096)]) == 1500 + 1000 + 1024
    # two transfers sharing link (0,2) add up; the longer route's two hops set the latency
    two = [LinkTransfer(0, 2, 8192, 0), LinkTransfer(1, 2, 8192, 0)]  # 1 -> 2 routes 1-0-2 (the lower neighbour first)
    assert s.link_phase_cycles(two) == 1500 + 2 * 1000 + math.ceil(16384 / 24)
    assert s.link_phase_cycles([]) == 0
    fast = with_overrides(s, link_bytes_per_cycle=48)
    assert fast.link_phase_cycles([LinkTransfer(0, 2, 8192, 0)]) == 1500 + 1000 + math.ceil(8192 / 96)


def test_all_reduce_ring_and_lower_bound_by_hand():
    s = load_system("sim64x4")
    # two rings over 4 chips (pipeline order 0, 2, 3, 1: each a link from the next), one each
    # way: 6 steps, each moving half a quarter (512 bytes) on every link direction of the ring:
    # 1500 + 1000 + ceil(512 / 24) = 2522 (one ring: 2543, the whole quarter one way)
    assert s.all_reduce_schedules(4096, [0, 1, 2, 3])["ring"] == 6 * 2522
    # direct: 2 phases; chip 0 sends its quarters to 1 and 2 (neighbours) and, over two hops, to
    # 3 (half by 0-1-3, half by 0-2-3): each link direction carries one neighbour's quarter
    # (1,024) and two halves of the far ones (1,024): 1500 + 2 x 1000 + ceil(2048 / 24) = 3586
    assert s.all_reduce_schedules(4096, [0, 1, 2, 3])["direct"] == 2 * 3586
    assert s.all_reduce_cycles(4096, [0, 1, 2, 3]) == 2 * 3586  # the cheaper
    # a tile holding 2,048 bytes sends 512 a ring step, 256 each way through its one port: 128
    # cycles, slower than the link (22); directly, three quarters of it a phase (384 cycles)
    assert s.all_reduce_schedules(4096, [0, 1, 2, 3], tile_bytes=2048) == {
        "ring": 6 * (2500 + 128),
        "direct": 2 * (3500 + 384),
    }
    # a large value is bandwidth-bound: the ring's 6 phases move less over the far pairs' links
    big = s.all_reduce_schedules(1 << 20, [0, 1, 2, 3])
    assert big["ring"] == 6 * (2500 + math.ceil((1 << 18) / 2 / 24)) < big["direct"]
    assert s.all_reduce_cycles(1 << 20, [0, 1, 2, 3]) == big["ring"]
    # any all-reduce: two synced rounds, and 2 x 3/4 of the value into each chip over its 2 links
    assert s.all_reduce_lower_bound(4096, [0, 1, 2, 3]) == 2 * 2500 + math.ceil(2 * 3 * 4096 / 4 / (2 * 24))
    # two chips: the ring is the bound (each sends half its value each way, twice)
    two = load_system("sim64x2")
    assert two.all_reduce_cycles(8192, [0, 1]) == two.all_reduce_lower_bound(8192, [0, 1]) == 2 * (2500 + 171)
    assert two.all_reduce_schedules(8192, [0, 1]) == {"ring": 2 * 2671, "direct": 2 * 2671}
    assert two.all_reduce_schedule(8192, [0, 1]) == ("ring", 2 * 2671)  # a tie names the ring
    assert s.all_reduce_schedule(4096, [0, 1, 2, 3]) == ("direct", 2 * 3586)
    assert s.all_reduce_cycles(4096, [0]) == 0 and s.all_reduce_schedules(4096, [0]) == {}


def test_shortest_routes_are_every_path_of_fewest_hops():
    s = load_system("sim64x4")  # ladder: rungs 0-1 and 2-3, rails 0-2 and 1-3
    assert s.shortest_routes(0, 3) == [[(0, 1), (1, 3)], [(0, 2), (2, 3)]]
    assert s.shortest_routes(0, 2) == [[(0, 2)]] and s.shortest_routes(1, 1) == [[]]
    # spread over both routes, the far transfer loads each of its four link directions half as much
    assert s.link_phase_cycles([LinkTransfer(0, 3, 4800, 0)], spread=True) == 1500 + 2 * 1000 + 100
    assert s.link_phase_cycles([LinkTransfer(0, 3, 4800, 0)]) == 1500 + 2 * 1000 + 200


def test_best_cut_minimizes_the_slowest_stage():
    costs = [10, 40, 40, 40, 40, 10]
    cut = best_cut(costs, [0] * 6, [0] * 6, 2, 10**9, [None] * 6)
    assert cut is not None and max(cut.cycles) == 90 and cut.stage_of == [0, 0, 0, 1, 1, 1]
    # a link into a stage counts against it: the even cut (after unit 2) pays 50, the one after unit 3 only 5
    links = [0, 0, 10, 50, 5, 0]
    cut = best_cut(costs, [0] * 6, links, 2, 10**9, [None] * 6)
    assert cut.stage_of == [0, 0, 0, 0, 1, 1] and cut.cycles == [130, 55]
    # weights: at most 2 units' worth a stage forces three stages of two
    cut = best_cut(costs, [1] * 6, [0] * 6, 3, 2, [None] * 6)
    assert cut.stage_of == [0, 0, 1, 1, 2, 2]
    assert best_cut(costs, [1] * 6, [0] * 6, 2, 2, [None] * 6) is None
    # a pin puts unit 1 on stage 1
    cut = best_cut(costs, [0] * 6, [0] * 6, 2, 10**9, [None, 1, None, None, None, None])
    assert cut.stage_of == [0, 1, 1, 1, 1, 1]


@pytest.fixture(scope="module")
def gpt2_on_two():
    return systems.compile_system(FIXTURES / "gpt2_lm.classic17.onnx", "sim64x2", microbatches=3)


def test_gpt2_pipelined_over_two_chips_matches_onnxruntime(gpt2_on_two):
    c = gpt2_on_two
    assert [s.chip for s in c.pod.stages] == [0, 1]
    report = systems.run_system(c)
    # the value crossing is the residual stream after one of the two rolled layers: no value of the
    # unpartitioned model, so no boundary check; each stage's own checks and the outputs cover it
    assert {ch.kind for ch in report.checks} == {"checkpoint", "output", "oracle"}
    assert report.passed, [ch.name for ch in report.checks if not ch.result.passed]
    assert sum(ch.kind == "oracle" for ch in report.checks) == 3  # every micro-batch's logits
    r = report.result
    # the timeline by hand: m + p - 1 steps, each the slowest busy stage plus its link phase
    b0, b1 = (s.busy_per_microbatch for s in r.stages)
    link = r.link_cycles[0]
    assert r.link_cycles == [link, link, link, 0]
    assert r.total_cycles == (b0 + link) + 2 * (max(b0, b1) + link) + b1
    assert r.stages[0].busy == 3 * b0 and r.stages[0].idle == r.total_cycles - 3 * b0
    assert r.ideal_bubble == pytest.approx(1 / 4)
    assert r.bubble == pytest.approx(1 - 3 * (b0 + b1) / (2 * r.total_cycles))


def test_backends_give_bit_identical_outputs(gpt2_on_two):
    pytest.importorskip("ray")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 1024 * 1024)
    try:
        a = systems.run_system(gpt2_on_two, backend="process", checks=False).result
        b = systems.run_system(gpt2_on_two, backend="ray").result
    finally:
        ray.shutdown()
    for x, y in zip(a.outputs, b.outputs, strict=True):
        for k in x:
            assert np.array_equal(x[k], y[k])
    assert a.total_cycles == b.total_cycles


@pytest.mark.parametrize(
    ("fixture", "system", "layers"),
    [
        ("llama.dynamo20", "sim64x2", None),
        ("llama.dynamo20", "sim64x4", None),
        ("gpt2_lm.dynamo20", "sim64x4", "0,1,1,0"),
    ],
)
def test_zoo_models_pipelined_match_onnxruntime(fixture, system, layers):
    c = systems.compile_system(FIXTURES / f"{fixture}.onnx", system, microbatches=2, layers=layers)
    assert len(c.pod.stages) == load_system(system).chips
    report = systems.run_system(c)
    assert report.passed, [ch.name for ch in report.checks if not ch.result.passed]
    kinds = {ch.kind for ch in report.checks}
    assert {"checkpoint", "output", "oracle"} <= kinds
    if layers:  # the embedding's sum crosses from stage 0: a value of the unpartitioned model, checked by name
        assert "boundary" in kinds


def test_pod_file_round_trip_and_damage(gpt2_on_two, tmp_path):
    path = tmp_path / "m.ipupod"
    write_pod(gpt2_on_two.pod, path)
    back = read_pod(path)
    assert pod_bytes(back) == pod_bytes(gpt2_on_two.pod)
    x = systems.run_system(gpt2_on_two, checks=False).inputs
    r1 = run_pod(back, x)
    r2 = run_pod(gpt2_on_two.pod, x)
    assert all(np.array_equal(a["out"], b["out"]) for a, b in zip(r1.outputs, r2.outputs, strict=True))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    bad = tmp_path / "bad.ipupod"
    bad.write_bytes(bytes(data))
    with pytest.raises(PackageError, match="SHA-256 does not match"):
        read_pod(bad)
    (tmp_path / "short.ipupod").write_bytes(bytes(data[:20]))
    with pytest.raises(PackageError, match="not a system package"):
        read_pod(tmp_path / "short.ipupod")


def test_validate_pod_names_what_disagrees(gpt2_on_two):
    import copy

    pod = copy.copy(gpt2_on_two.pod)
    t = pod.transfers[0]
    pod.transfers = [type(t)(t.src, Route(1, "nope"), t.src_chip, t.dst_chip, t.nbytes)]
    with pytest.raises(PackageError, match="stage 1 has no input 'nope'"):
        validate_pod(pod)
    pod.transfers = []
    with pytest.raises(PackageError, match="input '.*' is fed by nothing"):
        validate_pod(pod)
    pod = copy.copy(gpt2_on_two.pod)
    pod.system = "sim16x2"
    with pytest.raises(PackageError, match="package is for sim64, the system's chips are sim16"):
        validate_pod(pod)


def test_weights_that_do_not_fit_are_refused_by_name(monkeypatch):
    from ipu.transforms.system import partition_stages as ps

    monkeypatch.setattr(ps, "WEIGHT_SHARE", 1e-6)  # a chip that holds almost no weights
    with pytest.raises(
        DiagnosticException, match=r"@main does not fit sim16x2: no split into 2 stages keeps every stage"
    ):
        systems.compile_system(LIT / "partition-stages.mlir", "sim16x2")


@pytest.mark.parametrize(
    ("fixture", "system", "reduces"),
    [
        ("gpt2_block.classic17", "sim64x2", 2),  # attention heads and FFN columns: two all-reduces
        ("gpt2_block.dynamo20", "sim64x4", 2),
        ("llama_layer.dynamo20", "sim64x2", 2),  # rotary's tables and rotate-half split by heads too
        ("llama_layer.classic17", "sim64x4", 1),  # 2 KV heads do not split in 4: the FFN alone splits
    ],
)
def test_tensor_parallel_layers_match_onnxruntime(fixture, system, reduces):
    c = systems.compile_system(FIXTURES / f"{fixture}.onnx", system, microbatches=2, parallel="tensor")
    n = load_system(system).chips
    assert len(c.pod.collectives) == reduces
    assert all(len(col.chips) == n for col in c.pod.collectives)
    report = systems.run_system(c)
    assert report.passed, [ch.name for ch in report.checks if not ch.result.passed]
    assert any(ch.kind == "oracle" for ch in report.checks)
    r = report.result
    assert not r.pipelined and r.ideal_bubble is None
    for cycles, bound, schedule in r.collectives:
        assert cycles >= bound > 0
        # two chips: the schedules tie and the ring is named; four: these small values are sync-bound
        assert schedule == ("ring" if n == 2 else "direct")
    # the timeline by hand: waves of one segment a chip, then the all-reduce, per micro-batch
    waves = [
        [s for s in r.stages if c.pod.stages[s.stage].function.startswith(f"main_seg{k}_")] for k in range(reduces + 1)
    ]
    per = sum(max(s.busy_per_microbatch for s in w) for w in waves) + sum(cycles for cycles, _, _ in r.collectives)
    assert r.total_cycles == 2 * per


def test_tensor_parallel_backends_bit_identical_and_pod_round_trip(tmp_path):
    pytest.importorskip("ray")
    import ray

    c = systems.compile_system(FIXTURES / "gpt2_block.classic17.onnx", "sim64x2", microbatches=2, parallel="tensor")
    write_pod(c.pod, tmp_path / "tp.ipupod")
    back = read_pod(tmp_path / "tp.ipupod")
    assert back.collectives == c.pod.collectives
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 1024 * 1024)
    try:
        a = systems.run_system(c, checks=False)
        b = run_pod(back, a.inputs, backend="ray")
    finally:
        ray.shutdown()
    for x, y in zip(a.result.outputs, b.outputs, strict=True):
        assert np.array_equal(x["out"], y["out"])


def test_tensor_groups_pipelined_match_onnxruntime_on_both_backends():
    """Tensor x pipeline parallelism: GPT-2's two layers split over pairs of chips, the pairs
    pipelined; the sums crossing pairs move chip to chip, and the timeline is the pairs'."""
    pytest.importorskip("ray")
    import ray

    from ipu.runtime.system import link_transfers, pipeline_groups, pipeline_timeline

    c = systems.compile_system(
        FIXTURES / "gpt2_lm.dynamo20.onnx", "sim64x4", microbatches=3, parallel="tensor", tensor_group=2
    )
    pod = c.pod
    groups = pipeline_groups(pod)
    assert [[pod.stages[s].chip for s in g] for g in groups] == [[0, 1, 0, 1], [2, 3, 2, 3, 2]]
    assert [col.chips for col in pod.collectives] == [(0, 1), (0, 1), (2, 3), (2, 3)]
    crossing = {(t.src_chip, t.dst_chip) for t in pod.transfers if t.src_chip != t.dst_chip}
    assert crossing == {(0, 2), (1, 3)}  # each chip to its counterpart on the next pair
    # an all-reduce's sum crosses from the member's partial, where the all-reduce leaves it
    partials = {(r.stage, r.binding) for col in pod.collectives for r in col.inputs}
    assert any((t.src.stage, t.src.binding) in partials for t in pod.transfers if t.src_chip != t.dst_chip)
    report = systems.run_system(c)
    assert report.passed, [ch.name for ch in report.checks if not ch.result.passed]
    assert any(ch.kind == "oracle" for ch in report.checks)
    r = report.result
    assert r.groups == 2 and r.ideal_bubble == pytest.approx(1 / 4)
    # the timeline by hand: a pair's micro-batch is its waves and all-reduces; the pairs pipelined
    busy = [s.busy_per_microbatch for s in r.stages]
    reduce = [cycles for cycles, _, _ in r.collectives]
    per = [
        max(busy[0], busy[1]) + reduce[0] + max(busy[2], busy[3]) + reduce[1],
        max(busy[4], busy[5]) + reduce[2] + max(busy[6], busy[7]) + reduce[3] + busy[8],
    ]
    across = {0: [tr for trs in link_transfers(pod).values() for tr in trs]}
    assert r.total_cycles == pipeline_timeline(per, across, c.system, 3)[0]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 1024 * 1024)
    try:
        b = run_pod(pod, report.inputs, backend="ray")
    finally:
        ray.shutdown()
    for x, y in zip(r.outputs, b.outputs, strict=True):
        assert x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)
    assert b.total_cycles == r.total_cycles


def test_link_inputs_arrive_once_and_links_run_at_their_bound():
    """A stage's input written by a link is laid out once, spread (`plan.link_inputs`): the link
    carries each byte once, where the matmul's replicated operand had carried 16 copies; and its
    rows run within a few percent of the link's bound."""
    from ipu.runtime.system import link_transfers

    c = systems.compile_system(LIT / "Inputs" / "tp-wide.mlir", "sim16x2", microbatches=2, refine=False)
    crossing = [t for t in c.pod.transfers if t.rows is not None]
    assert crossing and all(int(t.rows[:, 4].sum()) == t.nbytes for t in crossing)
    for trs in link_transfers(c.pod).values():
        for tr in trs:
            bound = math.ceil(tr.nbytes / (c.system.lanes * c.system.link_bytes_per_cycle))
            assert bound <= tr.horizon <= 1.05 * bound
    # a sweep of the link rate schedules the rows at its own rate: at four times the rate, the
    # busiest tile port bounds them (4,096 bytes at 4 a cycle) and the horizon meets that bound
    fast = with_overrides(c.system, link_bytes_per_cycle=4 * c.system.link_bytes_per_cycle)
    port = c.system.chip.rates["exchange_bytes_per_cycle"]
    for slow, quick in zip(link_transfers(c.pod).values(), link_transfers(c.pod, fast).values(), strict=True):
        for a, b in zip(slow, quick, strict=True):
            bound = max(math.ceil(b.nbytes / (fast.lanes * fast.link_bytes_per_cycle)), b.tile_bytes // port)
            assert b.horizon < a.horizon and bound <= b.horizon <= 1.05 * bound
    # the partitioner prices each unit with its inputs as a link writes them (laid out once,
    # spread, then rearranged on the chip): each stage's estimate within 15 % of its emulated
    # cycles (priced in whatever layout the readers wanted, stage 0 was 22 % under)
    for i, actual in enumerate(systems.stage_cycles(c.pod, c.system)):
        assert abs(c.partition_estimate(i) - actual) <= 0.15 * actual


def test_tensor_groups_that_cannot_be_are_refused_by_name():
    with pytest.raises(DiagnosticException, match="group 3 must be 2 or more chips and divide the 4 chips of sim64x4"):
        systems.compile_system(LIT / "split-tensor-parallel.mlir", "sim64x4", parallel="tensor", tensor_group=3)
    with pytest.raises(DiagnosticException, match="splits into 3 segments over groups of 2 chips, fewer than the 4"):
        systems.compile_system(LIT / "split-tensor-parallel.mlir", "pod8", parallel="tensor", tensor_group=2)
    with pytest.raises(systems.ApiError, match="--tensor-group sizes a tensor-parallel split: give --parallel tensor"):
        systems.compile_system(LIT / "split-tensor-parallel.mlir", "sim64x4", tensor_group=2)


def test_a_collective_that_does_not_hold_together_is_refused():
    import copy

    c = systems.compile_system(FIXTURES / "gpt2_block.classic17.onnx", "sim64x2", microbatches=1, parallel="tensor")
    pod = copy.copy(c.pod)
    col = pod.collectives[0]
    pod.collectives = [type(col)(col.kind, (col.chips[0], col.chips[0]), col.inputs, col.outputs, col.nbytes)]
    with pytest.raises(PackageError, match="collective 0 \\(all_reduce\\): its input .* is not on chip 0"):
        validate_pod(pod)


def _binding(name, slices):
    from ipu.abi.isa import DType
    from ipu.abi.package import Binding

    return Binding(name, DType.F32, (4, 4), np.array(slices, np.int64))


def test_link_rows_schedule_and_check_by_hand():
    from ipu.abi.link_rows import check_link_rows, link_rows, link_schedule

    base = 0x4C000
    # a 4x4 float32 tensor: rows 0-1 on tile 0, rows 2-3 on tile 1 (16-byte rows at offset 0)...
    src = _binding("h", [[0, 4, 2, 4, 0, 1, 0, base, 16], [8, 4, 2, 4, 1, 1, 0, base, 16]])
    # ... lands one row a tile on tiles 0-3 at offset 64
    dst = _binding("h", [[4 * i, 4, 1, 4, i, 1, 0, base + 64, 16] for i in range(4)])
    rows = link_rows(src, dst, base)
    assert rows.tolist() == [[0, 0, 0, 64, 16], [0, 16, 1, 64, 16], [1, 0, 2, 64, 16], [1, 16, 3, 64, 16]]
    assert check_link_rows(rows, src, dst, base) == ""
    swapped = rows.copy()
    swapped[[0, 1], 1] = swapped[[1, 0], 1]
    assert "moves logical byte" in check_link_rows(swapped, src, dst, base)
    twice = rows.copy()
    twice[1, 2:4] = twice[0, 2:4]
    assert "written twice" in check_link_rows(twice, src, dst, base) or "moves logical" in check_link_rows(
        twice, src, dst, base
    )
    # each source tile sends 32 bytes at 4 a cycle: 8 cycles; the link (24 B/cycle) needs 3. Tile 1
    # starts with its second row (the rotation), each row 4 cycles, no port shared at once
    starts, horizon, bound = link_schedule(rows, 4, 24)
    assert starts.tolist() == [0, 4, 4, 0] and horizon == bound == 8
    # a link no faster than a port carries one row at a time: 64 bytes at 4 B/cycle take 16 cycles
    starts, horizon, bound = link_schedule(rows, 4, 4)
    assert bound == 16 and horizon == 16 and starts.tolist() == [0, 8, 12, 4]
    # 6 B/cycle: two rows at once at 3 B/cycle each (16 bytes: 6 cycles a row), where one row at a
    # time at the port's 4 would take 16 cycles
    starts, horizon, bound = link_schedule(rows, 4, 6)
    assert bound == 11 and horizon == 12 and starts.tolist() == [0, 6, 6, 0]
    # a replicated destination receives every byte on each replica
    rep = _binding("h", [[0, 4, 4, 4, 5, 2, 1, base, 16]])  # tiles 5 and 6 hold all four rows
    assert int(link_rows(src, rep, base)[:, 4].sum()) == 2 * 64


def test_damaged_link_rows_are_refused(gpt2_on_two):
    import copy

    pod = copy.copy(gpt2_on_two.pod)
    t = pod.transfers[0]
    bad = t.rows.copy()
    bad[0, 3] += 4  # one row lands four bytes off
    pod.transfers = [type(t)(t.src, t.dst, t.src_chip, t.dst_chip, t.nbytes, bad)]
    with pytest.raises(PackageError, match="transfer 0:.* -> 1:.*: row to tile"):
        validate_pod(pod)


@pytest.mark.parametrize("parallel", ["pipeline", "tensor"])
def test_a_jax_lowering_runs_on_a_system(parallel):
    """JAX's StableHLO (a GPT-style block, jax.jit's lowering) pipelined and split tensor-parallel."""
    shlo = Path(__file__).resolve().parents[1] / "stablehlo"
    c = systems.compile_system(shlo / "gpt_block.mlir", "sim64x2", microbatches=1, parallel=parallel)
    with np.load(shlo / "gpt_block.inputs.npz") as z:
        x = {k: z[k] for k in z.files}
    report = systems.run_system(c, [x])
    assert report.passed, [ch.name for ch in report.checks if not ch.result.passed]
    with np.load(shlo / "gpt_block.outputs.npz") as z:  # jax's own outputs
        want = z["out0"]
    assert np.abs(report.result.outputs[0]["out0"] - want).max() < 1e-3
    if parallel == "tensor":
        assert len(c.pod.collectives) == 2


@pytest.mark.parametrize(
    ("fixture", "system", "parallel"),
    [
        ("gpt2_lm.classic17", "sim64x4", "pipeline"),
        ("gpt2_block.classic17", "sim64x2", "tensor"),
    ],
)
def test_lowered_system_module_round_trips_to_the_same_bytes(fixture, system, parallel):
    from ipu.context import make_context
    from ipu.dialects.system import LinkOp
    from ipu.ir_text import parse_text
    from ipu.system_ir import module_pod, pod_module

    c = systems.compile_system(FIXTURES / f"{fixture}.onnx", system, microbatches=1, parallel=parallel)
    m = pod_module(c.pod)
    m.verify()
    again = module_pod(parse_text(make_context(), str(m), "lowered"))
    assert pod_bytes(again) == pod_bytes(c.pod)
    links = [op for op in m.walk() if isinstance(op, LinkOp)]
    assert len(links) == sum(t.rows is not None for t in c.pod.transfers)
    for op in links:
        assert op.horizon.value.data >= op.lower_bound.value.data > 0
