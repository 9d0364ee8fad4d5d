"""Machine models as data: `load_target("mk2")` reads `target/mk2.toml`.

The compiler's cost model and the emulator's cycle model both read these objects, so an
estimate and a measurement always start from the same numbers (DESIGN principle 3).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TARGET_DIR = Path(__file__).parent
DEFAULT_TARGET = "mk2"


class TargetError(ValueError):
    """An unknown or malformed target description."""


@dataclass(frozen=True)
class Region:
    """A contiguous SRAM range of one tile."""

    name: str
    start: int
    end: int
    interleaved: bool
    executable: bool

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Target:
    """One tile machine: geometry, rates and costs (all per tile)."""

    name: str
    description: str
    tiles: int
    clock_hz: int
    memory_base: int
    memory_size: int
    element_bytes: int
    tiles_per_send_bus: int
    code_reserve_bytes: int
    regions: tuple[Region, ...]
    rates: dict[str, int]
    costs: dict[str, int]
    exchange: dict[str, int]
    loadable_end: int = 0  # the loader cannot populate memory above this (0: memory_end)

    @property
    def data_end(self) -> int:
        """Top of the memory the compiler may place data in."""
        return self.loadable_end or self.memory_end

    @property
    def memory_end(self) -> int:
        return self.memory_base + self.memory_size

    def region(self, name: str) -> Region:
        for r in self.regions:
            if r.name == name:
                return r
        raise TargetError(f"target {self.name} has no region '{name}'")

    # --- cost formulas shared by the compiler's estimates and the emulator's cycle counts ---

    def amp_matmul_cycles(self, m: int, k: int, n: int) -> int:
        """AMP GEMM call on one tile: [m,k] x [k,n], fp16 in, fp32 accumulate.

        ipu-stack's measured form (ST 3.2): call + per 16-deep slice, rows x columns / 4
        plus a per-16-column-group cost of `amp_group_interleaved` per 64-deep block.
        """
        c = self.costs
        cols = -(-n // c["amp_columns_per_group"]) * c["amp_columns_per_group"]
        slices = -(-k // 16)
        per_slice = -(-cols * m // c["amp_row_divisor"]) + -(
            -(cols // c["amp_columns_per_group"]) * c["amp_group_interleaved"] // 4
        )
        return c["amp_call"] + slices * per_slice

    def vector_cycles(self, elements: int) -> int:
        """Vector kernels (ST 3.3): add/mul/sub/max/relu run `add_elements_per_cycle` elements a cycle."""
        return -(-elements // self.costs["add_elements_per_cycle"]) + self.costs["kernel_launch"]

    def transform_cycles(self, elements: int) -> int:
        """Element permutations (transpose): `transform_per_element` cycles an element."""
        return self.costs["transform_per_element"] * elements + self.costs["kernel_launch"]

    def local_copy_cycles(self, nbytes: int) -> int:
        """A copy within one tile's memory (with a dtype conversion) of `nbytes` output bytes."""
        return self.costs["local_copy_call"] + -(-nbytes // self.costs["local_copy_bytes_per_cycle"])

    def reduce_cycles(self, parts: int, elements: int) -> int:
        """Sum of `parts` fp32 partial slices of `elements` each (ST 3.1/3.2: parallel
        reduction costs partial bytes at the measured 1 output byte a cycle per partial)."""
        c = self.costs
        return parts * elements * 4 // c["reduce_bytes_per_cycle"] + c["kernel_launch"]

    def transcendental_cycles(self, elements: int) -> int:
        """exp / tanh / GeLU: the scalar per-element cost `gelu_per_element` (ST 3.3,
        measured for the exact GeLU)."""
        return self.costs["gelu_per_element"] * elements + self.costs["kernel_launch"]

    def _passes(self, n: int, elements: int) -> int:
        return n * -(-elements // self.costs["add_elements_per_cycle"])

    def softmax_cycles(self, rows: int, cols: int) -> int:
        """Max, subtract, exp, sum and scale: one scalar exp per element plus three vector passes."""
        return self.costs["kernel_launch"] + self.costs["gelu_per_element"] * rows * cols + self._passes(3, rows * cols)

    def reduce_rows_cycles(self, rows: int, cols: int) -> int:
        return self.costs["kernel_launch"] + self._passes(1, rows * cols) + rows

    def norm_cycles(self, rows: int, cols: int) -> int:
        """Mean/variance (two passes), normalise and scale/shift (two passes), one rsqrt per row."""
        return self.costs["kernel_launch"] + self._passes(4, rows * cols) + self.costs["gelu_per_element"] * rows

    def attention_update_cycles(self, qr: int, kr: int, d: int) -> int:
        """Two AMP GEMMs (q k^T and p v) plus the online-softmax vector work on the scores."""
        return (
            self.amp_matmul_cycles(qr, d, kr)
            + self.amp_matmul_cycles(qr, kr, d)
            + self.softmax_cycles(qr, kr)
            + self._passes(2, qr * d)
        )

    def attention_bias_update_cycles(self, qr: int, kr: int, d: int) -> int:
        """`attention_update` plus one vector pass adding the [qr, kr] bias block to the scores."""
        return self.attention_update_cycles(qr, kr, d) + self._passes(1, qr * kr)

    def attention_combine_cycles(self, parts: int, qr: int, d: int) -> int:
        return (
            self.costs["kernel_launch"]
            + self._passes(2 * parts, qr * (d + 2))
            + (self.costs["gelu_per_element"] * parts * qr)
        )

    def fill_cycles(self, elements: int) -> int:
        return self.costs["kernel_launch"] + self._passes(1, elements)

    def multi_slice_cycles(self, indices: int, row_bytes: int) -> int:
        """An embedding slice on one tile: PopLibs multiSlice's per-index cost shape, a compare of
        each index with the tile's row range (an indexed element: `transform_per_element`) and
        then its row, or zeros, written at the local copy rate, behind one copy call."""
        c = self.costs
        return (
            c["local_copy_call"]
            + indices * c["transform_per_element"]
            + indices * -(-row_bytes // c["local_copy_bytes_per_cycle"])
        )

    def phase_overhead_cycles(self) -> int:
        """Sync plus the worst route tail: what an exchange phase pays above its horizon before
        tile mapping fixes its routes (the analytical plan cost's view)."""
        return self.exchange["sync_cycles"] + self.exchange["route_tail_cycles"]

    @property
    def columns(self) -> int:
        return -(-self.tiles // self.exchange["tiles_per_column"])

    def route_cycles(self, src_phys: np.ndarray, dst_phys: np.ndarray) -> np.ndarray:
        """Send-to-receiver-mux delay between physical tiles: a base plus a cost per column
        crossed (MF 1.5: the delay depends on the two tiles' positions). Vectorized."""
        x = self.exchange
        tpc = x["tiles_per_column"]
        cols = np.abs(np.asarray(src_phys) // tpc - np.asarray(dst_phys) // tpc)
        return x["route_base_cycles"] + x["route_cycles_per_column"] * cols

    def longest_route(self, src_phys: np.ndarray, dst_phys: np.ndarray) -> int:
        """The longest `route_cycles` among (source, destination) physical tile pairs (0 if none)."""
        return int(self.route_cycles(src_phys, dst_phys).max()) if len(src_phys) else 0

    def host_transfer_cycles(self, nbytes: int) -> int:
        """One host-exchange phase moving `nbytes` over the host link (a host call's write or read
        step): the phase's host sync plus the bytes at the link's rate. Host cycles, not device
        cycles: the tiles wait at the rendezvous, their programs' cycle counts leave it out."""
        r = self.rates
        return r["host_phase_cycles"] + -(-nbytes // r["host_bytes_per_cycle"])


def available_targets() -> list[str]:
    return sorted(p.stem for p in TARGET_DIR.glob("*.toml"))


def load_target(name: str = DEFAULT_TARGET) -> Target:
    """Load a target by name; raises TargetError naming the known targets."""
    path = TARGET_DIR / f"{name}.toml"
    if not name or "/" in name or not path.is_file():
        raise TargetError(f"unknown target '{name}' (known: {', '.join(available_targets())})")
    try:
        raw = tomllib.loads(path.read_text())
        regions = tuple(Region(**r) for r in raw["regions"])
        t = Target(
            name=raw["name"],
            description=raw["description"],
            tiles=int(raw["tiles"]),
            clock_hz=int(raw["clock_hz"]),
            memory_base=int(raw["memory_base"]),
            memory_size=int(raw["memory_size"]),
            element_bytes=int(raw["element_bytes"]),
            tiles_per_send_bus=int(raw["tiles_per_send_bus"]),
            code_reserve_bytes=int(raw["code_reserve_bytes"]),
            regions=regions,
            rates=dict(raw["rates"]),
            costs=dict(raw["costs"]),
            exchange=dict(raw["exchange"]),
            loadable_end=int(raw.get("loadable_end", 0)),
        )
    except (KeyError, TypeError, tomllib.TOMLDecodeError) as e:
        raise TargetError(f"malformed target file {path.name}: {e}") from None
    _check(t)
    return t


def _check(t: Target) -> None:
    if t.tiles <= 0:
        raise TargetError(f"target {t.name}: tiles must be positive")
    prev = t.memory_base
    for r in t.regions:
        if r.start != prev or r.end <= r.start:
            raise TargetError(f"target {t.name}: regions must tile memory contiguously")
        prev = r.end
    if prev != t.memory_end:
        raise TargetError(f"target {t.name}: regions end at {prev:#x}, memory at {t.memory_end:#x}")
    if t.rates.get("host_bytes_per_cycle", 0) <= 0 or t.rates.get("host_phase_cycles", -1) < 0:
        raise TargetError(
            f"target {t.name}: [rates] needs a positive host_bytes_per_cycle and a non-negative host_phase_cycles"
        )
    x = t.exchange
    if (
        min(x.get("tiles_per_column", 0), x.get("route_base_cycles", 0)) <= 0
        or x.get("route_cycles_per_column", -1) < 0
    ):
        raise TargetError(
            f"target {t.name}: [exchange] needs positive tiles_per_column and route_base_cycles, "
            "non-negative route_cycles_per_column"
        )
    worst = x["route_base_cycles"] + x["route_cycles_per_column"] * (t.columns - 1)
    if x.get("route_tail_cycles") != worst:
        raise TargetError(f"target {t.name}: route_tail_cycles must be the longest route, {worst}")
    if t.loadable_end and not t.memory_base < t.loadable_end <= t.memory_end:
        raise TargetError(f"target {t.name}: loadable_end {t.loadable_end:#x} outside memory")
