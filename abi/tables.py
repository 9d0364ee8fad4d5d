"""The column schemas of every integer table the compiler and the package carry, defined once.

A table is an int64 NumPy array [rows, len(schema)]; its columns are named here, with their
meaning, and the IR prints the names (`#table.transfers<[src_tile, ...] [0, 0, ...], ...>`).
Addresses are tile byte addresses (relative to a buffer at tilemap and exchange level, absolute
at tasm level and in the package); strides are in bytes unless named otherwise.

This module is a leaf: it imports nothing of ours, so dialects, transforms, codegen and the
runtime all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Schema:
    """A table kind: its `kind` (the IR attribute's name, `#table.<kind>`) and its column names."""

    kind: str
    columns: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.columns)

    def index(self, column: str) -> int:
        return self.columns.index(column)

    def empty(self) -> np.ndarray:
        return np.zeros((0, len(self)), np.int64)

    def rows(self, t: np.ndarray, what: str = "") -> np.ndarray:
        """`t` as an int64 [n, len(self)] table (an empty array of any shape is an empty table);
        ValueError naming `what` when its shape is not that."""
        t = np.asarray(t, np.int64)
        if t.size == 0:
            return t.reshape(0, len(self))
        if t.ndim != 2 or t.shape[1] != len(self):
            raise ValueError(f"{what or self.kind} table must be [n, {len(self)}], got {list(t.shape)}")
        return t

    def column(self, t: np.ndarray, name: str) -> np.ndarray:
        return t[:, self.index(name)]


# A binding slice family (a host-visible value's placement): for r in range(rows), m in range(tile_count):
#   logical elements [logical_offset + r*logical_stride, ... + row_elements)
#   <-> tile (tile + m*tile_step), bytes [address + r*tile_stride, ... + row_elements*esize)
SLICE = Schema(
    "slices",
    (
        "logical_offset",
        "logical_stride",
        "rows",
        "row_elements",
        "tile",
        "tile_count",
        "tile_step",
        "address",
        "tile_stride",
    ),
)

# A transfer family of one exchange phase. For p in range(par_count), c in range(mc_count):
#   source tile  s = src_tile + p*par_src_step,
#   destination  d = dst_tile + p*par_dst_step + c*mc_step,
#   for r in range(rows): row_words 32-bit words from
#       s:[src_address + p*par_src_offset_step + r*src_stride]
#    to d:[dst_address + p*par_dst_offset_step + r*dst_stride].
# Member p occupies its source's send port and every destination's receive port during cycles
# [start + p*par_time_step, ... + rows*row_words) of the phase (multicast: one send, many
# receives). A time step of 0 runs the members together; a source scattering to (or a
# destination gathering from) a progression of tiles steps by the transfer's length.
# `start` comes first, so a scheduled (phase) table is [start | move table].
TRANSFER = Schema(
    "transfers",
    (
        "start",
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
    ),
)

# A logical move (tilemap.move, before scheduling): the transfer family without `start`.
MOVE = Schema("transfers", TRANSFER.columns[1:])

# Per tile of an attention op's tile group, the rows its kernels start from: its first query row
# and the keys [key_begin, key_end) it attends to (`pad` keeps a row 16 bytes). Stored as f32.
# A link transfer's rows (a value crossing chips): at cycle `start` of the link phase, tile
# `src_tile` of the source chip starts sending `bytes` bytes from its memory offset `src_offset`
# (from the memory base) to offset `dst_offset` of tile `dst_tile` of the destination chip.
LINK = Schema("links", ("start", "src_tile", "src_offset", "dst_tile", "dst_offset", "bytes"))

ATTENTION_OFFSETS = Schema("offsets", ("query_row", "key_begin", "key_end", "pad"))

# Per tile of an embedding slice's tile group, the table rows [row_begin, row_end) its block holds
# (the indices it answers for). Stored as i32.
SLICE_ROWS = Schema("offsets", ("row_begin", "row_end"))

SCHEMAS: tuple[Schema, ...] = (SLICE, TRANSFER, MOVE, ATTENTION_OFFSETS, SLICE_ROWS)
