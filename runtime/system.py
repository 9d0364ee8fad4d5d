"""Runs a system package (`.ipupod`): one emulated chip per stage, micro-batches pushed through
the pipeline, the values crossing chips handed over as the links would.

Two backends run the same protocol and give bit-identical outputs: `process` (every chip's
`Emulator` in this process) and `ray` (one Ray actor per chip; a stage's outputs go to the next
actor as object references, so the chips work on different micro-batches at once, as a pipeline
does). Each chip's run is the unchanged single-chip emulator on its own package.

Timing is the pipeline's: in step t stage s works on micro-batch t - s, so m micro-batches over
p stages take m + p - 1 steps; a step lasts as long as its slowest busy stage, then a link phase
moves every value produced in it (`System.link_phase_cycles`: the cross-chip sync, hop latency,
the busiest link and the busiest tile port). Each stage reports its busy cycles (its device
cycles per micro-batch), its idle cycles, and the pipeline its bubble against the balanced
(p - 1) / (m + p - 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ipu.abi.link_rows import link_schedule
from ipu.abi.package import Binding
from ipu.abi.pod import Pod, PodTransfer
from ipu.abi.tables import SLICE
from ipu.runtime.emulator import DEFAULT_MAX_CYCLES, Emulator, EmulatorError, RunResult
from ipu.runtime.workers import emulator_threads
from ipu.target.system import LinkTransfer, System, load_system

BACKENDS = ("process", "ray")


def tile_bytes(b: Binding, esize: int) -> int:
    """The most bytes of binding `b` any one tile holds (its port's share of a transfer)."""
    s = b.slices
    if not len(s):
        return 0
    col = {c: i for i, c in enumerate(SLICE.columns)}
    per: dict[int, int] = {}
    for row in s:
        n = int(row[col["rows"]] * row[col["row_elements"]]) * esize
        for i in range(int(row[col["tile_count"]])):
            t = int(row[col["tile"]] + i * row[col["tile_step"]])
            per[t] = per.get(t, 0) + n
    return max(per.values())


@dataclass
class StageTiming:
    """One stage's share of a run: its device cycles per micro-batch (busy), the cycles it waits
    in the run's timeline (idle), and the host cycles of the model inputs and outputs it moves."""

    stage: int
    chip: int
    busy_per_microbatch: int
    busy: int
    idle: int
    host_cycles: int


@dataclass
class SystemResult:
    """A run's outputs per micro-batch (model output name -> array), every stage's single-chip
    results per micro-batch, and the pipeline's timing."""

    outputs: list[dict[str, np.ndarray]]
    stage_results: list[list[RunResult]]  # [micro-batch][stage]
    stage_inputs: list[list[dict[str, np.ndarray]]]  # [micro-batch][stage]
    stages: list[StageTiming]
    link_cycles: list[int]  # per pipeline step
    total_cycles: int
    microbatches: int
    clock_hz: int
    pipelined: bool = True  # one stage a chip (else tensor-parallel segments between collectives)
    collectives: list[tuple[int, int, str]] = field(default_factory=list)  # (cycles, lower bound, schedule) each
    groups: int = 0  # tensor-parallel segments: the pipelined groups of chips (`pipeline_groups`)

    @property
    def chip_busy(self) -> dict[int, int]:
        """Each chip's busy cycles over the run (its stages' device cycles)."""
        out: dict[int, int] = {}
        for s in self.stages:
            out[s.chip] = out.get(s.chip, 0) + s.busy
        return out

    @property
    def bubble(self) -> float:
        """The idle share of the chips' time: 1 - busy / (chips x run)."""
        busy = self.chip_busy
        return 1 - sum(busy.values()) / (len(busy) * self.total_cycles) if self.total_cycles else 0.0

    @property
    def ideal_bubble(self) -> float | None:
        """(p - 1) / (m + p - 1): a pipeline's bubble with p balanced stages (or groups of
        tensor-parallel chips) and free links; None for tensor-parallel segments over one group,
        which all its chips run together."""
        if not self.pipelined and self.groups < 2:
            return None
        p, m = (len(self.stages) if self.pipelined else self.groups), self.microbatches
        return (p - 1) / (m + p - 1)

    @property
    def samples_per_second(self) -> float:
        return self.microbatches * self.clock_hz / self.total_cycles if self.total_cycles else 0.0


def all_reduce_sum(*partials: np.ndarray) -> np.ndarray:
    """The all-reduce's sum: in member order, in float32 (int32 for integers), then at the
    members' dtype; both backends call this one function, so their results are bit-identical."""
    acc = partials[0].astype(np.int32 if partials[0].dtype.kind in "iu" else np.float32)
    for p in partials[1:]:
        acc = acc + p
    return acc.astype(partials[0].dtype)


def _stage_inputs(
    pod: Pod,
    s: int,
    model_inputs: dict[str, np.ndarray],
    produced: dict[tuple[int, str], Any],
    reduced: dict[int, list[Any]],
    reduce: Callable[..., Any],
    link: Callable[[PodTransfer, Any], Any],
) -> tuple[dict, list[tuple[str, np.ndarray, Any]]]:
    """What stage `s` reads, by its binding names: model inputs, earlier stages' outputs (over
    the links or within its chip), and the sums of all-reduces (each computed once, by `reduce`,
    when a stage first reads it); and the link transfers into it (binding, rows, the source's
    bytes by `link`), which write its memory before it runs (their values are in the dict too,
    as the source read them, for the checks). An all-reduce leaves its sum in place of each
    member's partial: a transfer from a member's partial carries the sum (`link(t, sum)` writes
    it there first)."""
    x: dict[str, Any] = {}
    links: list[tuple[str, np.ndarray, Any]] = []

    def total(j: int) -> Any:
        if j not in reduced:
            c = pod.collectives[j]
            reduced[j] = [reduce(*[produced[(r.stage, r.binding)] for r in c.inputs])] * len(c.inputs)
        return reduced[j][0]

    members = {(r.stage, r.binding): j for j, c in enumerate(pod.collectives) for r in c.inputs}
    for name, routes in pod.inputs.items():
        for r in routes:
            if r.stage == s:
                x[r.binding] = model_inputs[name]
    for t in pod.transfers:
        if t.dst.stage == s:
            j = members.get((t.src.stage, t.src.binding))
            x[t.dst.binding] = produced[(t.src.stage, t.src.binding)] if j is None else total(j)
            if t.rows is not None:
                links.append((t.dst.binding, t.rows, link(t, None if j is None else total(j))))
    for j, c in enumerate(pod.collectives):
        for dsts in c.outputs:
            for d in dsts:
                if d.stage == s:
                    x[d.binding] = total(j)
    return x, links


def _link_out(emu: Emulator, binding: str, rows: np.ndarray, total: np.ndarray | None) -> bytes:
    """The bytes `rows` read from `emu`'s tile memory; with `total` (an all-reduce's sum, which
    it leaves in place of the member's partial) written over output `binding` first."""
    if total is not None:
        emu.scatter(next(b for b in emu.package.outputs if b.name == binding), total)
    return emu.read_rows(rows)


def _run_stage(emu: Emulator, xs: dict[str, Any], links: list[tuple[str, np.ndarray, bytes]]) -> RunResult:
    """Write the link transfers' bytes into the stage's tile memory, then run it with the host
    writing the rest of its inputs."""
    for _, rows, blob in links:
        emu.write_rows(rows, blob)
    preloaded = frozenset(b for b, _, _ in links)
    return emu.run({k: v for k, v in xs.items() if k not in preloaded}, preloaded)


class _ProcessChips:
    """Every stage's emulator in this process."""

    def __init__(self, pod: Pod, system: System, **emulator: Any) -> None:
        self.emulators = [Emulator(st.package, system.chip, **emulator) for st in pod.stages]

    def _link_out(self, t: PodTransfer, total: np.ndarray | None) -> bytes:
        return _link_out(self.emulators[t.src.stage], t.src.binding, t.rows, total)

    def run(self, pod: Pod, batches: list[dict[str, np.ndarray]]) -> tuple[list[list[RunResult]], list[list[dict]]]:
        results: list[list[RunResult]] = []
        inputs: list[list[dict]] = []
        for x in batches:
            produced: dict[tuple[int, str], np.ndarray] = {}
            reduced: dict[int, list[Any]] = {}
            row, ins = [], []
            for s, emu in enumerate(self.emulators):
                xs, links = _stage_inputs(pod, s, x, produced, reduced, all_reduce_sum, self._link_out)
                r = _run_stage(emu, xs, links)
                for name, v in r.outputs.items():
                    produced[(s, name)] = v
                row.append(r)
                ins.append(xs)
            results.append(row)
            inputs.append(ins)
        return results, inputs


class _RayChips:
    """One Ray actor per chip, holding the emulators of the stages on it; a stage runs when its
    inputs arrive (object references straight from the actors and all-reduce tasks before it)."""

    def __init__(self, pod: Pod, system: System, **emulator: Any) -> None:
        import ray

        if not ray.is_initialized():
            ray.init(num_cpus=max(2, len(pod.stages)), include_dashboard=False, log_to_driver=False)

        @ray.remote(num_cpus=0)
        class ChipActor:
            def __init__(self, packages, target, kwargs):
                self.emus = {s: Emulator(pkg, target, **kwargs) for s, pkg in packages.items()}

            def run(self, stage, names, link_rows, *values):
                n = len(names)
                xs = dict(zip(names, values[:n], strict=True))
                links = [(b, rows, blob) for (b, rows), blob in zip(link_rows, values[n:], strict=True)]
                r = _run_stage(self.emus[stage], xs, links)
                return (r, *r.outputs.values())

            def link_out(self, stage, binding, rows, total):
                return _link_out(self.emus[stage], binding, rows, total)

        self.ray = ray
        self.reduce = ray.remote(num_cpus=0)(all_reduce_sum).remote  # the sum as a task: references in, one out
        chips = sorted({st.chip for st in pod.stages})
        # the actors run side by side: the machine's cores shared among them, not each taking all
        kwargs = {"threads": max(1, emulator_threads() // len(chips)), **emulator}
        self.by_chip = {
            c: ChipActor.remote({st.index: st.package for st in pod.stages if st.chip == c}, system.chip, kwargs)
            for c in chips
        }
        self.actors = [self.by_chip[st.chip] for st in pod.stages]

    def _link_out(self, t: PodTransfer, total: Any) -> Any:
        """The source side's bytes of `t`, read by the source chip's actor (an object reference
        the destination's actor resolves: the link traffic goes through Ray)."""
        return self.actors[t.src.stage].link_out.remote(t.src.stage, t.src.binding, t.rows, total)

    def run(self, pod: Pod, batches: list[dict[str, np.ndarray]]) -> tuple[list[list[RunResult]], list[list[dict]]]:
        ray = self.ray
        pending: list[list[Any]] = []
        inputs: list[list[dict]] = []
        for x in batches:
            produced: dict[tuple[int, str], Any] = {}
            reduced: dict[int, list[Any]] = {}
            row, ins = [], []
            for s, actor in enumerate(self.actors):
                xs, links = _stage_inputs(pod, s, x, produced, reduced, self.reduce, self._link_out)
                names = list(xs)
                outs = [b.name for b in pod.stages[s].package.outputs]
                values = [xs[n] for n in names] + [blob for _, _, blob in links]
                spec = [(b, rows) for b, rows, _ in links]
                refs = actor.run.options(num_returns=1 + len(outs)).remote(s, names, spec, *values)
                refs = refs if isinstance(refs, list) else [refs]
                for name, ref in zip(outs, refs[1:], strict=True):
                    produced[(s, name)] = ref
                row.append(refs[0])
                ins.append(xs)
            pending.append(row)
            inputs.append(ins)
        results = [ray.get(row) for row in pending]
        # the inputs a stage read from a transfer were references: the arrays themselves, for the checks
        for ins in inputs:
            for xs in ins:
                for k, v in list(xs.items()):
                    if isinstance(v, ray.ObjectRef):
                        xs[k] = ray.get(v)
        return results, inputs

    def close(self) -> None:
        for a in self.by_chip.values():
            self.ray.kill(a)


def run_pod(
    pod: Pod,
    batches: list[dict[str, np.ndarray]],
    backend: str = "process",
    system: System | None = None,
    checked: bool = False,
    poison: bool = False,
    max_cycles: int | None = DEFAULT_MAX_CYCLES,
) -> SystemResult:
    """Push `batches` (one dict of model inputs per micro-batch) through the pipeline on
    `backend`; `system` overrides the package's (a sensitivity sweep of the link figures)."""
    if backend not in BACKENDS:
        raise EmulatorError(f"unknown backend '{backend}' (known: {', '.join(BACKENDS)})")
    if not batches:
        raise EmulatorError("a run needs at least one micro-batch")
    system = system or load_system(pod.system)
    missing = sorted(set(pod.inputs) - set(batches[0]))
    extra = sorted(set(batches[0]) - set(pod.inputs))
    if missing or extra:
        raise EmulatorError(f"inputs: missing {missing}, unexpected {extra} (the model reads {sorted(pod.inputs)})")
    # one emulator a stage, several a chip when tensor-parallel segments follow one another: their
    # tile memory is mapped as touched (a populated 919 MB each put GPT-2 medium's four-chip layer
    # group, 36 stages, out of 24 GiB)
    kwargs = {"checked": checked, "poison": poison, "max_cycles": max_cycles, "populate": False}
    chips: Any = _ProcessChips(pod, system, **kwargs) if backend == "process" else _RayChips(pod, system, **kwargs)
    try:
        results, inputs = chips.run(pod, batches)
    finally:
        if backend == "ray":
            chips.close()
    outputs = [{name: row[r.stage].outputs[r.binding] for name, r in pod.outputs.items()} for row in results]
    return _timeline(pod, system, results, inputs, outputs)


def link_transfers(pod: Pod, system: System | None = None) -> dict[int, list[LinkTransfer]]:
    """`transfers_on_links` of `pod`'s transfers on `system` (default: the pod's own)."""
    return transfers_on_links(pod.transfers, system or load_system(pod.system))


def transfers_on_links(transfers: list[PodTransfer], system: System) -> dict[int, list[LinkTransfer]]:
    """Per source stage, the link transfers of `transfers` (a pod's outputs), each with the most
    bytes one tile sends or receives and its rows' horizon scheduled at `system`'s link rate (a
    sweep of the link figures passes a system of its own)."""
    out: dict[int, list[LinkTransfer]] = {}
    port, rate = system.chip.rates["exchange_bytes_per_cycle"], system.lanes * system.link_bytes_per_cycle
    for t in transfers:
        if t.rows is None or not len(t.rows):
            continue
        nb = t.rows[:, 4]
        tb = int(max(np.bincount(t.rows[:, 0], weights=nb).max(), np.bincount(t.rows[:, 2], weights=nb).max()))
        _, horizon, _ = link_schedule(t.rows, port, rate)
        out.setdefault(t.src.stage, []).append(LinkTransfer(t.src_chip, t.dst_chip, t.nbytes, tb, horizon))
    return out


def pipeline_timeline(
    busy: list[int], transfers: dict[int, list[LinkTransfer]], system: System, microbatches: int
) -> tuple[int, list[int]]:
    """(total cycles, link cycles per step) of `microbatches` through stages taking `busy`
    cycles each: step t runs stage s on micro-batch t - s, lasts as long as its slowest stage,
    then a link phase moves what the step's stages produced."""
    p, m = len(busy), microbatches
    link, total = [], 0
    for step in range(m + p - 1):
        active = [s for s in range(p) if 0 <= step - s < m]
        moving = [tr for s in active for tr in transfers.get(s, [])]
        ln = system.link_phase_cycles(moving)
        link.append(ln)
        total += max(busy[s] for s in active) + ln
    return total, link


def collective_cycles(pod: Pod, system: System) -> list[tuple[int, int, str]]:
    """Per collective, (its cycles as the cheaper all-reduce schedule, the lower bound any
    all-reduce needs, that schedule's name: ring or direct, `System.all_reduce_schedules`)."""
    out = []
    for c in pod.collectives:
        src = next(b for b in pod.stages[c.inputs[0].stage].package.outputs if b.name == c.inputs[0].binding)
        esize = max(1, c.nbytes // max(1, int(np.prod(src.shape))))
        name, cycles = system.all_reduce_schedule(c.nbytes, list(c.chips), tile_bytes(src, esize))
        out.append((cycles, system.all_reduce_lower_bound(c.nbytes, list(c.chips)), name))
    return out


def pipeline_groups(pod: Pod) -> list[list[int]]:
    """The stages of tensor-parallel segments in their pipelined groups: the chips an all-reduce
    joins are one group (a chip in none, a group of its own); groups in the order of their first
    stage, each with its stages in order."""
    root = {st.chip: st.chip for st in pod.stages}

    def find(c: int) -> int:
        while root[c] != c:
            c = root[c]
        return c

    for col in pod.collectives:
        for c in col.chips[1:]:
            root[find(c)] = find(col.chips[0])
    groups: dict[int, list[int]] = {}
    for st in pod.stages:
        groups.setdefault(find(st.chip), []).append(st.index)
    return list(groups.values())


def _group_cycles(
    pod: Pod,
    stages: list[int],
    busy: list[int],
    system: System,
    collectives: list[tuple[int, int, str]],
    moving: dict[int, list[LinkTransfer]],
) -> tuple[int, list[int]]:
    """(cycles a micro-batch, cycles between waves) of one group's `stages`: they run in waves
    (consecutive stages on distinct chips, together), a wave lasting as long as its slowest
    stage; after a wave, the all-reduces of its values and the link phase of the transfers its
    stages send within the group (`moving`, by source stage)."""
    waves: list[list[int]] = [[]]
    for s in stages:
        if any(pod.stages[x].chip == pod.stages[s].chip for x in waves[-1]):
            waves.append([])
        waves[-1].append(s)
    wave_of = {s: w for w, ss in enumerate(waves) for s in ss}
    between = [0] * len(waves)
    for (cycles, _, _), c in zip(collectives, pod.collectives, strict=True):
        if c.inputs[0].stage in wave_of:
            between[max(wave_of[r.stage] for r in c.inputs)] += cycles
    sent: dict[int, list[LinkTransfer]] = {}
    for src in stages:
        sent.setdefault(wave_of[src], []).extend(moving.get(src, []))
    for w, trs in sent.items():
        between[w] += system.link_phase_cycles(trs)
    return sum(max(busy[s] for s in ss) for ss in waves) + sum(between), between


def segment_timeline(pod: Pod, busy: list[int], system: System, microbatches: int) -> tuple[int, list[int]]:
    """(total cycles, cycles between waves per micro-batch) of tensor-parallel segments over one
    group of chips (`_group_cycles`): micro-batches run one after another (every chip works on
    each)."""
    per, between = _group_cycles(
        pod, [st.index for st in pod.stages], busy, system, collective_cycles(pod, system), link_transfers(pod, system)
    )
    return microbatches * per, between


def grouped_timeline(pod: Pod, busy: list[int], system: System, microbatches: int) -> tuple[int, list[int], int]:
    """(total cycles, link cycles per pipeline step, groups) of tensor-parallel segments over
    several groups of chips, pipelined: a group takes `_group_cycles` a micro-batch (its own
    all-reduces and transfers within it), and the groups run as `pipeline_timeline`'s stages, the
    transfers from one group to the next its link phases."""
    groups = pipeline_groups(pod)
    group_of_chip = {pod.stages[s].chip: g for g, ss in enumerate(groups) for s in ss}
    within: dict[int, list[LinkTransfer]] = {}
    across: dict[int, list[LinkTransfer]] = {}
    for src, trs in link_transfers(pod, system).items():
        g = group_of_chip[pod.stages[src].chip]
        for tr in trs:
            (within.setdefault(src, []) if group_of_chip[tr.dst] == g else across.setdefault(g, [])).append(tr)
    collectives = collective_cycles(pod, system)
    per = [_group_cycles(pod, ss, busy, system, collectives, within)[0] for ss in groups]
    total, link = pipeline_timeline(per, across, system, microbatches)
    return total, link, len(groups)


def _timeline(
    pod: Pod, system: System, results: list[list[RunResult]], inputs: list[list[dict]], outputs: list[dict]
) -> SystemResult:
    m, p = len(results), len(pod.stages)
    busy = [results[0][s].total_cycles for s in range(p)]  # static programs: the same every micro-batch
    model_io = {(r.stage, r.binding) for rs in pod.inputs.values() for r in rs}
    model_io |= {(r.stage, r.binding) for r in pod.outputs.values()}
    host = [
        sum(
            int(x["cycles"])
            for x in results[-1][s].profile
            if x.get("kind") in ("host_write", "host_read") and (s, x.get("binding")) in model_io
        )
        for s in range(p)
    ]
    groups = 0
    if pod.pipelined:
        total, link = pipeline_timeline(busy, link_transfers(pod, system), system, m)
    elif len(pipeline_groups(pod)) > 1:
        total, link, groups = grouped_timeline(pod, busy, system, m)
    else:
        total, link = segment_timeline(pod, busy, system, m)
    stages = [StageTiming(s, pod.stages[s].chip, busy[s], m * busy[s], total - m * busy[s], host[s]) for s in range(p)]
    result = SystemResult(outputs, results, inputs, stages, link, total, m, system.chip.clock_hz)
    result.pipelined, result.groups = pod.pipelined, groups
    result.collectives = collective_cycles(pod, system)
    return result


def microbatch_inputs(make: Callable[[int], dict[str, np.ndarray]], microbatches: int, seed: int) -> list[dict]:
    """One input dict per micro-batch, micro-batch i drawn with seed `seed + i`."""
    return [make(seed + i) for i in range(microbatches)]


__all__ = [
    "BACKENDS",
    "StageTiming",
    "SystemResult",
    "link_transfers",
    "transfers_on_links",
    "microbatch_inputs",
    "all_reduce_sum",
    "collective_cycles",
    "grouped_timeline",
    "pipeline_groups",
    "pipeline_timeline",
    "segment_timeline",
    "run_pod",
    "tile_bytes",
]
