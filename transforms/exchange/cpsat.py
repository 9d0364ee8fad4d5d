"""CP-SAT for small exchange phases: non-preemptive schedules that prove or improve a heuristic.

One interval per member transfer (a multicast member is one interval shared by its sender and all
its receivers, which the preemptive scheduler cannot express); NoOverlap per send port and per
receive port; minimise the horizon, hinted with the best heuristic schedule. It runs only on
phases of at most `MAX_MEMBERS` members, single-threaded under a deterministic time limit, so the
same phase always gets the same answer. It is never the only path: the caller keeps the heuristic
schedule when CP-SAT finds nothing better.
"""

from __future__ import annotations

import numpy as np

from ipu.abi.transfers import D_TILE, MC, MCS, ROWS, S_TILE, WORDS, member_rows

MAX_MEMBERS = 600
DETERMINISTIC_SECONDS = 2.0


def schedule_cpsat(
    t: np.ndarray, tiles: int, lower_bound: int, upper: int, hint: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, int, bool] | None:
    """(member table, starts, horizon, proven optimal) of a non-preemptive schedule of `t` with
    horizon below `upper`, or None (too large, or none found in the limit). `hint`: start per
    member of a known schedule (member order of `member_rows`)."""
    mem = member_rows(t)
    dests = [r[D_TILE] + np.arange(r[MC]) * r[MCS] for r in mem]
    if not len(mem) or len(mem) > MAX_MEMBERS:
        return None
    from ortools.sat.python import cp_model  # about a second to import: only for a phase it solves

    dur = (mem[:, ROWS] * mem[:, WORDS]).astype(int)
    m = cp_model.CpModel()
    hi = int(upper) - 1
    if hi < lower_bound or (dur > hi).any():
        return None
    starts = [m.new_int_var(0, hi - int(d), f"s{i}") for i, d in enumerate(dur)]
    ivs = [m.new_fixed_size_interval_var(s, int(d), f"i{i}") for i, (s, d) in enumerate(zip(starts, dur, strict=True))]
    send: dict[int, list] = {}
    recv: dict[int, list] = {}
    for i, (src, ds) in enumerate(zip(mem[:, S_TILE], dests, strict=True)):
        send.setdefault(int(src), []).append(ivs[i])
        for d in ds:
            recv.setdefault(int(d), []).append(ivs[i])
    for group in (*send.values(), *recv.values()):
        if len(group) > 1:
            m.add_no_overlap(group)
    horizon = m.new_int_var(int(lower_bound), hi, "horizon")
    for s, d in zip(starts, dur, strict=True):
        m.add(horizon >= s + int(d))
    m.minimize(horizon)
    if hint is not None:
        for s, h in zip(starts, hint, strict=True):
            m.add_hint(s, int(h))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = DETERMINISTIC_SECONDS
    # CP-SAT's own Ctrl-C handler leaves SIGINT at SIG_DFL when the solve ends, so a later Ctrl-C
    # killed the tool outright (exit -2, temporary files left) instead of unwinding it.
    solver.parameters.catch_sigint_signal = False
    status = solver.solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    st = np.array([solver.value(s) for s in starts], np.int64)
    return mem, st, int(solver.value(horizon)), status == cp_model.OPTIMAL
