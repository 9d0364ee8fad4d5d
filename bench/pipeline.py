"""Pipelines over systems of mk2 chips: `python bench/pipeline.py [--sections …]`.

Sections (all by default; `--sections fit,numerics,bubble,cut,sensitivity,depth,ray`):

- fit: the model (default GPT-2 medium, 24 layers of 1024, sequence 128, f16) on one mk2 (the
  refusal) and on `--system` (default pod4): the cut, and per chip its layers, weights and the
  busiest tile's memory.
- numerics: `--microbatches` through the pipeline on the system emulator, checked per stage, by
  value name against the unpartitioned model, and against onnxruntime; cycles per stage.
- bubble: the bubble for m = 1 … 32 micro-batches against (p - 1) / (m + p - 1), from the stages'
  emulated cycles and the link model (the timeline of `runtime.system`).
- cut: the partitioner's cut against an even split and Graphcore's published split (`1,7,8,8`
  for GPT-2 medium on 4 IPUs): slowest stage, step, throughput at m = 32.
- sensitivity: throughput at m = 16 as the link rate and the cross-chip sync cost vary.
- depth: GPT-2 small's throughput at m = 32 on 1, 2, 4 and 8 chips.
- large: a 1.1B-parameter Llama-style stack (graph IR, f16, 2048 wide, 16 layers) on pod8:
  stages, memory per chip, numerics against the graph's reference, the bubble.
- tensor: a layer group (`--group-layers` GPT-2 blocks at the model's width) split tensor-parallel
  over pod2 and pod4: PASS, cycles a sequence against one chip, the all-reduces' cycles against
  their lower bound; on pod4 also over pairs of chips, the pairs pipelined (tensor 2 x pipeline
  2); beside them the same layers pipelined, and what `--parallel auto` takes on pod4 for 1 and
  32 micro-batches by the planner's estimates.
- ray: the `--ray-system` (default pod8) run of the model in one process against one Ray actor
  per chip: wall seconds, bit-identical outputs.

Exports come from `test/models/export_models.py` (`--exporter-python` names an interpreter with
the `[models]` extra), cached in `--cache`. Stage cycles are counted by the emulator from the
packages (the programs are static: the same every micro-batch).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import export  # noqa: E402

from ipu import api, systems  # noqa: E402
from ipu.runtime.emulator import Emulator  # noqa: E402
from ipu.runtime.summary import memory_per_tile  # noqa: E402
from ipu.runtime.system import (  # noqa: E402
    grouped_timeline,
    link_transfers,
    pipeline_groups,
    pipeline_timeline,
    run_pod,
    transfers_on_links,
)
from ipu.target.system import System, load_system, with_overrides  # noqa: E402
from ipu.transforms.graph.expand_windows import ExpandWindowsPass  # noqa: E402
from ipu.transforms.system.partition_stages import unit_weight_bytes  # noqa: E402
from ipu.transforms.system.stages import units_of  # noqa: E402

GRAPHCORE_SPLITS = {("gpt2_lm", 24, 4): "1,7,8,8", ("gpt2_lm", 48, 8): "1,6,6,7,7,7,7,7"}
"""Graphcore's published layers per IPU (graphcore/examples nlp/gpt2/pytorch/benchmarks.yml)."""


def layers_per_stage(c: systems.CompiledSystem) -> list[int]:
    return [sum(1 for u in units_of(c.stage_function(i)) if u.is_trip) for i in range(len(c.pod.stages))]


def weights_per_stage(c: systems.CompiledSystem) -> list[int]:
    return [sum(unit_weight_bytes(u) for u in units_of(c.stage_function(i))) for i in range(len(c.pod.stages))]


@dataclass
class Figures:
    """What the sections need of a compiled system, kept after it is freed (a GPT-2 medium
    system holds several GB: weights, the reference, the oracle)."""

    system: System
    busy: list[int]
    layers: list[int]
    transfers: dict
    links: list  # the pod's transfers (their rows): a sweep schedules them at its own link rate


def figures(c: systems.CompiledSystem) -> Figures:
    busy = systems.stage_cycles(c.pod, c.system)
    return Figures(c.system, busy, layers_per_stage(c), link_transfers(c.pod), list(c.pod.transfers))


def throughput(fig: Figures, m: int, system: System | None = None) -> tuple[int, float, float]:
    """(total cycles, bubble, sequences a second) of m micro-batches (on `system`'s links)."""
    s = system or fig.system
    busy = fig.busy
    transfers = fig.transfers if system is None else transfers_on_links(fig.links, system)
    total, _ = pipeline_timeline(busy, transfers, s, m)
    bubble = 1 - m * sum(busy) / (len(busy) * total)
    return total, bubble, m * s.chip.clock_hz / total


def llama_stack(width: int, layers: int, vocab: int, seq: int) -> str:
    """A Llama-style LM as graph IR (f16, seeded Gaussian weights, each layer its own): an
    embedding lookup, `layers` pre-RMSNorm blocks of grouped-query causal attention (64-wide
    heads, a quarter of them KV heads) and a SwiGLU FFN of 4 x `width`, a final RMSNorm and an
    untied LM head. No export, so no float32 copy of the weights: the size the compile holds is
    the model's own. Rotary positions are left out (they cost nothing in weights)."""
    d, h = width, width // 64
    kv, f = max(1, h // 4), 4 * width
    t = lambda *s: f"tensor<{'x'.join(map(str, s))}xf16>"  # noqa: E731
    seed = iter(range(1, 1 << 30))
    lines = [f"func.func @main(%ids: tensor<1x{seq}xi32>) -> {t(seq, vocab)} {{"]

    def param(name: str, *shape: int, std: float = 0.02) -> str:
        lines.append(
            f'  %{name} = graph.parameter "{name}" #graph.gaussian<seed = {next(seed)}, std = {std}> : {t(*shape)}'
        )
        return f"%{name}"

    def ones(name: str) -> str:
        lines.append(f'  %{name} = graph.parameter "{name}" dense<1.0> : {t(d)} : {t(d)}')
        return f"%{name}"

    emb = param("wte", vocab, d)
    lines.append(f"  %x0 = graph.gather {emb}, %ids {{axis = 0}} : ({t(vocab, d)}, tensor<1x{seq}xi32>) -> {t(seq, d)}")
    x = "%x0"
    for i in range(layers):
        g1, g2 = ones(f"l{i}.g1"), ones(f"l{i}.g2")
        wq, wk, wv = param(f"l{i}.wq", d, d), param(f"l{i}.wk", d, kv * 64), param(f"l{i}.wv", d, kv * 64)
        wo, wg, wu, wd = (
            param(f"l{i}.wo", d, d),
            param(f"l{i}.wg", d, f),
            param(f"l{i}.wu", d, f),
            param(f"l{i}.wd", f, d),
        )
        p = f"l{i}_"
        lines += [
            f"  %{p}n1 = graph.rms_norm {x}, {g1} : ({t(seq, d)}, {t(d)}) -> {t(seq, d)}",
            f"  %{p}q = graph.matmul %{p}n1, {wq} : ({t(seq, d)}, {t(d, d)}) -> {t(seq, d)}",
            f"  %{p}k = graph.matmul %{p}n1, {wk} : ({t(seq, d)}, {t(d, kv * 64)}) -> {t(seq, kv * 64)}",
            f"  %{p}v = graph.matmul %{p}n1, {wv} : ({t(seq, d)}, {t(d, kv * 64)}) -> {t(seq, kv * 64)}",
            f"  %{p}qh = graph.split_heads %{p}q {{heads = {h} : i64}} : {t(seq, d)} -> {t(h, seq, 64)}",
            f"  %{p}kh = graph.split_heads %{p}k {{heads = {kv} : i64}} : {t(seq, kv * 64)} -> {t(kv, seq, 64)}",
            f"  %{p}vh = graph.split_heads %{p}v {{heads = {kv} : i64}} : {t(seq, kv * 64)} -> {t(kv, seq, 64)}",
            f'  %{p}a = graph.attention %{p}qh, %{p}kh, %{p}vh {{form = "materialized", causal}} : '
            f"({t(h, seq, 64)}, {t(kv, seq, 64)}, {t(kv, seq, 64)}) -> {t(h, seq, 64)}",
            f"  %{p}m = graph.merge_heads %{p}a : {t(h, seq, 64)} -> {t(seq, d)}",
            f"  %{p}o = graph.matmul %{p}m, {wo} : ({t(seq, d)}, {t(d, d)}) -> {t(seq, d)}",
            f"  %{p}r1 = graph.add {x}, %{p}o : ({t(seq, d)}, {t(seq, d)}) -> {t(seq, d)}",
            f"  %{p}n2 = graph.rms_norm %{p}r1, {g2} : ({t(seq, d)}, {t(d)}) -> {t(seq, d)}",
            f"  %{p}g = graph.matmul %{p}n2, {wg} : ({t(seq, d)}, {t(d, f)}) -> {t(seq, f)}",
            f"  %{p}s = graph.silu %{p}g : {t(seq, f)} -> {t(seq, f)}",
            f"  %{p}u = graph.matmul %{p}n2, {wu} : ({t(seq, d)}, {t(d, f)}) -> {t(seq, f)}",
            f"  %{p}h = graph.mul %{p}s, %{p}u : ({t(seq, f)}, {t(seq, f)}) -> {t(seq, f)}",
            f"  %{p}dn = graph.matmul %{p}h, {wd} : ({t(seq, f)}, {t(f, d)}) -> {t(seq, d)}",
            f"  %{p}r2 = graph.add %{p}r1, %{p}dn : ({t(seq, d)}, {t(seq, d)}) -> {t(seq, d)}",
        ]
        x = f"%{p}r2"
    gf, head = ones("gf"), param("head", d, vocab)
    lines += [
        f"  %nf = graph.rms_norm {x}, {gf} : ({t(seq, d)}, {t(d)}) -> {t(seq, d)}",
        f"  %logits = graph.matmul %nf, {head} : ({t(seq, d)}, {t(d, vocab)}) -> {t(seq, vocab)}",
        f"  func.return %logits : {t(seq, vocab)}",
        "}",
    ]
    return "\n".join(lines) + "\n"


def llama_parameters(width: int, layers: int, vocab: int) -> int:
    kv, f = max(1, width // 64 // 4) * 64, 4 * width
    return layers * (2 * width * width + 2 * width * kv + 3 * width * f + 2 * width) + 2 * vocab * width + width


def one_chip_rate(system: System, cycles: int) -> float:
    return system.chip.clock_hz / cycles


def compile_for(path: Path, system: str, layers: str | None, m: int) -> tuple[systems.CompiledSystem, float]:
    t0 = time.perf_counter()
    c = systems.compile_system(path, system, microbatches=m, layers=layers, precision="f16", options={"finalists": 1})
    return c, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default="fit,numerics,bubble,cut,sensitivity,depth,large,tensor,ray")
    ap.add_argument("--group-layers", type=int, default=4, help="GPT-2 blocks of the tensor-parallel layer group")
    ap.add_argument("--large", default="2048x16", help="WIDTHxLAYERS of the large section's Llama-style stack")
    ap.add_argument("--large-vocab", type=int, default=32000)
    ap.add_argument("--large-system", default="pod8")
    ap.add_argument("--model", default="gpt2_lm")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--system", default="pod4")
    ap.add_argument("--ray-system", default="pod8")
    ap.add_argument("--microbatches", type=int, default=2, help="micro-batches of the numerics run")
    ap.add_argument("--exporter", default="dynamo20")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/ipu-models"))
    ap.add_argument("--exporter-python", default=sys.executable)
    a = ap.parse_args()
    sections = set(a.sections.split(","))
    path = export(a.model, a.seq, a.layers, a.exporter, a.cache, a.exporter_python, width=a.width)
    sysm = load_system(a.system)
    p = sysm.chips
    print(f"model={a.model} layers={a.layers} width={a.width} seq={a.seq} export={path.name} system={a.system}")

    if "fit" in sections:
        t0 = time.perf_counter()
        try:
            api.compile(path, "mk2", precision="f16", options={"finalists": 1}, checkpoints=False)
            print("one mk2: fits")
        except Exception as e:  # noqa: BLE001 -- the refusal is the figure
            print(f"one mk2: refused in {time.perf_counter() - t0:.0f} s: {str(e).splitlines()[0][:300]}")
        gc.collect()

    c, secs = compile_for(path, a.system, None, a.microbatches)
    main_fig = figures(c)
    busy = main_fig.busy
    lays, wts = main_fig.layers, weights_per_stage(c)
    print(f"compiled for {a.system} in {secs:.0f} s: " + ", ".join(f"{k} {v:.1f}" for k, v in c.phase_seconds.items()))
    print("stage chip layers weight_MB busiest_tile_KB chip_MB_touched cycles partition_estimate")
    for st, lay, w, b in zip(c.pod.stages, lays, wts, busy, strict=True):
        mem = memory_per_tile(st.package, sysm.chip)
        est = c.partition_estimate(st.index) or 0
        print(
            f"{st.index:5} {st.chip:4} {lay:6} {w / 1e6:9.1f} {mem.max() / 1024:15.1f} {mem.sum() / 1e6:15.1f} "
            f"{b:9,} {est:9,}"
        )

    if "numerics" in sections:
        t0 = time.perf_counter()
        report = systems.run_system(c)
        wall = time.perf_counter() - t0
        bad = [ch.name for ch in report.checks if not ch.result.passed]
        worst = max((ch.result.max_abs_error for ch in report.checks if ch.kind == "oracle"), default=float("nan"))
        print(
            f"numerics: {'PASS' if not bad else 'FAIL ' + ', '.join(bad[:5])} ({len(report.checks)} checks, "
            f"{c.pod.microbatches} micro-batches, oracle max abs error {worst:.4f}); emulated in {wall:.0f} s; "
            f"stage cycles {[s.busy_per_microbatch for s in report.result.stages]}"
        )

    if "bubble" in sections:
        print(f"bubble on {a.system} (p = {p}), imbalance max/mean {max(busy) / (sum(busy) / p):.3f}:")
        print("    m   total_cycles  bubble  ideal (p-1)/(m+p-1)  seq/s")
        for m in (1, 2, 4, 8, 16, 32):
            total, bubble, tput = throughput(main_fig, m)
            print(f"{m:5} {total:14,} {bubble:7.3f} {(p - 1) / (m + p - 1):20.3f} {tput:6.1f}")

    if "sensitivity" in sections:
        print("sensitivity at m = 16: link B/cycle x sync cycles -> seq/s (bubble)")
        for rate in (3, 6, 12, 24, 48):
            row = []
            for sync in (600, 1500, 3000):
                s = with_overrides(sysm, link_bytes_per_cycle=rate, external_sync_cycles=sync)
                _, bub, tput = throughput(main_fig, 16, s)
                row.append(f"sync {sync}: {tput:6.1f} ({bub:.3f})")
            print(f"  {rate:3} B/cycle  " + "  ".join(row))

    del c
    gc.collect()
    if "cut" in sections:
        even_layers = [a.layers // p + (1 if i < a.layers % p else 0) for i in range(p)]
        cuts = {"planner": main_fig}
        for label, split in (
            ("even", ",".join(map(str, even_layers))),
            ("graphcore", GRAPHCORE_SPLITS.get((a.model, a.layers, p))),
        ):
            if split is None:
                continue
            try:
                cc, _ = compile_for(path, a.system, split, a.microbatches)
                cuts[f"{label} {split}"] = figures(cc)
                del cc
                gc.collect()
            except Exception as e:  # noqa: BLE001 -- a split that does not fit is a figure too
                print(f"cut {label} {split}: refused: {str(e).splitlines()[0][:200]}")
        print("cut                layers         slowest_stage  step(m=32)  seq/s(m=32)")
        for label, fig in cuts.items():
            total, _, tput = throughput(fig, 32)
            lay = ",".join(map(str, fig.layers))
            print(f"{label:18} {lay:14} {max(fig.busy):13,} {total // (32 + p - 1):11,} {tput:11.1f}")

    if "ray" in sections:
        rc, _ = compile_for(path, a.ray_system, None, load_system(a.ray_system).chips)
        import ray

        x = [systems._draw_inputs(rc, i) for i in range(rc.pod.microbatches)]
        pod, chips = rc.pod, rc.system.chips
        del rc  # the run needs the packages alone
        gc.collect()
        t0 = time.perf_counter()
        one = run_pod(pod, x, backend="process")
        t_proc = time.perf_counter() - t0
        gc.collect()
        ray.init(include_dashboard=False, log_to_driver=False)
        t0 = time.perf_counter()
        two = run_pod(pod, x, backend="ray")
        t_ray = time.perf_counter() - t0
        ray.shutdown()
        same = all(np.array_equal(u[k], v[k]) for u, v in zip(one.outputs, two.outputs, strict=True) for k in u)
        print(
            f"ray: {a.ray_system} ({chips} chips, {pod.microbatches} micro-batches): one process "
            f"{t_proc:.0f} s, {chips} Ray actors {t_ray:.0f} s (this machine's cores: 2); outputs "
            f"{'bit-identical' if same else 'DIFFER'}; total cycles {one.total_cycles:,} / {two.total_cycles:,}"
        )
        del pod, one, two
        gc.collect()

    if "large" in sections:
        w, layers = (int(x) for x in a.large.split("x"))
        n_params = llama_parameters(w, layers, a.large_vocab)
        chip = load_system(a.large_system).chip
        print(
            f"large: a Llama-style stack {w} wide, {layers} layers, vocabulary {a.large_vocab}: {n_params / 1e9:.2f}B "
            f"parameters, {2 * n_params / 1e9:.2f} GB of f16 weights against one {chip.name}'s "
            f"{chip.tiles * chip.memory_size / 1e9:.2f} GB of SRAM"
        )
        src = a.cache / f"llama_stack-{w}x{layers}-v{a.large_vocab}-s{a.seq}.mlir"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(llama_stack(w, layers, a.large_vocab, a.seq))
        t0 = time.perf_counter()
        big = systems.compile_system(src, a.large_system, microbatches=2, options={"finalists": 1})
        secs = time.perf_counter() - t0
        fig = figures(big)
        print(f"  compiled for {a.large_system} in {secs:.0f} s")
        print("  stage chip layers weight_MB busiest_tile_KB cycles estimate")
        for st, lay, wb, b in zip(big.pod.stages, fig.layers, weights_per_stage(big), fig.busy, strict=True):
            mem = memory_per_tile(st.package, chip)
            print(
                f"  {st.index:5} {st.chip:4} {lay:6} {wb / 1e6:9.1f} {mem.max() / 1024:15.1f} {b:11,} "
                f"{big.partition_estimate(st.index) or 0:9,}"
            )
        t0 = time.perf_counter()
        rep = systems.run_system(big)
        bad = [ch.name for ch in rep.checks if not ch.result.passed]
        print(
            f"  numerics: {'PASS' if not bad else 'FAIL ' + ', '.join(bad[:5])} ({len(rep.checks)} checks against the "
            f"graph's reference, 2 micro-batches), emulated in {time.perf_counter() - t0:.0f} s"
        )
        del big, rep
        gc.collect()
        for m in (1, 8, 32):
            total, bub, tput = throughput(fig, m)
            ideal = (len(fig.busy) - 1) / (m + len(fig.busy) - 1)
            print(f"  m = {m:2}: {total:,} cycles, bubble {bub:.3f} (ideal {ideal:.3f}), {tput:.1f} seq/s")

    if "tensor" in sections:
        group = export("gpt2_blocks", a.seq, a.group_layers, a.exporter, a.cache, a.exporter_python, width=a.width)
        print(f"tensor parallel: {a.group_layers} GPT-2 blocks of width {a.width} (sequence {a.seq}, f16)")
        one = api.compile(group, "mk2", precision="f16", options={"finalists": 1}, checkpoints=False)
        b1 = Emulator(one.package, one.target, execute=False, max_cycles=None).count_device_cycles()
        del one
        print(f"  one mk2: {b1:,} cycles a sequence")
        for name in ("pod2", "pod4"):
            tp = systems.compile_system(
                group, name, microbatches=2, precision="f16", options={"finalists": 1}, parallel="tensor"
            )
            rep = systems.run_system(tp)
            r = rep.result
            bad = [ch.name for ch in rep.checks if not ch.result.passed]
            reduce = sum(x for x, _, _ in r.collectives)  # each the cheaper of its ring and direct schedules
            bound = sum(b for _, b, _ in r.collectives)
            taken = ", ".join(sorted({s for _, _, s in r.collectives}))
            per = r.total_cycles // r.microbatches
            print(
                f"  {name} tensor: {'PASS' if not bad else 'FAIL'} ({len(rep.checks)} checks), {per:,} cycles a "
                f"sequence ({b1 / per:.2f}x one chip), {len(r.collectives)} all-reduces of "
                f"{tp.pod.collectives[0].nbytes:,} bytes: {reduce:,} cycles, lower bound {bound:,} "
                f"({reduce / bound:.2f}x, {taken}), {reduce / per:.1%} of the time"
            )
            del tp, rep
            gc.collect()
            if name == "pod4":  # tensor x pipeline: pairs of chips, the pairs pipelined
                mixed = systems.compile_system(
                    group,
                    name,
                    microbatches=2,
                    precision="f16",
                    options={"finalists": 1},
                    parallel="tensor",
                    tensor_group=2,
                )
                rep = systems.run_system(mixed)
                bad = [ch.name for ch in rep.checks if not ch.result.passed]
                busy = [s.busy_per_microbatch for s in rep.result.stages]
                one, _, _ = grouped_timeline(mixed.pod, busy, mixed.system, 1)
                total, _, _ = grouped_timeline(mixed.pod, busy, mixed.system, 32)
                rate = 32 * mixed.system.chip.clock_hz / total
                sizes = [len(g) for g in pipeline_groups(mixed.pod)]
                print(
                    f"  {name} tensor 2 x pipeline 2: {'PASS' if not bad else 'FAIL'} ({len(rep.checks)} checks), "
                    f"stages per pair {sizes}, one sequence {one:,} cycles, m = 32 {rate:.1f} seq/s"
                )
                del mixed, rep
                gc.collect()
            pp, _ = compile_for(group, name, None, 32)
            fig = figures(pp)
            del pp
            gc.collect()
            total, bub, tput = throughput(fig, 32)
            lat = sum(fig.busy) + sum(fig.system.link_phase_cycles(trs) for trs in fig.transfers.values())
            print(
                f"  {name} pipeline: stages {fig.busy} (layers {fig.layers}): one sequence {lat:,} cycles, "
                f"m = 32 {tput:.1f} seq/s (tensor: {one_chip_rate(fig.system, per):.1f} seq/s)"
            )

        # what --parallel auto would take on pod4, by the planner's estimates alone
        loaded = api.load_model(group, precision="f16")
        ExpandWindowsPass().apply(api.context(), loaded.module)
        for m in (1, 32):
            cands = systems.choose_parallel(loaded.module, load_system("pod4"), m)
            best = systems.fastest(cands)
            text = ", ".join(f"{c.label} {c.estimated_cycles:,}" for c in cands if c.estimated_cycles is not None)
            print(f"  pod4 --parallel auto, m = {m}: estimates {text}: takes {best.label}")
        del loaded
        gc.collect()

    if "depth" in sections:
        small = export(a.model, a.seq, None, a.exporter, a.cache, a.exporter_python)
        print(f"depth: {small.parent.name} (GPT-2 small), m = 32")
        one = api.compile(small, "mk2", precision="f16", options={"finalists": 1}, checkpoints=False)
        b1 = Emulator(one.package, one.target, execute=False, max_cycles=None).count_device_cycles()
        print(f"  p=1 (one mk2): {b1:,} cycles a sequence, {one.target.clock_hz / b1:.1f} seq/s")
        for name in ("pod2", "pod4", "pod8"):
            cc, _ = compile_for(small, name, None, 32)
            fig = figures(cc)
            del cc
            gc.collect()
            total, bub, tput = throughput(fig, 32)
            print(
                f"  p={len(fig.busy)} ({name}): stages {fig.busy}, layers {fig.layers}, bubble {bub:.3f}, "
                f"{tput:.1f} seq/s ({tput / (one.target.clock_hz / b1):.2f}x one chip)"
            )
    print("done")


if __name__ == "__main__":
    main()
