"""Screen logical-to-physical tile mappings against an exchange resource-load model.

The model has no timing. Per exchange phase (`tilemap.move`, weighted by how often its enclosing
repeats run) it takes the larger of the endpoint load (words a tile sends or receives; a
permutation moves a tile's ports with it, so this never changes) and the load on the shared send
bus of each physical tile pair (`tiles_per_send_bus` tiles, one word each a cycle), and adds the
phase's longest route delay under the mapping (the target's column geometry). Memory-element
load is left out: a tile's memory moves with it, so no mapping changes it. `pressure`
(sum of bus load squared over sum of bus load) breaks ties towards spreading senders across pairs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Block

from ipu.abi.transfers import MC, MCS, PC, PDS, PSS, move_member_tiles, tile_words
from ipu.dialects import tilemap
from ipu.dialects.table import table_of
from ipu.target import Target
from ipu.target.mapping import IDENTITY, TileMapping, candidates


@dataclass(frozen=True)
class PhaseLoad:
    """One phase's traffic in mapping-independent form."""

    weight: int  # how many times the phase runs
    endpoint: int  # max over tiles of words sent or received
    senders: np.ndarray  # logical tiles that send, with the words each sends
    sent: np.ndarray
    src: np.ndarray  # (source, destination) logical tiles of every member
    dst: np.ndarray


@dataclass(frozen=True)
class Screening:
    mapping: TileMapping
    candidates: int
    baseline_cycles: int
    candidate_cycles: int
    baseline_pressure: int
    candidate_pressure: int


def _moves(block: Block, weight: int) -> Iterator[tuple[tilemap.MoveOp, int]]:
    for op in block.ops:
        if isinstance(op, tilemap.MoveOp):
            yield op, weight
        elif isinstance(op, tilemap.RepeatOp):
            yield from _moves(op.body.block, weight * op.count.value.data)


def _narrow(tiles: int) -> type:
    """The narrowest integer type that holds a tile index."""
    return np.int16 if tiles <= np.iinfo(np.int16).max else np.int32


def phase_loads(f: func.FuncOp, tiles: int) -> list[PhaseLoad]:
    out = []
    for op, w in _moves(f.body.block, 1):
        t = table_of(op.transfers)
        if not len(t):
            continue
        src, dst, words, sends = move_member_tiles(t)
        sent, recv = tile_words(src, dst, words, sends, tiles)
        senders = np.flatnonzero(sent)
        endpoint = int(max(sent.max(), recv.max()))
        # narrow tile indices: every candidate mapping gathers them, and that pass is memory bound
        out.append(
            PhaseLoad(w, endpoint, senders, sent[senders], src.astype(_narrow(tiles)), dst.astype(_narrow(tiles)))
        )
    return out


def route_cycles(src: np.ndarray, dst: np.ndarray, mapping: TileMapping, t: Target) -> int:
    """The longest send-to-mux delay among (src, dst) logical tile pairs under `mapping`."""
    perm = mapping.permutation(t.tiles)
    return t.longest_route(perm[src], perm[dst])


def move_route_cycles(table16: np.ndarray, mapping: TileMapping, t: Target) -> int:
    """The longest route of a move table's (source, destination) tiles under `mapping`."""
    if not len(table16):
        return 0
    src, dst, _, _ = move_member_tiles(table16)
    return route_cycles(src, dst, mapping, t)


def loads_of(loads: list[PhaseLoad], mappings: list[TileMapping], t: Target) -> list[tuple[int, int]]:
    """(modelled exchange cycles, pressure) of all phases under each of `mappings`: the route
    gaps of every mapping come from one pass over each phase's members."""
    from ipu.transforms.tilemap.mapping_routes import longest_column_gaps  # numba: load when needed

    narrow = _narrow(t.tiles)
    columns = np.stack([m.permutation(t.tiles) // t.exchange["tiles_per_column"] for m in mappings], axis=1)
    columns = np.ascontiguousarray(columns.astype(narrow))
    gaps = [longest_column_gaps(columns, p.src, p.dst) for p in loads]
    out = []
    for k, m in enumerate(mappings):
        cycles = sq = tot = 0
        for p, g in zip(loads, gaps, strict=True):
            bus = np.bincount(m.physical(p.senders, t.tiles) // t.tiles_per_send_bus, weights=p.sent).astype(np.int64)
            bus_cycles = -(-int(bus.max()) // t.tiles_per_send_bus)
            cycles += p.weight * (max(p.endpoint, bus_cycles) + t.column_route_cycles(int(g[k])))
            sq += p.weight * int((bus * bus).sum())
            tot += p.weight * int(bus.sum())
        out.append((cycles, sq // max(tot, 1)))
    return out


def load_of(loads: list[PhaseLoad], mapping: TileMapping, t: Target) -> tuple[int, int]:
    """(modelled exchange cycles, pressure) of all phases under `mapping`."""
    return loads_of(loads, [mapping], t)[0]


def _shape_hints(f: func.FuncOp, t: Target) -> tuple[set[int], set[int]]:
    """Blocks: tile-group sizes of the buffers and the machine; widths: tile strides and counts of
    the transfer families, plus powers of two."""
    blocks, widths = {t.tiles}, {1 << k for k in range(1, 7)}
    for op in f.walk():
        for r in op.results:
            if isinstance(r.type, tilemap.BufferType):
                blocks.add(r.type.count.data)
    for op, _ in _moves(f.body.block, 1):
        tab = table_of(op.transfers)
        for col in (PSS, PDS, MCS, PC, MC):
            widths.update(int(abs(v)) for v in np.unique(tab[:, col]))
    return blocks, widths


def screen(f: func.FuncOp, t: Target) -> Screening:
    """The candidate mapping with the least modelled exchange load (then pressure; identity on ties)."""
    loads = phase_loads(f, t.tiles)
    cands = [m for m in candidates(t.tiles, *_shape_hints(f, t)) if m != IDENTITY]
    base, *rest = loads_of(loads, [IDENTITY, *cands], t)
    best, best_load = IDENTITY, base
    for m, ld in zip(cands, rest, strict=True):
        if ld < best_load:
            best, best_load = m, ld
    return Screening(best, len(cands) + 1, base[0], best_load[0], base[1], best_load[1])
