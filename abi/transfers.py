"""Transfer-family expansion: who sends which words to whom, and when, from a transfer table.

A phase table (schema `TRANSFER`) is `start` followed by the move columns (schema `MOVE`). Row i
is a transfer family; member (p, c), p < par_count, c < mc_count, copies `rows` rows of
`row_words` 32-bit words from tile src_tile + p*par_src_step at src_address +
p*par_src_offset_step (row stride src_stride) to tile dst_tile + p*par_dst_step + c*mc_step at
dst_address + p*par_dst_offset_step (row stride dst_stride), starting at cycle start +
p*par_time_step. A member holds its source's send port (once per p, however many destinations)
and each destination's receive port for rows*row_words consecutive cycles.

The scheduler, the schedule checker, storage placement, the emulator and the summaries share
these expansions. Everything is vectorized with numpy: a phase may hold ~130k members and ~2M rows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ipu.abi.tables import MOVE, TRANSFER

# column indices of a move table (MOVE); a phase table's are one more (`start` is column 0)
S_TILE, S_OFF, S_STR, D_TILE, D_OFF, D_STR, ROWS, WORDS, PC, PSS, PDS, MC, MCS, PSO, PDO, PTS = (
    MOVE.index(c)
    for c in (
        "src_tile",
        "src_address",
        "src_stride",
        "dst_tile",
        "dst_address",
        "dst_stride",
        "rows",
        "row_words",
        "par_count",
        "par_src_step",
        "par_dst_step",
        "mc_count",
        "mc_step",
        "par_src_offset_step",
        "par_dst_offset_step",
        "par_time_step",
    )
)
START = TRANSFER.index("start")
assert START == 0 and TRANSFER.columns[1:] == MOVE.columns, "a phase table is [start | move table]"


def with_start(t: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
    """A move table as a phase table: `starts` (zero by default) as the `start` column in front."""
    t = MOVE.rows(t, "move")
    s = np.zeros(len(t), np.int64) if starts is None else np.asarray(starts, np.int64)
    return np.concatenate([s[:, None], t], axis=1)


def split_start(t17: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, move table) of a phase table (views, not copies)."""
    t = TRANSFER.rows(t17, "phase")
    return t[:, START], t[:, START + 1 :]


def phase_end(t17: np.ndarray) -> np.ndarray:
    """The cycle after each family's last member ends."""
    s, m = split_start(t17)
    return s + m[:, ROWS] * m[:, WORDS] + (m[:, PC] - 1) * m[:, PTS]


@dataclass(frozen=True)
class Members:
    """One entry per (family, p, c): a member's tiles, base addresses and busy cycles [start, end)."""

    fam: np.ndarray  # table row of the family
    p: np.ndarray  # parallel index
    c: np.ndarray  # multicast index
    src: np.ndarray
    dst: np.ndarray
    src_addr: np.ndarray  # byte address of row 0
    dst_addr: np.ndarray
    src_stride: np.ndarray
    dst_stride: np.ndarray
    rows: np.ndarray
    row_words: np.ndarray
    start: np.ndarray
    end: np.ndarray
    sender: np.ndarray  # bool: c == 0, the one member per (family, p) that occupies the send port

    def __len__(self) -> int:
        return len(self.fam)


@dataclass(frozen=True)
class Rows:
    """One entry per row of every member: row_words words from (src, src_addr) to (dst, dst_addr)."""

    member: np.ndarray  # index into Members
    fam: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    src_addr: np.ndarray
    dst_addr: np.ndarray
    words: np.ndarray

    def __len__(self) -> int:
        return len(self.fam)


def member_index(pc: np.ndarray, mc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(family, p, c) of every member of families with `pc` x `mc` members each."""
    cnt = pc * mc
    fam = np.repeat(np.arange(len(cnt)), cnt)
    local = np.arange(len(fam)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    if not len(mc) or (mc == 1).all():  # no multicast (most phases): no division
        return fam, local, np.zeros(len(fam), np.int64)
    p, c = np.divmod(local, mc[fam])
    return fam, p, c


def _columns(t: np.ndarray, counts: np.ndarray) -> Callable[[int], np.ndarray]:
    """Column j of `t` with row i repeated `counts[i]` times (each family's value for each of its
    members, in member order), as a function of j: a repeat of one contiguous column, 1.8x a
    gather by member family and several times gathering whole rows and reading strided columns."""
    cols = np.ascontiguousarray(t.T)
    return lambda j: np.repeat(cols[j], counts)


def member_tiles(table17: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(source tile, destination tile, words, sends) of every member of a phase table: the part
    of `expand_members` a load model needs, at a fraction of its cost (`sends`: the one member
    per (family, p) that occupies the send port). Read-only arrays, memoized on the move columns'
    bytes: a move is priced, screened, scheduled and checked in turn (transformer_block expanded
    47 tables 324 times, 140 of them right after the same table), and its bytes hash in a
    fraction of an expansion's time."""
    return move_member_tiles(split_start(table17)[1])


def move_member_tiles(t16: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`member_tiles` of a move table (no `start` column to add, only to drop it again)."""
    return _member_tiles(np.ascontiguousarray(t16, np.int64).tobytes())


@functools.lru_cache(maxsize=4)
def _member_tiles(raw: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    t = np.frombuffer(raw, np.int64).reshape(-1, len(MOVE))
    fam, p, c = member_index(t[:, PC], t[:, MC])
    col = _columns(t, t[:, PC] * t[:, MC])
    src, dst = col(S_TILE) + p * col(PSS), col(D_TILE) + p * col(PDS) + c * col(MCS)
    out = (src, dst, (t[:, ROWS] * t[:, WORDS])[fam], c == 0)
    for a in out:
        a.setflags(write=False)
    return out


def tile_words(
    src: np.ndarray, dst: np.ndarray, words: np.ndarray, sends: np.ndarray, tiles: int
) -> tuple[np.ndarray, np.ndarray]:
    """(words sent, words received) per tile of members given by `member_tiles`."""
    sent = np.bincount(src[sends], weights=words[sends], minlength=tiles)
    recv = np.bincount(dst, weights=words, minlength=tiles)
    return sent.astype(np.int64), recv.astype(np.int64)


def port_words(table17: np.ndarray, tiles: int, unicast: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(words sent, words received) per tile; a multicast member sends once (or, with
    `unicast`, once per destination)."""
    src, dst, words, sends = member_tiles(table17)
    return tile_words(src, dst, words, np.ones(len(src), bool) if unicast else sends, tiles)


def expand_members(table17: np.ndarray) -> Members:
    """Every (family, p, c) member of a phase table (counts must be positive)."""
    s, t = split_start(table17)
    fam, p, c = member_index(t[:, PC], t[:, MC])
    col = _columns(t, t[:, PC] * t[:, MC])
    start = s[fam] + p * col(PTS)
    return Members(
        fam=fam,
        p=p,
        c=c,
        src=col(S_TILE) + p * col(PSS),
        dst=col(D_TILE) + p * col(PDS) + c * col(MCS),
        src_addr=col(S_OFF) + p * col(PSO),
        dst_addr=col(D_OFF) + p * col(PDO),
        src_stride=col(S_STR),
        dst_stride=col(D_STR),
        rows=col(ROWS),
        row_words=col(WORDS),
        start=start,
        end=start + (t[:, ROWS] * t[:, WORDS])[fam],
        sender=c == 0,
    )


def expand_rows(m: Members, coalesce: bool = False) -> Rows:
    """Every row of every member, in member order. `coalesce`: a member whose rows are contiguous
    on both sides becomes one row of all its words (the same bytes; far fewer rows to sort)."""
    rows, words = m.rows, m.row_words
    if coalesce:
        whole = (m.src_stride == 4 * words) & (m.dst_stride == 4 * words)
        rows, words = np.where(whole, 1, rows), np.where(whole, rows * words, words)
    member = np.repeat(np.arange(len(m)), rows)
    r = np.arange(len(member)) - np.repeat(np.cumsum(rows) - rows, rows)
    return Rows(
        member=member,
        fam=m.fam[member],
        src=m.src[member],
        dst=m.dst[member],
        src_addr=m.src_addr[member] + r * m.src_stride[member],
        dst_addr=m.dst_addr[member] + r * m.dst_stride[member],
        words=words[member],
    )


def member_rows(t: np.ndarray) -> np.ndarray:
    """Every member of a move table as a single-member row that keeps its multicast
    (family-major, member-minor)."""
    pc = t[:, PC]
    fam = np.repeat(np.arange(len(t)), pc)
    p = np.arange(int(pc.sum())) - np.repeat(np.cumsum(pc) - pc, pc)
    out = t[fam].copy()
    out[:, S_TILE] += p * t[fam, PSS]
    out[:, D_TILE] += p * t[fam, PDS]
    out[:, S_OFF] += p * t[fam, PSO]
    out[:, D_OFF] += p * t[fam, PDO]
    out[:, PC], out[:, PSS], out[:, PDS], out[:, PSO], out[:, PDO], out[:, PTS] = 1, 1, 1, 0, 0, 0
    return out


def unicast_members(t: np.ndarray) -> np.ndarray:
    """Every member of a move table as its own single-member unicast row: a multicast member
    becomes one row per destination."""
    mem = member_rows(t)
    mc = mem[:, MC]
    out = np.repeat(mem, mc, axis=0)
    out[:, D_TILE] += (np.arange(int(mc.sum())) - np.repeat(np.cumsum(mc) - mc, mc)) * out[:, MCS]
    out[:, MC], out[:, MCS] = 1, 1
    return out
