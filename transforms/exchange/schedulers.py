"""Exchange-phase scheduling: endpoint lower bound and a valid cycle schedule.

A transfer family occupies its source's send port and each destination's receive port for
`rows * row_words` cycles (one 32-bit word out and one in per tile per cycle, multicast
counted once at the sender). The lower bound is max over tiles of max(words sent, words
received); the greedy list scheduler places families longest-first at the earliest cycle all
their ports are free, so every schedule it returns obeys the port rules by construction.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from ipu.abi.exchange_rules import validate_schedule
from ipu.abi.transfers import (
    D_OFF,
    D_TILE,
    MC,
    PC,
    PTS,
    ROWS,
    S_OFF,
    S_TILE,
    WORDS,
    member_rows,
    move_member_tiles,
    port_words,
    tile_words,
    with_start,
)


def port_loads(t: np.ndarray, tiles: int, unicast: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(words sent, words received) per tile; a multicast member sends once (or, with
    `unicast`, once per destination)."""
    return port_words(with_start(t), tiles, unicast)


def endpoint_lower_bound(t: np.ndarray, tiles: int) -> int:
    """max over tiles of max(words sent, words received)."""
    if not len(t):
        return 0
    sent, recv = port_loads(t, tiles)
    return int(max(sent.max(), recv.max()))


@dataclass(frozen=True)
class Schedule:
    starts: np.ndarray
    lower_bound: int
    horizon: int
    scheduler: str


def _greedy(t: np.ndarray, tiles: int, order: np.ndarray) -> tuple[np.ndarray, int]:
    """List scheduling in `order` at family granularity (non-preemptive). Member p of a family
    starts `p * par_time_step` after the family; every port is reserved from the family's start
    to its last use, so the schedule obeys the port rules by construction."""
    from ipu.transforms.exchange.greedy import list_schedule  # numba: load when needed

    return list_schedule(t, tiles, order)


def split_members(t: np.ndarray) -> np.ndarray:
    """Each simultaneous family as single-member families (finer, so gaps can be filled); serial
    and one-member families stay as they are."""
    split = (t[:, PC] > 1) & (t[:, PTS] == 0)
    fam = np.repeat(np.arange(len(t)), t[:, PC])
    first = np.r_[True, fam[1:] != fam[:-1]] if len(fam) else np.zeros(0, bool)
    keep = split[fam] | first
    return np.where(split[fam][keep, None], member_rows(t)[keep], t[fam[keep]])


def _longest_first(t: np.ndarray) -> np.ndarray:
    """Families by decreasing duration (first member's start to last member's end), then source."""
    total = t[:, ROWS] * t[:, WORDS] + (t[:, PC] - 1) * t[:, PTS]
    return np.lexsort((t[:, S_TILE], -total))


def _orders(t: np.ndarray, tiles: int) -> dict[str, np.ndarray]:
    words = t[:, ROWS] * t[:, WORDS]
    total = words + (t[:, PC] - 1) * t[:, PTS]
    src, dst, member_words, sends = move_member_tiles(t)
    sent, recv = tile_words(src, dst, member_words, sends, tiles)
    cnt = t[:, PC] * t[:, MC]
    load = np.maximum.reduceat(np.maximum(sent[src], recv[dst]), np.cumsum(cnt) - cnt)
    out = {
        "longest-first": _longest_first(t),
        "busiest-ports-first": np.lexsort((t[:, S_TILE], -total, -load)),
    }
    # structured phases (reduce-scatters, shifts) are unions of permutations: families whose
    # destination is the same cyclic shift of their source form one conflict-free round
    shift = t[:, D_TILE] - t[:, S_TILE]
    for m in (2, 3, 4, 8, 16):
        out[f"shift-mod-{m}"] = np.lexsort((t[:, S_TILE], -total, shift % m))
    return out


class PhaseCache:
    """Schedules of the phases of one compilation: a phase equal to an earlier one up to the
    addresses of its buffers reuses that schedule, relocated, after `validate_schedule` re-checks
    it against the new phase (scheduler name prefixed `reused-`). One cache per pass run keeps
    the output independent of what else the process compiled."""

    def __init__(self, entries: int = 256, cpsat: bool = True) -> None:
        self.entries = entries
        self.cpsat = cpsat
        self._items: OrderedDict[bytes, tuple[np.ndarray, np.ndarray, Schedule]] = OrderedDict()

    @staticmethod
    def _key(t: np.ndarray, tiles: int, effort: int) -> tuple[bytes, np.ndarray]:
        base = np.array([t[:, S_OFF].min(), t[:, D_OFF].min()], np.int64)
        rel = t.astype(np.int64)
        rel[:, S_OFF] -= base[0]
        rel[:, D_OFF] -= base[1]
        return np.array([tiles, effort], np.int64).tobytes() + rel.tobytes(), base

    def schedule(self, t: np.ndarray, tiles: int, effort: int = 2) -> tuple[np.ndarray, Schedule]:
        if not len(t):
            return schedule_phase(t, tiles, effort=effort, cpsat=self.cpsat)
        key, base = self._key(t, tiles, effort)
        hit = self._items.get(key)
        if hit is not None:
            table, old_base, s = hit
            moved = table.copy()
            moved[:, S_OFF] += base[0] - old_base[0]
            moved[:, D_OFF] += base[1] - old_base[1]
            sched17 = with_start(moved, s.starts)
            validate_schedule(t, sched17, tiles, trust_logical=True, max_rows=1 << 20)
            self._items.move_to_end(key)
            name = s.scheduler if s.scheduler.startswith("reused-") else f"reused-{s.scheduler}"
            return moved, replace(s, scheduler=name)
        table, s = schedule_phase(t, tiles, effort=effort, cpsat=self.cpsat)
        self._items[key] = (table, base, s)
        if len(self._items) > self.entries:
            self._items.popitem(last=False)
        return table, s


def schedule_phase(
    t: np.ndarray, tiles: int, max_rows: int = 4096, effort: int = 2, cpsat: bool = True
) -> tuple[np.ndarray, Schedule]:
    """The heuristic schedule of `_heuristic_schedule`; at full effort (and with `cpsat`) a small
    phase whose schedule is above its bound or preempts transfers is handed to CP-SAT, which may
    prove or improve it (a shorter horizon, or the same bound without preemption)."""
    table, s = _heuristic_schedule(t, tiles, max_rows, effort)
    if effort <= 1 or not cpsat or not len(t):
        return table, s
    runs = int((table[:, PC] * table[:, MC]).sum())
    logical = int((t[:, PC] * t[:, MC]).sum())
    if s.horizon == s.lower_bound and runs <= logical:
        return table, s
    from ipu.transforms.exchange.cpsat import MAX_MEMBERS, schedule_cpsat  # ortools: load when needed

    if int(t[:, PC].sum()) > MAX_MEMBERS:
        return table, s
    hint = None
    if table.shape == t.shape and np.array_equal(table, t):  # a list schedule of the logical families
        hint = np.repeat(s.starts, t[:, PC]) + _member_index(t) * np.repeat(t[:, PTS], t[:, PC])
    upper = s.horizon if s.horizon > s.lower_bound else s.lower_bound + 1
    found = schedule_cpsat(t, tiles, s.lower_bound, upper, hint)
    if found is None:
        return table, s
    mem, starts, horizon, optimal = found
    from ipu.transforms.exchange.exact import fold

    rows, starts = fold(mem, starts)
    name = "cp-sat-optimal" if optimal else "cp-sat"
    return rows, Schedule(starts, s.lower_bound, horizon, name)


def _member_index(t: np.ndarray) -> np.ndarray:
    pc = t[:, PC]
    return np.arange(int(pc.sum())) - np.repeat(np.cumsum(pc) - pc, pc)


def _heuristic_schedule(t: np.ndarray, tiles: int, max_rows: int, effort: int) -> tuple[np.ndarray, Schedule]:
    """A schedule of one phase and the table it schedules: the first list schedule that reaches
    the bound (longest-first, then, for tables of at most 2000 families, orders that favour
    structured rounds, with families whole or split into members when the table stays under
    `max_rows` rows); else, for a unicast phase of tile-disjoint complete bipartite blocks, the
    rotation schedule (`exchange.rotation`: at the bound, about one row per logical family); else
    the exact preemptive schedule, which reaches the bound for a unicast
    phase and for a multicast phase whose destination sets are disjoint or identical (receiver
    groups), and the bound of its unicast expansion for other multicast phases, if that beats the
    best list schedule. `effort` 1 stops after the longest-first list schedule (quick what-if
    modelling; `attainable_horizon` says what full effort would reach)."""
    lb = endpoint_lower_bound(t, tiles)
    if not len(t):
        return t, Schedule(np.zeros(0, np.int64), lb, 0, "empty")
    if effort > 1 and len(t) > 2000 and not (t[:, MC] > 1).any():
        # a large unicast table: the exact scheduler reaches the bound, list scheduling its
        # families one by one in Python would cost more than that
        exact = _exact(t, tiles, lb, lb)
        if exact is not None:
            return exact
    first = schedule_greedy(t, tiles, lb)
    if effort <= 1 or first.horizon == lb:
        return t, first
    if (t[:, MC] > 1).any():  # multicast to disjoint receiver groups: exact, multicast kept
        grouped = _exact(t, tiles, lb, lb, "exact-preemptive-grouped")
        if grouped is not None:
            return grouped
    tables = {"": t}
    if int(t[:, PC].sum()) <= max_rows and (t[:, PC] > 1).any() and len(t) <= 1000:
        tables["split-"] = split_members(t)
    best: tuple[int, int, str, np.ndarray, np.ndarray] | None = None
    for prefix, table in tables.items():
        orders = _orders(table, tiles)
        if len(table) > 2000:  # large phases: the two general orders only (compile time)
            orders = {k: orders[k] for k in ("longest-first", "busiest-ports-first")}
        for name, order in orders.items():
            starts, horizon = _greedy(table, tiles, order)
            key = (horizon, len(table))
            if best is None or key < best[:2]:
                best = (horizon, len(table), f"greedy-{prefix}{name}", table, starts)
            if horizon == lb:
                return table, Schedule(starts, lb, horizon, f"greedy-{prefix}{name}")
    assert best is not None
    horizon, _, name, table, starts = best
    rotated = _rotation(t, tiles, lb)
    if rotated is not None:
        return rotated
    return _exact_if_better(t, tiles, table, Schedule(starts, lb, horizon, name))


def _rotation(t: np.ndarray, tiles: int, lower_bound: int) -> tuple[np.ndarray, Schedule] | None:
    """The rotation schedule at the bound of a unicast phase of complete bipartite blocks (serial
    scatters and gathers between tile blocks), about one table row per logical family, where list
    schedules stagger whole families past the bound and the exact schedule fragments them."""
    from ipu.transforms.exchange.rotation import schedule_rotation  # numba: load when needed

    got = schedule_rotation(t, tiles, lower_bound)
    if got is None:
        return None
    rows, starts = got
    return rows, Schedule(starts, lower_bound, lower_bound, "rotation")


def attainable_horizon(t: np.ndarray, tiles: int, horizon: int, lower_bound: int) -> int:
    """The horizon a full-effort schedule of table `t` reaches, given a list schedule's: the lower
    bound for a unicast phase or one multicast to receiver groups, at most the unicast expansion's
    bound for another multicast one (ignoring the row budget). Used to rank finalists from quick
    list schedules without building exact ones."""
    if horizon == lower_bound or not len(t):
        return horizon
    if not (t[:, MC] > 1).any():
        return lower_bound
    from ipu.transforms.exchange.exact import receiver_groups

    if receiver_groups(t, tiles) is not None:
        return lower_bound
    return min(horizon, unicast_bound(t, tiles))


def unicast_bound(t: np.ndarray, tiles: int) -> int:
    """The endpoint lower bound of the table with every multicast sent once per destination."""
    if not len(t):
        return 0
    sent, recv = port_loads(t, tiles, unicast=True)
    return int(max(sent.max(), recv.max()))


EXACT_ROW_BUDGET = 8192  # rows an exact schedule may always use ...
EXACT_ROWS_PER_FAMILY = 16  # ... or this many per logical family, whichever is more


def _exact(
    t: np.ndarray, tiles: int, lower_bound: int, horizon: int, kind: str = "exact-preemptive"
) -> tuple[np.ndarray, Schedule] | None:
    """The exact schedule within `horizon`, unless it failed or needs more table rows than the
    budget: the IR and the package keep one row per scheduled run, so a schedule that fragments
    a compact table (e.g. scatters of serial families that fold into no arithmetic progression)
    is refused and the list schedule kept."""
    from ipu.transforms.exchange.exact import schedule_exact, schedule_exact_grouped  # numba: load when needed

    exact = (schedule_exact_grouped if kind.endswith("grouped") else schedule_exact)(t, tiles, horizon)
    if exact is None:
        return None
    rows, starts = exact
    if len(rows) > max(EXACT_ROW_BUDGET, EXACT_ROWS_PER_FAMILY * len(t)):
        return None
    return rows, Schedule(starts, lower_bound, horizon, kind)


def _exact_if_better(t: np.ndarray, tiles: int, table: np.ndarray, s: Schedule) -> tuple[np.ndarray, Schedule]:
    """Replace a list schedule above the bound by the exact preemptive one: at the bound for a
    unicast phase; for a multicast phase at the bound of its unicast expansion when that is
    shorter than the list schedule."""
    if s.horizon == s.lower_bound:
        return table, s
    multicast = bool((t[:, MC] > 1).any())
    horizon = unicast_bound(t, tiles) if multicast else s.lower_bound
    if horizon >= s.horizon:
        return table, s
    kind = "exact-preemptive-unicast-expanded" if multicast else "exact-preemptive"
    return _exact(t, tiles, s.lower_bound, horizon, kind) or (table, s)


def schedule_greedy(t: np.ndarray, tiles: int, lower_bound: int | None = None) -> Schedule:
    """Longest-first list schedule of the table as given (families kept whole); `lower_bound`:
    the table's endpoint bound, when the caller has it."""
    lb = endpoint_lower_bound(t, tiles) if lower_bound is None else lower_bound
    if not len(t):
        return Schedule(np.zeros(0, np.int64), lb, 0, "greedy-longest-first")
    starts, horizon = _greedy(t, tiles, _longest_first(t))
    return Schedule(starts, lb, horizon, "greedy-longest-first")
