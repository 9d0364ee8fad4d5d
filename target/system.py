"""Systems of chips as data: `load_system("pod4")` reads `target/systems/pod4.toml`.

A system is several chips of one target joined by IPU-Links in a topology (`line`: chips in a
row; `ladder`: GCL's ladder, pairs of chips as rungs, rails joining the pairs in order), with
the link rate, a hop's latency, the cost of a sync across chips (the EXTERNAL zone) and the
host path. The partitioner prices stage boundaries with it and the system emulator times the
link phases with it, so both start from the same numbers.
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from ipu.target import Target, TargetError, load_target

SYSTEM_DIR = Path(__file__).parent / "systems"
TOPOLOGIES = ("line", "ladder")


@dataclass(frozen=True)
class LinkTransfer:
    """One value crossing chips in a link phase: `nbytes` from chip `src` to chip `dst`;
    `tile_bytes` is the most any one tile of either end sends or receives (its port's share);
    `horizon` the cycles its rows' schedule takes, when it has one."""

    src: int
    dst: int
    nbytes: int
    tile_bytes: int
    horizon: int = 0  # its rows' scheduled cycles (abi.link_rows.link_schedule), when known


@dataclass(frozen=True)
class System:
    """`chips` chips of target `chip`, joined by `lanes` IPU-Links per neighbouring pair."""

    name: str
    description: str
    chip: Target
    chips: int
    topology: str
    lanes: int
    link_bytes_per_cycle: int
    link_latency_cycles: int
    external_sync_cycles: int
    host_bytes_per_cycle: int

    @functools.cached_property
    def links(self) -> tuple[tuple[int, int], ...]:
        """The neighbouring chip pairs (a < b) the topology joins."""
        n = self.chips
        if self.topology == "line":
            return tuple((i, i + 1) for i in range(n - 1))
        rungs = [(i, i + 1) for i in range(0, n - 1, 2)]
        rails = [(i, i + 2) for i in range(n - 2)]
        return tuple(sorted(set(rungs + rails)))

    @functools.cached_property
    def chain(self) -> tuple[int, ...]:
        """The chips in pipeline order, each a neighbour of the next (stage k runs on chain[k]):
        along a ladder, up one rail and back down the other."""
        if self.topology == "line":
            return tuple(range(self.chips))
        up = list(range(0, self.chips, 2))
        down = list(range(1, self.chips, 2))[::-1]
        return tuple(up + down)

    @functools.cached_property
    def neighbours(self) -> dict[int, list[int]]:
        """Each chip's neighbours (the chips a link joins it to), in order."""
        adj: dict[int, list[int]] = {i: [] for i in range(self.chips)}
        for a, b in self.links:
            adj[a].append(b)
            adj[b].append(a)
        return {c: sorted(v) for c, v in adj.items()}

    def _check_chips(self, *chips: int) -> None:
        for c in chips:
            if not 0 <= c < self.chips:
                raise TargetError(f"system {self.name} has chips 0-{self.chips - 1}, not {c}")

    def route(self, src: int, dst: int, directed: bool = False) -> list[tuple[int, int]]:
        """The links of a shortest path from chip `src` to chip `dst`: as sorted pairs, or
        `directed` as (from, to) hops (a link carries a direction each way)."""
        self._check_chips(src, dst)
        prev: dict[int, int] = {src: src}
        todo = deque([src])
        while todo:
            c = todo.popleft()
            for d in self.neighbours[c]:
                if d not in prev:
                    prev[d] = c
                    todo.append(d)
        path, c = [], dst
        while c != src:
            p = prev[c]
            path.append((p, c) if directed else (min(p, c), max(p, c)))
            c = p
        return path[::-1]

    def shortest_routes(self, src: int, dst: int) -> list[list[tuple[int, int]]]:
        """Every shortest path from chip `src` to chip `dst`, as (from, to) hops, in order."""
        self._check_chips(src, dst)
        adj = self.neighbours
        dist, todo = {src: 0}, deque([src])
        while todo:
            c = todo.popleft()
            for d in adj[c]:
                if d not in dist:
                    dist[d] = dist[c] + 1
                    todo.append(d)

        def back(c: int) -> list[list[tuple[int, int]]]:
            if c == src:
                return [[]]
            return [p + [(q, c)] for q in adj[c] if dist.get(q) == dist[c] - 1 for p in back(q)]

        return back(dst)

    def link_phase_cycles(self, transfers: list[LinkTransfer], spread: bool = False) -> int:
        """Cycles of one link phase moving `transfers` together: the cross-chip sync, the
        longest route's hop latencies, then the busier of the busiest link direction (its bytes
        over its lanes at the link rate, a direction each way; transfers sharing one add up)
        and the busiest tile port (the chip's exchange rate). No transfers between chips: no
        phase (a value handed on within a chip stays in its memory). With `spread`, a
        transfer's bytes are split evenly over all its shortest routes (as a collective's
        chunks can be); otherwise each takes `route`'s one."""
        transfers = [tr for tr in transfers if tr.src != tr.dst]
        if not transfers:
            return 0
        per_link: dict[tuple[int, int], int] = {}
        hops = 0
        for tr in transfers:
            paths = self.shortest_routes(tr.src, tr.dst) if spread else [self.route(tr.src, tr.dst, directed=True)]
            share = math.ceil(tr.nbytes / len(paths))
            for path in paths:
                hops = max(hops, len(path))
                for link in path:
                    per_link[link] = per_link.get(link, 0) + share
        link = max(math.ceil(b / (self.lanes * self.link_bytes_per_cycle)) for b in per_link.values())
        port = max(math.ceil(tr.tile_bytes / self.chip.rates["exchange_bytes_per_cycle"]) for tr in transfers)
        scheduled = max(tr.horizon for tr in transfers)
        return self.external_sync_cycles + hops * self.link_latency_cycles + max(link, port, scheduled)

    def all_reduce_cycles(self, nbytes: int, chips: list[int], tile_bytes: int = 0) -> int:
        """An all-reduce of `nbytes` on each of `chips`: the cheaper of its two schedules
        (`all_reduce_schedules`)."""
        return self.all_reduce_schedule(nbytes, chips, tile_bytes)[1]

    def all_reduce_schedule(self, nbytes: int, chips: list[int], tile_bytes: int = 0) -> tuple[str, int]:
        """(name, cycles) of the cheaper all-reduce schedule (the ring on a tie); ("", 0) for one chip."""
        schedules = self.all_reduce_schedules(nbytes, chips, tile_bytes)
        return min(schedules.items(), key=lambda kv: kv[1], default=("", 0))

    def all_reduce_schedules(self, nbytes: int, chips: list[int], tile_bytes: int = 0) -> dict[str, int]:
        """The cycles of each all-reduce schedule for `nbytes` on each of `chips` (none for one
        chip), a reduce-scatter then an all-gather of the value's n chunks either way:

        - `ring` (the ring in pipeline-chain order): 2(n - 1) link phases, each moving every
          member's 1/n chunk on. Over three chips or more, two rings run at once in opposite
          directions, each with half of every chunk, so each member sends through both of its
          ring links (one ring leaves every link's other direction idle: twice the bandwidth
          term of the lower bound); two chips already exchange both ways.
        - `direct`: 2 link phases, each member sending chunk j straight to member j (then the
          sum of chunk j back to every member), split over every shortest route: two syncs where
          the ring pays 2(n - 1), for more bytes on the links where members are not neighbours.
          The small values of a tensor-parallel layer are sync-bound and take it.

        `tile_bytes` is the most of the value any one tile holds: its port sends a 1/n of that
        each ring step, half each way, and (n - 1)/n of it in each direct phase."""
        n = len(chips)
        if n < 2:
            return {}
        order = sorted(chips, key=self.chain.index)
        chunk, tile_chunk = math.ceil(nbytes / n), math.ceil(tile_bytes / n)
        if n == 2:
            step = [LinkTransfer(order[i], order[1 - i], chunk, tile_chunk) for i in range(2)]
        else:
            half = math.ceil(chunk / 2)
            step = [LinkTransfer(order[i], order[(i + d) % n], half, tile_chunk) for i in range(n) for d in (1, -1)]
        direct = [LinkTransfer(a, b, chunk, (n - 1) * tile_chunk) for a in order for b in order if a != b]
        return {
            "ring": 2 * (n - 1) * self.link_phase_cycles(step),
            "direct": 2 * self.link_phase_cycles(direct, spread=True),
        }

    def all_reduce_lower_bound(self, nbytes: int, chips: list[int]) -> int:
        """Cycles any all-reduce of `nbytes` on each of `chips` needs: two synced rounds (a
        reduction and a broadcast) and, into each member, the (n - 1)/n of the value it lacks twice
        over, through all of its links at once."""
        n = len(chips)
        if n < 2:
            return 0
        degree = min(len(self.neighbours[c]) for c in chips)
        rate = degree * self.lanes * self.link_bytes_per_cycle
        return 2 * (self.external_sync_cycles + self.link_latency_cycles) + math.ceil(2 * (n - 1) * nbytes / n / rate)


def available_systems() -> list[str]:
    return sorted(p.stem for p in SYSTEM_DIR.glob("*.toml"))


@functools.cache
def load_system(name: str) -> System:
    """The system of that name, read once per process; raises TargetError naming the known ones."""
    path = SYSTEM_DIR / f"{name}.toml"
    if not name or "/" in name or not path.is_file():
        raise TargetError(f"unknown system '{name}' (known: {', '.join(available_systems())})")
    try:
        raw = tomllib.loads(path.read_text())
        s = System(
            name=raw["name"],
            description=raw["description"],
            chip=load_target(raw["chip"]),
            chips=int(raw["chips"]),
            topology=raw["topology"],
            lanes=int(raw["lanes"]),
            link_bytes_per_cycle=int(raw["link_bytes_per_cycle"]),
            link_latency_cycles=int(raw["link_latency_cycles"]),
            external_sync_cycles=int(raw["external_sync_cycles"]),
            host_bytes_per_cycle=int(raw["host_bytes_per_cycle"]),
        )
    except (KeyError, TypeError, ValueError, tomllib.TOMLDecodeError) as e:
        raise TargetError(f"malformed system file {path.name}: {e}") from None
    if s.name != name or s.chips < 2 or s.topology not in TOPOLOGIES or s.lanes < 1 or s.link_bytes_per_cycle < 1:
        raise TargetError(
            f"system file {path.name}: needs its own name, 2 or more chips, a topology of {', '.join(TOPOLOGIES)}, "
            "and positive lanes and link rate"
        )
    return s


def with_overrides(s: System, **fields: int) -> System:
    """`s` with some link figures replaced (a sensitivity sweep: `link_bytes_per_cycle`, ...)."""
    import dataclasses

    return dataclasses.replace(s, **fields)


__all__ = ["LinkTransfer", "System", "available_systems", "load_system", "with_overrides"]
