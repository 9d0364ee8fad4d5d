"""The attributes, types and checks several levels share, defined below every dialect: a value's
layout over tiles (`#plan.layout`, written by the planner and read down to the tasm level), a
weight's seeded initializer (`#graph.gaussian`, from the graph level down), the per-tile buffer
type (`!tilemap.buffer`, of the tilemap, exchange and tasm levels) and the checks of host
streams, table initializers and transfer tables their ops share. The dialects register them
under their names (plan, graph, tilemap); every other level imports them from here, never from a
higher dialect.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, FloatAttr, IntAttr, StringAttr, TensorType, f64
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import BaseAttr, IRDLOperation, irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ipu.abi.transfers import (
    D_OFF,
    D_STR,
    D_TILE,
    MC,
    MCS,
    PC,
    PDO,
    PDS,
    PSO,
    PSS,
    PTS,
    ROWS,
    S_OFF,
    S_STR,
    S_TILE,
    WORDS,
)
from ipu.dialects.layout import Layout
from ipu.dialects.repeat import RepeatBase
from ipu.dialects.table import OffsetsAttr

MEMORY_CLASSES = ("standard", "interleaved")


def parse_ints(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer())


def format_ints(xs: Sequence[int]) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """Tile grid, per-axis split, partial-sum dimension, first tile, alignment, memory class."""

    name = "plan.layout"
    grid: ArrayAttr[IntAttr]
    split: ArrayAttr[ArrayAttr[IntAttr]]
    partial: IntAttr
    first: IntAttr
    align: ArrayAttr[IntAttr]
    memory: StringAttr

    def __init__(
        self,
        grid: Sequence[int],
        split: Sequence[Sequence[int]],
        partial: int = -1,
        first: int = 0,
        align: Sequence[int] = (),
        memory: str = "standard",
    ):
        super().__init__(
            ArrayAttr(IntAttr(g) for g in grid),
            ArrayAttr(ArrayAttr(IntAttr(d) for d in s) for s in split),
            IntAttr(partial),
            IntAttr(first),
            ArrayAttr(IntAttr(a) for a in align),
            StringAttr(memory),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        fields: dict[str, object] = {"partial": -1, "first": 0, "align": [], "memory": "standard"}
        parser.parse_punctuation("<")
        while True:
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            if key in ("grid", "align"):
                fields[key] = parse_ints(parser)
            elif key == "split":
                fields[key] = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parse_ints(parser))
            elif key in ("partial", "first"):
                fields[key] = parser.parse_integer()
            elif key == "memory":
                fields[key] = parser.parse_identifier()
            else:
                parser.raise_error(f"unknown plan.layout field '{key}'")
            if parser.parse_optional_punctuation(">"):
                break
            parser.parse_punctuation(",")
        if "grid" not in fields or "split" not in fields:
            parser.raise_error("plan.layout needs grid and split")
        a = LayoutAttr(**fields)  # type: ignore[arg-type]
        return a.parameters

    def print_parameters(self, printer: Printer) -> None:
        s = (
            f"<grid = {format_ints(self.grid_dims)}, split = ["
            + ", ".join(format_ints(x) for x in self.split_dims)
            + "]"
        )
        if self.partial.data >= 0:
            s += f", partial = {self.partial.data}"
        if self.first.data:
            s += f", first = {self.first.data}"
        if self.align.data:
            s += f", align = {format_ints([a.data for a in self.align.data])}"
        printer.print_string(s + f", memory = {self.memory.data}>")

    @property
    def grid_dims(self) -> tuple[int, ...]:
        return tuple(g.data for g in self.grid.data)

    @property
    def split_dims(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(d.data for d in s.data) for s in self.split.data)

    def verify(self) -> None:
        if self.memory.data not in MEMORY_CLASSES:
            raise VerifyException(f"plan.layout: memory must be one of {MEMORY_CLASSES}")
        try:
            Layout(
                (1,) * len(self.split.data),
                self.grid_dims,
                self.split_dims,
                self.partial.data,
                self.first.data,
            )
        except ValueError as e:
            raise VerifyException(f"plan.layout: {e}") from None

    def layout(self, shape: Sequence[int]) -> Layout:
        """The layout of a tensor of `shape`, memoized on this (immutable) attribute: the planner
        asks each value's type for it many times per plan."""
        memo = self.__dict__.get("_layouts")
        if memo is None:
            memo = {}
            object.__setattr__(self, "_layouts", memo)
        key = tuple(shape)
        lay = memo.get(key)
        if lay is None:
            lay = memo[key] = Layout(
                key,
                self.grid_dims,
                self.split_dims,
                self.partial.data,
                self.first.data,
                tuple(a.data for a in self.align.data),
            )
        return lay


@irdl_attr_definition
class GaussianAttr(ParametrizedAttribute):
    """`#graph.gaussian<seed = 1, std = 0.02>`: N(0, std^2) samples from a seeded generator."""

    name = "graph.gaussian"
    seed: IntAttr
    std: FloatAttr

    def __init__(self, seed: int, std: float):
        super().__init__(IntAttr(seed), FloatAttr(std, f64))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        parser.parse_keyword("seed")
        parser.parse_punctuation("=")
        seed = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(",")
        parser.parse_keyword("std")
        parser.parse_punctuation("=")
        std = parser.parse_float()
        parser.parse_punctuation(">")
        return (IntAttr(seed), FloatAttr(std, f64))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<seed = {self.seed.data}, std = {self.std.value.data}>")

    def verify(self) -> None:
        if not math.isfinite(self.std.value.data) or self.std.value.data < 0:
            raise VerifyException(f"graph.gaussian: std must be finite and non-negative, got {self.std.value.data}")
        if not 0 <= self.seed.data < 1 << 64:
            raise VerifyException(f"graph.gaussian: seed must be between 0 and 2^64 - 1, got {self.seed.data}")

    def materialize(self, shape: Sequence[int], dtype: type) -> np.ndarray:
        """The initializer's values: float32 samples, rounded to the storage dtype (taken from
        `prefetched_gaussians` when it made them: the same values)."""
        key = (self.seed.data, self.std.value.data, tuple(shape), np.dtype(dtype).str)
        ahead = _PREFETCHED.get()
        made = ahead.pop(key, None) if ahead is not None else None
        if made is not None and not made.cancelled():
            return made.result()
        return _gaussian(*key)


def _gaussian(seed: int, std: float, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape, dtype=np.float32)
    v *= np.float32(std)  # in place: the same float32 products, no second array
    return v.astype(dtype, copy=False)


_PREFETCHED: ContextVar[dict[tuple, Future[np.ndarray]] | None] = ContextVar("ipu_prefetched_gaussians", default=None)


PREFETCH_BYTES = 1 << 31
"""At most this many bytes of weights are drawn ahead: more than any one chip holds (mk2: 0.94 GB),
so a model too large to fit is refused before its weights are drawn, as without the prefetch."""


@contextmanager
def prefetched_gaussians(wanted: Iterable[tuple[GaussianAttr, Sequence[int], type]]) -> Iterator[None]:
    """Within the block, sample these (initializer, shape, storage dtype) on a background thread
    while the caller goes on (NumPy's generator releases the GIL: a compile plans while its seeded
    weights are drawn), in order while they total `PREFETCH_BYTES` at most;
    `GaussianAttr.materialize` takes each once. Left over ones are dropped."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="ipu-gaussians")
    ahead: dict[tuple, Future[np.ndarray]] = {}
    room = PREFETCH_BYTES
    for attr, shape, dtype in wanted:
        key = (attr.seed.data, attr.std.value.data, tuple(shape), np.dtype(dtype).str)
        size = math.prod(shape) * np.dtype(dtype).itemsize
        if key in ahead or size > room:
            continue
        room -= size
        ahead[key] = pool.submit(_gaussian, *key)
    token = _PREFETCHED.set(ahead)
    try:
        yield
    finally:
        _PREFETCHED.reset(token)
        for f in ahead.values():
            f.cancel()
        pool.shutdown(wait=False)


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """One equal-shaped block per tile of `tiles = [first, count]`."""

    name = "tilemap.buffer"
    block: ArrayAttr[IntAttr]
    element_type: Attribute
    first: IntAttr
    count: IntAttr
    memory: StringAttr

    def __init__(self, block: Sequence[int], element_type: Attribute, first: int, count: int, memory: str):
        super().__init__(
            ArrayAttr(IntAttr(b) for b in block),
            element_type,
            IntAttr(first),
            IntAttr(count),
            StringAttr(memory),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        shape, el = parser.parse_ranked_shape()
        parser.parse_punctuation(",")
        parser.parse_keyword("tiles")
        parser.parse_punctuation("=")
        first, count = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        parser.parse_punctuation(",")
        parser.parse_keyword("memory")
        parser.parse_punctuation("=")
        mem = parser.parse_identifier()
        parser.parse_punctuation(">")
        return BufferType(shape, el, first, count, mem).parameters

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + "".join(f"{b.data}x" for b in self.block.data))
        printer.print_attribute(self.element_type)
        printer.print_string(f", tiles = [{self.first.data}, {self.count.data}], memory = {self.memory.data}>")

    def verify(self) -> None:
        if self.count.data <= 0 or self.first.data < 0:
            raise VerifyException("tilemap.buffer: tile range must be non-empty")
        if self.memory.data not in ("standard", "interleaved"):
            raise VerifyException("tilemap.buffer: memory must be standard or interleaved")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(b.data for b in self.block.data)

    @property
    def esize(self) -> int:
        return self.element_type.bitwidth // 8  # type: ignore[attr-defined]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.esize


AnyBuffer = BaseAttr(BufferType)


def verify_host_shape(op: IRDLOperation, host_shape: DenseArrayBase | None, tensor: TensorType) -> None:
    """A stream's declared host shape (a scalar carried as [1]) holds the tensor's elements."""
    if host_shape is None:
        return
    shape = tuple(host_shape.get_values())
    if any(d < 0 for d in shape) or int(np.prod(shape)) != int(np.prod(tensor.get_shape())):
        raise VerifyException(
            f"{op.name}: host shape {list(shape)} does not hold the {list(tensor.get_shape())} tensor's elements"
        )


def verify_host_layout(
    op: IRDLOperation,
    host_perm: DenseArrayBase | None,
    host_pads: DenseArrayBase | None,
    host_shape: DenseArrayBase | None,
    tensor: TensorType,
) -> None:
    """An input the host rearranges: the device tensor is the host array's axes in `host_perm`
    order with `host_pads` zeros around it (each axis's low pads, then the high ones); a
    permutation of the tensor's axes, pads inside its extent, and no host shape besides."""
    shape = tuple(tensor.get_shape())
    rank = len(shape)
    if host_perm is not None and sorted(host_perm.get_values()) != list(range(rank)):
        raise VerifyException(
            f"{op.name}: host permutation {list(host_perm.get_values())} is not a permutation of {rank} axes"
        )
    if host_pads is not None:
        pads = tuple(host_pads.get_values())
        if (
            len(pads) != 2 * rank
            or min(pads, default=0) < 0
            or any(pads[i] + pads[rank + i] >= d for i, d in enumerate(shape))
        ):
            raise VerifyException(f"{op.name}: host pads {list(pads)} are not low and high pads inside {list(shape)}")
    if host_shape is not None and (host_perm is not None or host_pads is not None):
        raise VerifyException(f"{op.name}: a host rearrangement and a host shape together")


def verify_table_init(op: IRDLOperation, init: Attribute, tensor: TensorType) -> None:
    """A table initializer has the tensor's shape (rows x columns)."""
    if isinstance(init, OffsetsAttr) and (len(init), len(init.columns)) != tuple(tensor.get_shape()):
        raise VerifyException(
            f"{op.name}: the {len(init)}x{len(init.columns)} table does not fill tensor {list(tensor.get_shape())}"
        )


def verify_zero_span(op: IRDLOperation) -> None:
    """`zero_from` only with `zero_fill`, inside the destination."""
    if op.zero_from is None:
        return
    n = math.prod(op.result.type.shape)
    if op.zero_fill is None or not 0 < op.zero_from.value.data < n:
        raise VerifyException(f"{op.name}: zero_from needs zero_fill and lies in (0, {n}) (the destination's elements)")


def trip_reach(op: IRDLOperation) -> int:
    """Bytes past its trip-0 source a move or phase with a `trip_stride` reads on its last trip:
    (trips - 1) x stride, where it sits directly in a repeat of `trips` (0 without a stride)."""
    if op.trip_stride is None:
        return 0
    stride, loop = op.trip_stride.value.data, op.parent_op()
    if not isinstance(loop, RepeatBase):
        raise VerifyException(f"{op.name}: a trip_stride reads by the loop's trip: it must sit directly in a repeat")
    if stride <= 0 or stride % 4:
        raise VerifyException(f"{op.name}: trip_stride {stride} is not a positive whole number of 32-bit words")
    return (loop.count.value.data - 1) * stride


def verify_transfers(
    op: IRDLOperation, t: np.ndarray, src: BufferType, dst: BufferType, relative: bool = True, reach: int = 0
) -> None:
    """Count, tile-range and (for `relative` addresses) buffer-bounds checks of a move table,
    shared by moves and phases; the source is read up to `reach` bytes further on a later trip
    (`trip_reach`)."""
    if not len(t):
        return
    s_tile, s_off, s_str, d_tile, d_off, d_str, rows, words, pc, pss, pds, mc, mcs, pso, pdo, pts = (
        t[:, i] for i in (S_TILE, S_OFF, S_STR, D_TILE, D_OFF, D_STR, ROWS, WORDS, PC, PSS, PDS, MC, MCS, PSO, PDO, PTS)
    )
    if (rows <= 0).any() or (words <= 0).any() or (pc <= 0).any() or (mc <= 0).any() or (pts < 0).any():
        raise VerifyException(f"{op.name}: rows, words and counts must be positive")
    s_last = s_tile + (pc - 1) * pss
    d_last = d_tile + (pc - 1) * pds + (mc - 1) * mcs
    for lo, hi, buf, what in ((s_tile, s_last, src, "source"), (d_tile, d_last, dst, "destination")):
        f, n = buf.first.data, buf.count.data
        bad = (np.minimum(lo, hi) < f) | (np.maximum(lo, hi) >= f + n)
        if bad.any():
            raise VerifyException(f"{op.name}: transfer {int(np.argmax(bad))} has a {what} tile outside [{f}, {f + n})")
    if relative:  # offsets within the buffers: check against their sizes
        s_lo, d_lo = s_off + np.minimum((pc - 1) * pso, 0), d_off + np.minimum((pc - 1) * pdo, 0)
        s_end = s_off + np.maximum((pc - 1) * pso, 0) + (rows - 1) * s_str + words * 4
        d_end = d_off + np.maximum((pc - 1) * pdo, 0) + (rows - 1) * d_str + words * 4
        if (s_lo < 0).any() or (s_end + reach > src.nbytes).any():
            raise VerifyException(f"{op.name}: a transfer reads outside the source buffer ({src.nbytes} bytes)")
        if (d_lo < 0).any() or (d_end > dst.nbytes).any():
            raise VerifyException(f"{op.name}: a transfer writes outside the destination buffer ({dst.nbytes} bytes)")


__all__ = [
    "MEMORY_CLASSES",
    "AnyBuffer",
    "BufferType",
    "GaussianAttr",
    "prefetched_gaussians",
    "LayoutAttr",
    "format_ints",
    "parse_ints",
    "verify_host_layout",
    "verify_host_shape",
    "verify_table_init",
    "trip_reach",
    "verify_transfers",
    "verify_zero_span",
]
