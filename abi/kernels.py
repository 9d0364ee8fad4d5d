"""Every tile kernel, each defined once: its ABI, its cycle model and what it computes.

A `CALL` instruction (see `ipu.abi.isa`) holds the kernel's index in `KERNELS` (word 1: the
order is the package ABI, so new kernels are appended), the dtype word (word 2: in | out << 8),
the output address (word 3), one address per entry of `Kernel.ins` (words 4..) and then the
parameters in `Kernel.params` order.

A `Kernel` entry states:
- its operands with their roles: the output is `OUTPUT` (written) or `ACCUMULATOR` (read, then
  written in place); each further address is an `INPUT` (read) or a `SCRATCH` (written, never
  read), with its element count as a function of the parameters and its dtype (the CALL's in
  or out dtype, or always f32);
- its parameters: shapes (positive), indices and flags (may be zero), float32 bit patterns, and
  any rule between them;
- its cycle model: one tile's cycles for one call, from the target's rates and costs (the
  `Target` methods), shared by the compiler's estimates and the emulator;
- its semantics: `run(p, count, ins, acc)` on float32 arrays [count, elements] of the `INPUT`
  operands (int32 for an operand of fixed dtype "i32", such as embedding ids) and the
  accumulator's current value, returning the output (and each scratch's values, in address
  order) for `count` tiles at once. The emulator rounds to the output dtype.

Loops: a kernel marked `iterated` runs only inside a loop of `iterations` trips; the emulator
passes the loop's current iteration (0-based) as the extra parameter `iteration`, which no CALL
word holds.

Integers: a kernel marked `ints` also accepts INT32 as the CALL's in and/or out dtype; its `run`
then receives int32 arrays and computes in two's-complement int32 (wrapping, as NumPy's int32
does); a float result written to an INT32 output is truncated toward zero. Bool is an INT32
word holding 0 or 1 (comparisons write it, `select` reads it).

This module is a leaf: dialects, transforms, codegen and the runtime read it; it imports no
dialect, pass or runtime module.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ipu.abi.isa import INSTRUCTION_WORDS, DType, Opcode, bits_float, float_bits, header
from ipu.abi.tables import ATTENTION_OFFSETS

if TYPE_CHECKING:
    from ipu.target import Target

_QUERY_ROW, _KEY_BEGIN, _KEY_END = (ATTENTION_OFFSETS.index(c) for c in ("query_row", "key_begin", "key_end"))
Params = dict[str, Any]  # parameter name -> int, or a numpy column of them (vectorised checks)
ONE_BITS = float_bits(1.0)  # an attention scale of 1: the query block came scaled (no scores scale)
Values = np.ndarray | tuple[np.ndarray, ...]


class Role(StrEnum):
    """What a kernel does with an operand's memory."""

    INPUT = "input"  # read
    OUTPUT = "output"  # written
    ACCUMULATOR = "accumulator"  # read, then written in place
    SCRATCH = "scratch"  # written, never read


@dataclass(frozen=True)
class Operand:
    """One address of a CALL: its role, element count (from the parameters) and dtype."""

    role: Role
    elements: Callable[[Params], Any]
    dtype: Literal["in", "out", "f32", "i32"] = "in"  # the CALL's in or out dtype, or always f32 (i32)
    # `elements` spans `iterations` equal blocks, one per loop trip, of which a call reads block
    # `iteration` only (an `iterated` kernel's: a rolled layer's stacked weight read in place)
    stacked: bool = False


@dataclass(frozen=True)
class Param:
    """A CALL parameter: `shape` (positive), `index` (a flag or offset: may be zero) or `float`
    (a float32's bit pattern, finite)."""

    name: str
    kind: Literal["shape", "index", "float"] = "shape"


class KernelError(ValueError):
    """Data a kernel cannot compute on (the emulator reports it with the call's position)."""


@dataclass(frozen=True)
class Kernel:
    """One kernel: operands, parameters, cycle model and semantics (see the module docstring)."""

    name: str
    out: Operand
    ins: tuple[Operand, ...]
    params: tuple[Param, ...]
    cycles_fn: Callable[[Target, Params, int], int]  # (target, params, output element bytes)
    run: Callable[[Params, int, list[np.ndarray], np.ndarray | None], Values]
    rule: Callable[[Params], Any] | None = None  # True (per call) where parameters break a rule
    unary: bool = False  # an elementwise map y = f(x): a `plan.unary` kind
    amp: bool = False  # AMP: input `amp_weights` streamed by 128-bit loads (one interleaved region)
    amp_weights: int = 1  # the input the AMP loads as its weights (the other one is its rows)
    ints: bool = False  # INT32 allowed in the CALL's dtype word (see the module docstring)
    iterated: bool = False  # reads the innermost loop's iteration as parameter `iteration` (see below)
    # the CALL's in dtype shapes its numerics and cost beyond its operands' storage (attention
    # holds its scores in it): `run` finds its element size as parameter `in_esize`, and
    # `cycles_fn` is given that size instead of the output's
    reads_in_dtype: bool = False

    @property
    def n_in(self) -> int:
        """Addresses after the output (inputs and scratches)."""
        return len(self.ins)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(q.name for q in self.params)

    @property
    def param_offset(self) -> int:
        """Word index of the first parameter."""
        return 4 + self.n_in

    @property
    def call_words(self) -> int:
        """Words of a CALL of this kernel (`ipu.abi.isa`)."""
        return self.param_offset + len(self.params)

    def cycles(self, target: Target, p: Params, out_esize: int = 2, in_esize: int | None = None) -> int:
        """One tile's cycles for one call (data-independent); a kernel that `reads_in_dtype` needs
        `in_esize`, the CALL's in element size."""
        if not self.reads_in_dtype:
            return self.cycles_fn(target, p, out_esize)
        if in_esize is None:
            raise ValueError(f"{self.name}'s cycles depend on the call's in dtype: give in_esize")
        return self.cycles_fn(target, p, in_esize)

    def operand_elements(self, p: Params) -> tuple[Any, list[Any]]:
        """(output elements, [elements of each further address]); ints or numpy columns."""
        return self.out.elements(p), [o.elements(p) for o in self.ins]

    def operand_dtypes(self, in_dtype: Any, out_dtype: Any) -> tuple[Any, list[Any]]:
        """(output dtype, [dtypes]) given the dtype word's codes (DType values or numpy columns)."""
        scalar = isinstance(in_dtype, DType)
        f32 = DType.F32 if scalar else int(DType.F32)
        i32 = DType.INT32 if scalar else int(DType.INT32)
        pick = {"in": in_dtype, "out": out_dtype, "f32": f32, "i32": i32}
        return pick[self.out.dtype], [pick[o.dtype] for o in self.ins]

    def read_block(self, p: Params, j: int, elements: Any) -> tuple[Any, Any]:
        """(first element, elements) of input `j`'s `elements` that a call reads: all of them, or
        for a `stacked` operand the loop's current block (`p` holds `iteration`)."""
        if not self.ins[j].stacked:
            return 0, elements
        block = elements // p["iterations"]
        return p["iteration"] * block, block

    def reads(self) -> list[int]:
        """Indices into `ins` of the operands the kernel reads (its `run` inputs)."""
        return [j for j, o in enumerate(self.ins) if o.role is Role.INPUT]

    def scratches(self) -> list[int]:
        return [j for j, o in enumerate(self.ins) if o.role is Role.SCRATCH]

    def invalid(self, p: Params) -> Any:
        """True (per call, for numpy columns) where the parameters break the kernel's rules."""
        bad: Any = np.zeros(np.shape(next(iter(p.values()))) if p else (), bool)
        for q in self.params:
            v = p[q.name]
            if q.kind == "float":
                bad = bad | ~np.isfinite(_as_float(v))
            elif q.kind == "index":
                bad = bad | (v < 0)
            else:
                bad = bad | (v <= 0)
        return bad if self.rule is None else bad | self.rule(p)


def _as_float(bits: Any) -> np.ndarray:
    return (np.asarray(bits, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


# ---------------------------------------------------------------------------------------------
# Shared numerics (float32 unless stated)
# ---------------------------------------------------------------------------------------------

_SQRT_2_OVER_PI = np.float32(math.sqrt(2.0 / math.pi))
# Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7, well inside fp16 and fp32 result rounding.
_AS_P, _AS_A = 0.3275911, (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def erf(x: np.ndarray) -> np.ndarray:
    """erf in float64 by a rational approximation (NumPy has none; the kernel's own form)."""
    a = np.abs(x)
    t = 1.0 / (1.0 + _AS_P * a)
    poly = t * (_AS_A[0] + t * (_AS_A[1] + t * (_AS_A[2] + t * (_AS_A[3] + t * _AS_A[4]))))
    return np.sign(x) * (1.0 - poly * np.exp(-a * a))


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched float32 matmul through BLAS: NumPy falls back to a loop 10-20x slower when an
    operand's matrices are not contiguous (a transposed view, a strided fp32 view of memory)."""
    return np.matmul(np.ascontiguousarray(a), np.ascontiguousarray(b))


def _elements(p: Params) -> Any:
    return p["elements"]


def _mn(p: Params) -> Any:
    return p["m"] * p["n"]


def _rows_cols(p: Params) -> Any:
    return p["rows"] * p["cols"]


def _cols(p: Params) -> Any:
    return p["cols"]


def _state(p: Params) -> Any:
    """An attention state [qr, d + 2]: d accumulator values, running max, running sum."""
    return p["qr"] * (p["d"] + 2)


def _in(elements: Callable[[Params], Any], dtype: Literal["in", "out", "f32", "i32"] = "in") -> Operand:
    return Operand(Role.INPUT, elements, dtype)


def _out(elements: Callable[[Params], Any], dtype: Literal["in", "out", "f32"] = "out") -> Operand:
    return Operand(Role.OUTPUT, elements, dtype)


# ---------------------------------------------------------------------------------------------
# Semantics
# ---------------------------------------------------------------------------------------------


def _amp_matmul(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    m, k, n = p["m"], p["k"], p["n"]
    res = matmul(ins[0].reshape(count, m, k), ins[1].reshape(count, k, n))
    return res if acc is None else acc.reshape(count, m, n) + res


HALF_PARTIALS_DEPTH = 16
"""Input channels of one AMP pass with half inputs: with fp16 partials the running sum is held
in half between passes, so it is rounded after every group of this many products (the products
within a pass are summed exactly, in float32) [U: the AMP's internal rounding is not published]."""


def _half_round(x: np.ndarray) -> None:
    """Round float32 `x` to half precision, in place."""
    x[...] = x.astype(np.float16)


def half_partials_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a [count, m, k] @ b [count, k, n] with fp16 partials: each `HALF_PARTIALS_DEPTH`-deep input
    group's products added in turn, the running sum rounded to half after each."""
    out = None
    for g in range(0, a.shape[-1], HALF_PARTIALS_DEPTH):
        t = matmul(a[..., g : g + HALF_PARTIALS_DEPTH], b[..., g : g + HALF_PARTIALS_DEPTH, :])
        if out is None:
            out = t
        else:
            out += t
        _half_round(out)
    assert out is not None, "an AMP call has k >= 1"
    return out


def _amp_matmul_half(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    m, k, n = p["m"], p["k"], p["n"]
    return half_partials_matmul(ins[0].reshape(count, m, k), ins[1].reshape(count, k, n))


def _swapped(half: bool) -> Callable[[Params, int, list[np.ndarray], np.ndarray | None], Values]:
    """out = a @ b computed as the AMP's (b^T a^T): the scratch receives that product [n, m] and
    the output its transpose. The sums are the unswapped ones (the same k groups, in order)."""
    plain = _amp_matmul_half if half else _amp_matmul

    def run(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
        out = np.asarray(plain(p, count, ins, acc)).reshape(count, p["m"], p["n"])
        return out, out.transpose(0, 2, 1)

    return run


def conv_window(p: Params) -> tuple[Any, Any, Any, Any]:
    """(sh, sw, dh, dw) of an `amp_conv` call, packed in its `window` parameter a byte each."""
    w = p["window"]
    return w & 0xFF, (w >> 8) & 0xFF, (w >> 16) & 0xFF, (w >> 24) & 0xFF


def pack_conv_window(strides: tuple[int, ...], dilations: tuple[int, ...]) -> int:
    """`amp_conv`'s `window` parameter: strides and dilations (each in [1, 255]) a byte each."""
    return strides[0] | strides[1] << 8 | dilations[0] << 16 | dilations[1] << 24


def conv_reach(out: Any, stride: Any, k: Any, dilation: Any) -> Any:
    """Input elements `out` outputs of a k-tap window read along one axis (its halo included)."""
    return (out - 1) * stride + (k - 1) * dilation + 1


def _conv_patch(p: Params) -> tuple[Any, Any]:
    """(rows, width) of an `amp_conv` patch: the reach of the kernel over the output block."""
    sh, sw, dh, dw = conv_window(p)
    return conv_reach(p["oh"], sh, p["kh"], dh), conv_reach(p["ow"], sw, p["kw"], dw)


def _patch_elements(p: Params) -> Any:
    """Elements of an `amp_conv` or `dw_conv` patch [n, rows, wp, c]."""
    rows, wp = _conv_patch(p)
    return p["n"] * rows * wp * p["c"]


def _conv_windows(p: Params, count: int, x: np.ndarray) -> list[np.ndarray]:
    """Each kernel position's window of the patch x, as [count, n oh ow, c] (position order)."""
    n, c, oh, ow, kh, kw = (p[k] for k in ("n", "c", "oh", "ow", "kh", "kw"))
    sh, sw, dh, dw = conv_window(p)
    rows, wp = _conv_patch(p)
    x = x.reshape(count, n, rows, wp, c)
    return [
        x[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw, :].reshape(
            count, n * oh * ow, c
        )
        for i in range(kh)
        for j in range(kw)
    ]


def _amp_conv(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    w = ins[1].reshape(count, p["kh"] * p["kw"], p["c"], p["o"])
    out = np.zeros((count, p["n"] * p["oh"] * p["ow"], p["o"]), np.float32)
    for pos, win in enumerate(_conv_windows(p, count, ins[0])):
        out += matmul(win, w[:, pos])
    return out.reshape(count, -1)


def _amp_conv_half(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """`_amp_conv` with fp16 partials: input groups outermost, kernel positions within each (the
    nx1 vertex's loop order), the running sum rounded to half after every pass."""
    c = p["c"]
    w = ins[1].reshape(count, p["kh"] * p["kw"], c, p["o"])
    wins = _conv_windows(p, count, ins[0])
    out = np.zeros((count, p["n"] * p["oh"] * p["ow"], p["o"]), np.float32)
    for g in range(0, c, HALF_PARTIALS_DEPTH):
        for pos, win in enumerate(wins):
            out += matmul(win[..., g : g + HALF_PARTIALS_DEPTH], w[:, pos, g : g + HALF_PARTIALS_DEPTH])
            _half_round(out)
    return out.reshape(count, -1)


def _dw_conv(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    n, c, oh, ow, kh, kw = (p[k] for k in ("n", "c", "oh", "ow", "kh", "kw"))
    sh, sw, dh, dw = conv_window(p)
    rows, wp = _conv_patch(p)
    x = ins[0].reshape(count, n, rows, wp, c)
    w = ins[1].reshape(count, kh * kw, 1, 1, 1, c)
    out = np.zeros((count, n, oh, ow, c), np.float32)
    for i in range(kh):
        for j in range(kw):
            out += (
                x[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw, :]
                * w[:, i * kw + j]
            )
    return out.reshape(count, -1)


def _max_pool(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """The max over the kernel positions' windows of the zero-filled patch (`_conv_windows`)."""
    wins = _conv_windows(p, count, ins[0])
    out = wins[0].copy()
    for win in wins[1:]:
        np.maximum(out, win, out=out)
    return out.reshape(count, -1)


def _zero(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    # 0 in every dtype; a broadcast constant, which the emulator writes as one fill
    return np.broadcast_to(np.int32(0), (count, p["elements"]))


def _broadcasting(f: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., Values]:
    """a (op) b over [m, n] with b of shape [b_rows, b_cols] (1 broadcasts)."""

    def run(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
        return f(ins[0].reshape(count, p["m"], p["n"]), ins[1].reshape(count, p["b_rows"], p["b_cols"]))

    return run


def _map(f: Callable[[np.ndarray], np.ndarray]) -> Callable[..., Values]:
    """An elementwise map of the one input."""

    def run(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
        return f(ins[0])

    return run


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in float32, in one buffer: x**3 would
    go through pow, 25x slower than two multiplies."""
    t = x * x
    t *= x
    t *= np.float32(0.044715)
    t += x
    t *= _SQRT_2_OVER_PI
    np.tanh(t, out=t)
    t += np.float32(1)
    t *= x
    t *= np.float32(0.5)
    return t


def _gelu_erf(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))


def _exp(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.exp(x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)); exp overflows to inf for very negative x, giving exactly 0."""
    with np.errstate(over="ignore"):
        return np.float32(1) / (np.float32(1) + np.exp(-x))


def _f64(f: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """`f` evaluated in float64 (NaN, inf and -inf where IEEE gives them): one rounding to the
    output dtype, the correctly rounded result."""

    def run(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return f(x.astype(np.float64))

    return run


def _rsqrt(x: np.ndarray) -> np.ndarray:
    """1 / sqrt x in float32, rounded after the square root and after the division, as ONNX
    `Reciprocal(Sqrt(x))` is."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.float32(1) / np.sqrt(x.astype(np.float32))


def _reciprocal(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.float32(1) / x


_ERF_TERMS = 40  # Taylor terms for |x| < 2 (the last term is below 1e-17 there)
_ERFC_DEPTH = 80  # continued-fraction depth for |x| >= 2


def erf_precise(x: np.ndarray) -> np.ndarray:
    """erf in float64 to about 1e-15: the Taylor series 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1))
    below |x| = 2, 1 - erfc(|x|) from erfc's continued fraction exp(-x^2)/sqrt(pi) /
    (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) above; NaN stays NaN."""
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    small = a < 2.0
    xs = np.where(small, x, 0.0)
    term, total = xs.copy(), xs.copy()
    x2 = xs * xs
    for n in range(1, _ERF_TERMS):
        term = term * -x2 / n
        total = total + term / (2 * n + 1)
    series = total * (2.0 / math.sqrt(math.pi))
    z = np.where(small, 2.0, np.minimum(a, 30.0))  # erfc(30) underflows: erf is +-1 exactly
    frac = z.copy()
    for k in range(_ERFC_DEPTH, 0, -1):
        frac = z + (k / 2.0) / frac
    erfc = np.exp(-z * z) / math.sqrt(math.pi) / frac
    return np.where(small, series, np.sign(x) * (1.0 - erfc))


def _softsign(x: np.ndarray) -> np.ndarray:
    """x / (1 + |x|) in float32, rounded after the sum and after the division."""
    with np.errstate(invalid="ignore"):  # inf / inf is NaN
        return x / (np.float32(1) + np.abs(x))


def _silu(x: np.ndarray) -> np.ndarray:
    """x * sigmoid(x) in float32: sigmoid's exp, its division and the product."""
    with np.errstate(invalid="ignore"):  # -inf * 0 is NaN
        return x * _sigmoid(x)


def _power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.power(a.astype(np.float64), b.astype(np.float64))


def _even(n: Any) -> Any:
    """A row's stored length: the layouts pad the last axis to whole 32-bit words of fp16."""
    return n + n % 2


def _repad_elements_in(p: Params) -> Any:
    return p["rows"] * _even(p["cols"])


def _repad_elements_out(p: Params) -> Any:
    return p["out_rows"] * _even(p["out_cols"])


def _repad(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """The valid elements of in[rows, even(cols)] in order, as out[out_rows, even(out_cols)]
    (padding columns written as 0)."""
    rows, cols, orows, ocols = p["rows"], p["cols"], p["out_rows"], p["out_cols"]
    x = ins[0].reshape(count, rows, _even(cols))[:, :, :cols].reshape(count, orows, ocols)
    out = np.zeros((count, orows, _even(ocols)), x.dtype)
    out[:, :, :ocols] = x
    return out


def _is_int(a: np.ndarray) -> bool:
    return a.dtype.kind in "iu"


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b; for integers truncated toward zero (C's and ONNX's integer Div), x / 0 = 0 (ONNX
    leaves it undefined; NumPy's value) and int32 min / -1 wraps to int32 min (NumPy's)."""
    if _is_int(a):
        a64, b64 = np.broadcast_arrays(a.astype(np.int64), b.astype(np.int64))
        safe = np.where(b64 == 0, 1, b64)
        q = np.abs(a64) // np.abs(safe) * np.sign(a64) * np.sign(safe)
        return np.where(b64 == 0, 0, q).astype(np.int32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(a, b)


def _mod(fmod: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """a mod b: the remainder with the dividend's sign (C's fmod, ONNX fmod=1) or the divisor's
    (Python's, ONNX fmod=0); for integers x mod 0 = 0 (undefined in ONNX; NumPy's value)."""

    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if _is_int(a):
            a64, b64 = np.broadcast_arrays(a.astype(np.int64), b.astype(np.int64))
            safe = np.where(b64 == 0, 1, b64)
            r = np.fmod(a64, safe) if fmod else np.mod(a64, safe)
            return np.where(b64 == 0, 0, r).astype(np.int32)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, b) if fmod else np.mod(a, b)

    return run


def _shift(left: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """a << b or a >> b (logical: the importer admits shifts of unsigned values only) in 32-bit
    words; a shift by 32 or more (or a negative one) gives 0, as shifting every bit out does."""

    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a64, b64 = np.broadcast_arrays(a.astype(np.int64) & 0xFFFFFFFF, b.astype(np.int64))
        ok = (b64 >= 0) & (b64 < 32)
        amount = np.where(ok, b64, 0)
        r = (a64 << amount) & 0xFFFFFFFF if left else a64 >> amount
        return np.where(ok, r, 0).astype(np.uint32).view(np.int32)

    return run


def _compare(f: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A comparison as 0/1 words (NaN compares false, as IEEE and NumPy say)."""

    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return f(a, b).astype(np.int32)

    return run


def _bitwise(f: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return f(a.astype(np.int32), b.astype(np.int32))

    return run


def _wrap(bits: int, signed: bool) -> Callable[[np.ndarray], np.ndarray]:
    """An int32 reduced modulo 2^bits into the range of the narrower (un)signed type: the
    wrap-around NumPy's int8/int16/uint8/uint16 arithmetic has."""
    dt = np.dtype(f"{'i' if signed else 'u'}{bits // 8}")

    def run(x: np.ndarray) -> np.ndarray:
        return x.astype(np.int32).astype(dt).astype(np.int32)

    return run


def _select(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """out[e] = cond[e] != 0 ? a[e] : b[e] (inputs a, b in the in dtype, cond i32 0/1 words)."""
    return np.where(ins[2] != 0, ins[0], ins[1])


def _arg_rows(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """out[r] = the column index of the largest (kind 1) or smallest (kind 2) of each row's first
    `valid` values, the first such index or with `last` the last (ONNX select_last_index); a NaN
    wins (NumPy's argmax and argmin, ONNX's reference)."""
    x = _valid_cols(p, count, ins[0])
    if p["last"]:
        x = x[:, :, ::-1]
    idx = np.argmax(x, axis=2) if p["kind"] == 1 else np.argmin(x, axis=2)
    return (p["valid"] - 1 - idx if p["last"] else idx).astype(np.int32)


def _transpose(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    return ins[0].reshape(count, p["m"], p["n"]).transpose(0, 2, 1)


def _reduce_sum(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    return ins[0].reshape(count, p["parts"], p["elements"]).sum(axis=1, dtype=np.float32)


def _valid_cols(p: Params, count: int, x: np.ndarray) -> np.ndarray:
    """x[count, rows, cols] restricted to its first `valid` columns."""
    return x.reshape(count, p["rows"], p["cols"])[:, :, : p["valid"]]


def _cumsum_rows(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """The running sum of each row's first `valid` columns (flags: 1 exclusive, 2 reverse), in
    float32 for floats and wrapping int32 for integers; the padding columns are zero."""
    x = _valid_cols(p, count, ins[0])
    dt = np.int32 if x.dtype.kind in "iu" else np.float32
    v = x.astype(dt)
    rev, excl = bool(p["flags"] & 2), bool(p["flags"] & 1)
    if rev:
        v = v[:, :, ::-1]
    with np.errstate(over="ignore"):
        y = np.cumsum(v, axis=2, dtype=dt)
    if excl:
        y = np.concatenate([np.zeros_like(y[:, :, :1]), y[:, :, :-1]], axis=2)
    res = np.zeros((count, p["rows"], p["cols"]), dt)
    res[:, :, : p["valid"]] = y[:, :, ::-1] if rev else y
    return res


def _softmax_rows(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    x = _valid_cols(p, count, ins[0])
    res = np.zeros((count, p["rows"], p["cols"]), np.float32)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=2, keepdims=True))
        res[:, :, : p["valid"]] = e / e.sum(axis=2, keepdims=True, dtype=np.float32)
    return res


def _reduce_rows(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    x = _valid_cols(p, count, ins[0])
    if p["kind"] == 2:
        return x.max(axis=2)
    if p["kind"] == 4:
        return x.prod(axis=2, dtype=np.float32)
    r = x.sum(axis=2, dtype=np.float32)
    return r / np.float32(p["valid"]) if p["kind"] == 3 else r


def _norm_rows(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """Layer norm (three inputs: x, gamma, beta) or RMS norm (two: x, gamma) of each row."""
    valid = p["valid"]
    x = _valid_cols(p, count, ins[0])
    eps = np.float32(bits_float(p["eps_bits"]))
    gamma = ins[1].reshape(count, 1, p["cols"])[:, :, :valid]
    res = np.zeros((count, p["rows"], p["cols"]), np.float32)
    if len(ins) == 3:
        mean = x.mean(axis=2, keepdims=True, dtype=np.float32)
        c = x - mean
        var = (c * c).mean(axis=2, keepdims=True, dtype=np.float32)
        beta = ins[2].reshape(count, 1, p["cols"])[:, :, :valid]
        res[:, :, :valid] = c / np.sqrt(var + eps) * gamma + beta
    else:
        ms = (x * x).mean(axis=2, keepdims=True, dtype=np.float32)
        res[:, :, :valid] = x / np.sqrt(ms + eps) * gamma
    return res


def _norm_stats(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """Each row's statistics over this tile's column block x[rows, cols], f32 [rows, 2]: the sum
    and the sum of squared deviations from the block's own mean (combined exactly by
    `_norm_apply`, Chan's parallel variance: no cancellation when the mean dwarfs the spread)."""
    x = ins[0].reshape(count, p["rows"], p["cols"]).astype(np.float32)
    s = x.sum(axis=2, dtype=np.float32)
    c = x - (s / np.float32(p["cols"]))[:, :, None]
    return np.stack([s, (c * c).sum(axis=2, dtype=np.float32)], axis=2)


def norm_block_columns(columns: int, cols: int, parts: int) -> np.ndarray:
    """Each of a split norm's `parts` column blocks of `cols`: its count of a row's `columns`
    real columns (`cols`, the last ones fewer, blocks wholly past the row none)."""
    return np.clip(columns - cols * np.arange(parts), 0, cols)


def _norm_stats_valid(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """`_norm_stats` over the first `valid` columns of the block only, `valid` (0 to cols) this
    tile's own count, input 1 (f32 [2]: the count, then an unused word): a split norm whose last
    column block is padded, the padding never read (it holds anything)."""
    rows, cols = p["rows"], p["cols"]
    x = ins[0].reshape(count, rows, cols).astype(np.float32)
    valid = ins[1].reshape(count, -1)[:, 0]
    if not np.isfinite(valid).all():
        raise KernelError("norm_stats_valid column counts are not finite")
    n = np.clip(np.rint(valid), 0, cols).astype(np.int64)
    live = (np.arange(cols)[None, :] < n[:, None])[:, None, :]
    x = np.where(live, x, np.float32(0))
    s = x.sum(axis=2, dtype=np.float32)
    c = np.where(live, x - (s / np.maximum(n, 1).astype(np.float32)[:, None])[:, :, None], np.float32(0))
    return np.stack([s, (c * c).sum(axis=2, dtype=np.float32)], axis=2)


def _norm_apply(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """Layer norm (inputs x, stats, gamma, beta) or RMS norm (x, stats, gamma) of each row of
    this tile's column block x[rows, cols], from every block's statistics of the row,
    stats f32 [parts, rows, 2] (`_norm_stats`, all blocks `cols` wide; with parameter `columns`,
    the row's real width, `_norm_stats_valid`: block b holds min(cols, columns - b cols) of them)."""
    rows, cols, parts = p["rows"], p["cols"], p["parts"]
    x = ins[0].reshape(count, rows, cols).astype(np.float32)
    st = ins[1].reshape(count, parts, rows, 2).transpose(0, 2, 1, 3).astype(np.float32)
    eps = np.float32(bits_float(p["eps_bits"]))
    total = p["columns"] if "columns" in p else cols * parts
    n = np.float32(total)
    mean = st[:, :, :, 0].sum(axis=2, dtype=np.float32) / n
    if total == cols * parts:
        d = st[:, :, :, 0] / np.float32(cols) - mean[:, :, None]
        m2 = st[:, :, :, 1].sum(axis=2, dtype=np.float32) + np.float32(cols) * (d * d).sum(axis=2, dtype=np.float32)
    else:  # each block's own count of real columns (Chan's combination weighs by it)
        counts = norm_block_columns(total, cols, parts).astype(np.float32)
        d = st[:, :, :, 0] / np.maximum(counts, np.float32(1)) - mean[:, :, None]
        m2 = st[:, :, :, 1].sum(axis=2, dtype=np.float32) + (counts * d * d).sum(axis=2, dtype=np.float32)
    gamma = ins[2].reshape(count, 1, cols)
    if len(ins) == 4:
        beta = ins[3].reshape(count, 1, cols)
        return (x - mean[:, :, None]) / np.sqrt(m2 / n + eps)[:, :, None] * gamma + beta
    ms = m2 / n + mean * mean  # the mean square: sum of x^2 over n
    return x / np.sqrt(ms + eps)[:, :, None] * gamma


def _attention_init(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    res = np.zeros((count, p["qr"], p["d"] + 2), np.float32)
    res[:, :, p["d"]] = -np.inf
    return res


def _attention_update(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """One online-softmax step of each tile's state `acc` with its key block; returns the new
    state and the scratch's scaled scores q k^T * scale (masked keys as -inf). The scores are
    held in the call's in dtype, as PopLibs' softmax holds a half model's: with half inputs the
    AMP writes them rounded to half, and the bias add, the subtraction of the row max and the exp
    are half ops (each result rounded to half), so the probabilities enter the p v AMP as the
    halves they are; the row sum and the state stay fp32. Rows `attention_skipped_rows` names
    keep their state and score -inf: they precede every key of the block."""
    assert acc is not None
    qr, kr, d = p["qr"], p["kr"], p["d"]
    q = ins[0].reshape(count, qr, d)
    k = ins[1].reshape(count, kr, d)
    v = ins[2].reshape(count, kr, d)
    bias = None
    if len(ins) == 5:  # attention_update_bias: the bias block [qr, even kr] comes before the offsets
        bias = ins[3].reshape(count, qr, _even(kr))[:, :, :kr].astype(np.float32)
        ins = [*ins[:3], ins[4]]
    offsets = ins[3].reshape(count, 3)
    if not np.isfinite(offsets).all():
        raise KernelError("attention_update offsets are not finite")
    off = np.rint(offsets).astype(np.int64)
    state = acc.reshape(count, qr, d + 2)
    step = max(1, int(p["causal"]))  # global rows between consecutive local query rows
    skip = attention_skipped_rows(p)
    if not skip:
        return _attention_rows(p, q, k, v, bias, off, step, state)
    if (off[:, _QUERY_ROW] >= step).any():
        raise KernelError(f"attention_update skips {skip} rows, but a tile's first query row is not below {step}")
    # the scores as float32 holding values of the call's in dtype (stored at that dtype)
    new, s = state.copy(), np.full((count, qr, kr), -np.inf, np.float32)
    if skip < qr:
        off[:, _QUERY_ROW] += skip * step
        b = None if bias is None else bias[:, skip:]
        new[:, skip:], s[:, skip:] = _attention_rows(p, q[:, skip:], k, v, b, off, step, state[:, skip:])
    return new, s


def _scores_dtype(p: Params) -> type:
    """The attention scores' dtype, the call's in dtype's (NumPy's half ops round each result)."""
    return np.float16 if p["in_esize"] == 2 else np.float32


def _attention_rows(
    p: Params,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    bias: np.ndarray | None,
    off: np.ndarray,
    step: int,
    state: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """`attention_update` of the rows of q [count, rows, d] and their state [count, rows, d + 2],
    the first at global row off[:, query_row], the next `step` rows after each."""
    from ipu.abi.halves import round_half, to_float, to_half  # (numba: loaded where kernels run)

    count, qr, d = q.shape
    kr = k.shape[1]
    a, m, l_ = state[:, :, :d], state[:, :, d], state[:, :, d + 1]
    sd = _scores_dtype(p)
    # half scores are held as float32 arrays of halves' values: each step computes in float32 and
    # rounds its result to half, as NumPy's half ops do element by element (in slow loops)
    rounded = round_half if sd is np.float16 else (lambda x: None)
    s = matmul(q, k.transpose(0, 2, 1))
    rounded(s)
    if p["scale_bits"] != ONE_BITS:
        s *= np.float32(sd(bits_float(p["scale_bits"])))
        rounded(s)
    if bias is not None:
        b = np.ascontiguousarray(bias, np.float32)
        rounded(b)
        s += b
        rounded(s)
    gk = off[:, _KEY_BEGIN, None] + p.get("k_step", 1) * (p["k_base"] + np.arange(kr))  # [count, kr]
    in_range = gk < off[:, _KEY_END, None]
    # keys past the tile's key end do not exist: their (padding) value rows are not read
    if not in_range.all():
        v = v.copy()
        v[~in_range] = np.float32(0)
    valid = in_range[:, None, :]  # [count, 1, kr]
    if p["causal"]:
        gq = off[:, _QUERY_ROW, None] + step * np.arange(qr)  # [count, qr]
        valid = valid & (gk[:, None, :] <= gq[:, :, None])
    np.copyto(s, np.float32(-np.inf), where=~valid)  # (s is this call's own array)
    m_new = np.maximum(m, s.max(axis=2))
    finite = np.isfinite(m_new)
    safe = np.where(finite, m_new, np.float32(0))  # a score (or 0): exact in the scores' dtype
    with np.errstate(invalid="ignore", over="ignore"):
        alpha = np.where(np.isneginf(m), np.float32(0), np.exp(m - safe))
        # s - max rounded to the scores' dtype, then its exp (masked keys: exp(-inf) = 0)
        t = s - safe[:, :, None]
        pr = to_float(np.exp(to_half(t))) if sd is np.float16 else np.exp(t)
    new = np.empty_like(state)
    new[:, :, :d] = a * alpha[:, :, None] + matmul(pr, v)
    new[:, :, d] = m_new
    new[:, :, d + 1] = l_ * alpha + pr.sum(axis=2, dtype=np.float32)
    return new, s


def attention_skipped_rows(p: Params, first_key: int = 0) -> int:
    """Leading query rows an attention update skips from local key `first_key` on: with striped
    rows (`causal` = c >= 2, consecutive local rows c global rows apart, each tile's first below
    c) and keys `k_step` apart from the tile's first, the rows l with
    (l + 1) c <= k_step (k_base + first_key), which precede every such key."""
    c = int(p["causal"])
    if c < 2:
        return 0
    return min(int(p["qr"]), max(0, int(p.get("k_step", 1)) * (int(p["k_base"]) + first_key)) // c)


def _attention_start(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """`attention_update` from an empty state (no key counted yet): the same step, its state
    written, not read."""
    return _attention_update(p, count, ins, _attention_init(p, count, [], None))


def _attention_combine(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """Normalised combination of states x[count, parts, qr, d + 2] -> [count, qr, d]."""
    d = p["d"]
    x = ins[0].reshape(count, p["parts"], p["qr"], d + 2)
    a, m, l_ = x[..., :d], x[..., d], x[..., d + 1]
    mx = m.max(axis=1)  # [count, qr]
    safe = np.where(np.isfinite(mx), mx, np.float32(0))
    with np.errstate(invalid="ignore", over="ignore"):
        wgt = np.where(np.isneginf(m), np.float32(0), np.exp(m - safe[:, None]))
    total = (wgt * l_).sum(axis=1, dtype=np.float32)
    num = (wgt[..., None] * a).sum(axis=1, dtype=np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total[..., None] != 0, num / total[..., None], np.float32(0))


def _embedding_slice(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    """For each of the `indices` indices, the tile's table row when the index falls in the rows
    [row_begin, row_end) its block holds, zeros otherwise: [count, indices, cols]."""
    n, rows, cols = p["indices"], p["rows"], p["cols"]
    table = ins[0].reshape(count, rows, cols)
    idx = np.asarray(ins[1]).reshape(count, n).astype(np.int64)
    rng = np.asarray(ins[2]).reshape(count, 2).astype(np.int64)
    local = idx - rng[:, :1]
    hit = (idx >= rng[:, :1]) & (idx < rng[:, 1:]) & (local < rows)
    picked = np.take_along_axis(table, np.where(hit, local, 0)[:, :, None], axis=1)
    return np.where(hit[:, :, None], picked, np.float32(0))


# ---------------------------------------------------------------------------------------------
# Parameter rules
# ---------------------------------------------------------------------------------------------


def _broadcast_rule(p: Params) -> Any:
    return ((p["b_rows"] != 1) & (p["b_rows"] != p["m"])) | ((p["b_cols"] != 1) & (p["b_cols"] != p["n"]))


def _valid_rule(p: Params) -> Any:
    return p["valid"] > p["cols"]


def _norm_rule(p: Params) -> Any:
    return _valid_rule(p) | (_as_float(p["eps_bits"]) < 0)


# ---------------------------------------------------------------------------------------------
# The kernels, in ABI order
# ---------------------------------------------------------------------------------------------

_MKN = (Param("m"), Param("k"), Param("n"))
_BINARY_PARAMS = (Param("m"), Param("n"), Param("b_rows"), Param("b_cols"))
_ROWS = (Param("rows"), Param("cols"), Param("valid"))


def _amp(name: str, out: Operand, half: bool = False) -> Kernel:
    """out[m,n] (+)= a[m,k] @ b[k,n]; inputs f16, fp32 accumulation (`half`: fp16 partials, at
    the 16-unit rate, `half_partials_matmul`)."""
    pe = 2 if half else 4
    return Kernel(
        name,
        out=out,
        ins=(_in(lambda p: p["m"] * p["k"]), _in(lambda p: p["k"] * p["n"])),
        params=_MKN,
        cycles_fn=lambda t, p, e: t.amp_matmul_cycles(
            p["m"], p["k"], p["n"], accumulate=out.role is Role.ACCUMULATOR, partials_esize=pe
        ),
        run=_amp_matmul_half if half else _amp_matmul,
        amp=True,
    )


def stacked_offset_cycles(t: Target) -> int:
    """A `_stacked` call's cost over its kernel's: the supervisor offsets the operand's address by
    the loop counter before the call, priced as DynamicSlice1D's supervisor part [U]."""
    return t.costs["dynamic_slice_supervisor"]


def _stacked(k: Kernel) -> Kernel:
    """`k` reading its rhs (input 1) as one block of a stack of `iterations`, block `iteration`
    (the loop's current trip), in place: a rolled layer's AMP reads its stacked weight (a bias
    add its stacked bias) where it lies instead of a DynamicSlice1D copy of it
    (`stacked_offset_cycles` more)."""
    rhs = k.ins[1]
    ins = (k.ins[0], replace(rhs, elements=lambda p: p["iterations"] * rhs.elements(p), stacked=True), *k.ins[2:])
    return replace(
        k,
        name=f"{k.name}_stacked",
        ins=ins,
        params=(*k.params, Param("iterations")),
        cycles_fn=lambda t, p, e: k.cycles_fn(t, p, e) + stacked_offset_cycles(t),
        iterated=True,
    )


def _amp_swapped(name: str, half: bool = False) -> Kernel:
    """out[m,n] = a[m,k] @ b[k,n] with the operands' roles swapped (PopLibs' swapped operands
    for fully connected layers): the AMP's rows are b's n columns and its output groups a's m
    rows, so a lies in interleaved memory as its weights; the product [n, m] lands in the
    scratch, which a transpose (PC 1.8) writes to the output. Wins where m is short and n long:
    the AMP's fixed cost per 16 x 16 group pair is paid over fewer groups."""
    pe = 2 if half else 4
    return Kernel(
        name,
        out=_out(_mn),
        ins=(_in(lambda p: p["m"] * p["k"]), _in(lambda p: p["k"] * p["n"]), Operand(Role.SCRATCH, _mn, "out")),
        params=_MKN,
        cycles_fn=lambda t, p, e: (
            t.amp_matmul_cycles(p["n"], p["k"], p["m"], partials_esize=pe) + t.transform_cycles(p["n"], p["m"], e)
        ),
        run=_swapped(half),
        amp=True,
        amp_weights=0,
    )


_CONV_PARAMS = (*(Param(k) for k in ("n", "c", "oh", "ow", "o", "kh", "kw")), Param("window", "index"))


def _conv_rule(p: Params) -> Any:
    """Strides and dilations, a byte each of `window`, are positive."""
    return np.any(np.stack([np.asarray(v) < 1 for v in conv_window(p)]), axis=0)


def _amp_conv_kernel(half: bool = False) -> Kernel:
    """out[n, oh, ow, o] = sum over kernel positions (i, j) of the patch's window at rows
    y sh + i dh and columns x sw + j dw times filters[i kw + j] ([c, o]), fp32 accumulation.
    The patch [n, rows, wp, c] is the zero-padded input a tile's output rows reach, halo
    included: rows = (oh - 1) sh + (kh - 1) dh + 1 and wp = (ow - 1) sw + (kw - 1) dw + 1. The
    filters [kh kw, c, o] lie in interleaved memory; `window` packs sh | sw << 8 | dh << 16 |
    dw << 24. Cost: `Target.amp_conv_cycles` (PC 2), each of the n oh output rows a segment.
    `half` (`amp_conv_half`): fp16 partials, at the 16-unit rate (`_amp_conv_half`)."""
    pe = 2 if half else 4
    return Kernel(
        "amp_conv_half" if half else "amp_conv",
        out=_out(lambda p: p["n"] * p["oh"] * p["ow"] * p["o"]),
        ins=(_in(_patch_elements), _in(lambda p: p["kh"] * p["kw"] * p["c"] * p["o"])),
        params=_CONV_PARAMS,
        cycles_fn=lambda t, p, e: t.amp_conv_cycles(
            p["n"] * p["oh"], p["ow"], p["c"], p["o"], p["kh"], p["kw"], partials_esize=pe
        ),
        run=_amp_conv_half if half else _amp_conv,
        rule=_conv_rule,
        amp=True,
    )


_DW_CONV_PARAMS = (*(Param(k) for k in ("n", "c", "oh", "ow", "kh", "kw")), Param("window", "index"))


def _dw_conv_kernel() -> Kernel:
    """A depthwise convolution on the vector path: out[n, oh, ow, c] = sum over kernel positions
    (i, j) of the patch's window (as `amp_conv`'s) times filters[i kw + j] ([c], one per
    channel), fp32 accumulation. Cost: `Target.dw_conv_cycles` (PC 3)."""

    return Kernel(
        "dw_conv",
        out=_out(lambda p: p["n"] * p["oh"] * p["ow"] * p["c"]),
        ins=(_in(_patch_elements), _in(lambda p: p["kh"] * p["kw"] * p["c"])),
        params=_DW_CONV_PARAMS,
        cycles_fn=lambda t, p, e: t.dw_conv_cycles(p["n"] * p["oh"], p["ow"], p["c"], p["kh"], p["kw"], e),
        run=_dw_conv,
        rule=_conv_rule,
    )


def _binary(
    name: str,
    f: Callable[[np.ndarray, np.ndarray], np.ndarray],
    ints: bool = False,
) -> Kernel:
    """out = a (op) b over [m,n]; b has b_rows rows (1 = broadcast a row vector) and b_cols
    columns (1 = broadcast a column vector). Cost: popops BinaryOp1D with the op's row of the
    target's [elementwise] table (docs/cycle-model-sources.md 1.4) [U: PopLibs prices the
    broadcast forms with their own vertices; they take the plain one's cost here]."""
    return Kernel(
        name,
        out=_out(_mn),
        ins=(_in(_mn), _in(lambda p: p["b_rows"] * p["b_cols"])),
        params=_BINARY_PARAMS,
        cycles_fn=lambda t, p, e: t.binary_cycles(name, p["m"] * p["n"], e),
        run=_broadcasting(f),
        rule=_broadcast_rule,
        ints=ints,
    )


def _unary(
    name: str,
    f: Callable[[np.ndarray], np.ndarray],
    cycles: Callable[[Target, str, int, int], int],
    ints: bool = False,
) -> Kernel:
    """out[e] = f(in[e]) over `elements`; `cycles(target, name, elements, element bytes)` is its
    cost: `_popops` or `_popnn`, with the op's row of the target's [elementwise] table."""
    return Kernel(
        name,
        out=_out(_elements),
        ins=(_in(_elements),),
        params=(Param("elements"),),
        cycles_fn=lambda t, p, e: cycles(t, name, p["elements"], e),
        run=_map(f),
        unary=True,
        ints=ints,
    )


def _popops(t: Target, name: str, elements: int, esize: int) -> int:
    """popops UnaryOp1D (docs/cycle-model-sources.md 1.6)."""
    return t.unary_cycles(name, elements, esize)


def _popnn(t: Target, name: str, elements: int, esize: int) -> int:
    """popnn NonLinearity1D, PopLibs' vertex for tanh GeLU and SWISH (docs/cycle-model-sources.md 1.6)."""
    return t.nonlinearity_cycles(name, elements, esize)


def _copy_cycles(t: Target, p: Params, out_esize: int) -> int:
    """A copy converting dtype: popops Cast1D (docs/cycle-model-sources.md 1.5)."""
    return t.cast_cycles(p["elements"])


def _iteration_slice(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    return ins[0].reshape(count, p["iterations"], p["elements"])[:, p["iteration"]]


def _iteration_store(p: Params, count: int, ins: list[np.ndarray], acc: np.ndarray | None) -> Values:
    assert acc is not None
    out = acc.reshape(count, p["iterations"], p["elements"])
    out[:, p["iteration"]] = ins[0].reshape(count, p["elements"])
    return out


def _embedding_slice_kernel() -> Kernel:
    return Kernel(
        "embedding_slice",
        out=_out(lambda p: p["indices"] * p["cols"]),
        ins=(_in(_rows_cols), _in(lambda p: p["indices"], "i32"), _in(lambda p: 2 + 0 * p["rows"], "i32")),
        params=(Param("indices"), Param("rows"), Param("cols")),
        cycles_fn=lambda t, p, e: t.multi_slice_cycles(p["indices"], p["cols"] * e),
        run=_embedding_slice,
    )


def _attention_ins(bias: bool) -> tuple[Operand, ...]:
    """The attention kernels' addresses after the state: q [qr, d], k and v [kr, d] (in dtype),
    with `bias` the bias block [qr, even kr] (in dtype), the offsets f32 [3] and the score
    scratch [qr, kr] (in dtype)."""
    return (
        _in(lambda p: p["qr"] * p["d"]),
        _in(lambda p: p["kr"] * p["d"]),
        _in(lambda p: p["kr"] * p["d"]),
        *((_in(lambda p: p["qr"] * _even(p["kr"])),) if bias else ()),
        _in(lambda p: 3 + 0 * p["qr"], "f32"),
        Operand(Role.SCRATCH, lambda p: p["qr"] * p["kr"]),
    )


# attention_update's and attention_update_bias's parameters
_UPDATE_PARAMS = (
    Param("qr"),
    Param("kr"),
    Param("d"),
    Param("causal", "index"),
    Param("scale_bits", "float"),
    Param("k_base", "index"),
    Param("k_step"),
)
# the bias forms' (no striped keys: a bias needs no stripes, and a CALL's words are full)
_BIAS_UPDATE_PARAMS = _UPDATE_PARAMS[:-1]


def _attention_kernel(name: str, out: Operand, cycles_fn: Callable, run: Callable, bias: bool) -> Kernel:
    """An attention step kernel: its addresses (`_attention_ins`) and parameters are shared, its
    cost and numerics follow the inputs' dtype (the scores'). Rows it skips
    (`attention_skipped_rows`) cost only the -inf fill of their scores (and, starting a state,
    of their empty state)."""
    start = out.role != Role.ACCUMULATOR

    def cycles(t: Target, p: Params, e: int) -> int:
        skip, qr = attention_skipped_rows(p), p["qr"]
        rest = 0
        if skip < qr:
            g = t.costs["amp_out_chans"]
            striped = not bias and p["causal"] >= 2  # else no group skips a row
            groups = [attention_skipped_rows(p, k0) - skip for k0 in range(0, p["kr"], g)] if striped else []
            if any(groups):
                scaled = p["scale_bits"] != ONE_BITS
                rest = t.attention_causal_cycles(qr - skip, p["kr"], p["d"], e, scaled, start, groups)
            else:
                rest = cycles_fn(t, {**p, "qr": qr - skip}, e)
        if not skip:
            return rest
        empty = t.fill_cycles(skip * (p["d"] + 2), 4) if start else 0
        return rest + t.fill_cycles(skip * p["kr"], e) + empty

    return Kernel(
        name,
        out=out,
        ins=_attention_ins(bias),
        params=_BIAS_UPDATE_PARAMS if bias else _UPDATE_PARAMS,
        cycles_fn=cycles,
        run=run,
        rule=lambda p: p["causal"] < 0,
        reads_in_dtype=True,
    )


def _norm_apply_kernel(name: str, shift: bool, padded: bool = False) -> Kernel:
    """A norm's last step on a column block, given every block's statistics of its rows: layer
    norm (`shift`: a beta input too) or RMS norm; `padded`: the last blocks are padded, parameter
    `columns` the row's real width (at least one column in the first block, at most all)."""
    stats = _in(lambda p: p["rows"] * p["parts"] * 2, "f32")
    width = (Param("columns"),) if padded else ()

    def rule(p: Params) -> Any:
        bad = _as_float(p["eps_bits"]) < 0
        return bad | (p["columns"] > p["cols"] * p["parts"]) if padded else bad

    return Kernel(
        name,
        out=_out(_rows_cols),
        ins=(_in(_rows_cols), stats, _in(_cols), *((_in(_cols),) if shift else ())),
        params=(Param("rows"), Param("cols"), Param("parts"), Param("eps_bits", "float"), *width),
        cycles_fn=lambda t, p, e: t.norm_apply_cycles(p["rows"], p["cols"], p["parts"], e, shift=shift),
        run=_norm_apply,
        rule=rule,
    )


_ALL: tuple[Kernel, ...] = (
    _amp("amp_matmul", _out(_mn)),
    # the output is an f32 accumulator, read then written in place
    _amp("amp_matmul_acc", Operand(Role.ACCUMULATOR, _mn, "f32")),
    # out[e] = 0 (an accumulator's start)
    Kernel(
        "zero",
        out=_out(_elements),
        ins=(),
        params=(Param("elements"),),
        cycles_fn=lambda t, p, e: t.fill_cycles(p["elements"], e),
        run=_zero,
        ints=True,
    ),
    _binary("add", np.add, ints=True),
    _binary("mul", np.multiply, ints=True),
    _binary("sub", np.subtract, ints=True),
    _binary("max", np.maximum, ints=True),
    # GeLU, tanh approximation: PopLibs' popnn NonLinearity GELU (exact erf GeLU is gelu_erf)
    _unary("gelu", _gelu_tanh, _popnn),
    _unary("relu", lambda x: np.maximum(x, np.float32(0)), _popops),
    _unary("exp", _exp, _popops),
    _unary("tanh", np.tanh, _popops),
    # out[n,m] = in[m,n]^T
    Kernel(
        "transpose",
        out=_out(_mn),
        ins=(_in(_mn),),
        params=(Param("m"), Param("n")),
        cycles_fn=lambda t, p, e: t.transform_cycles(p["m"], p["n"], e),
        run=_transpose,
        ints=True,
    ),
    # out[e] = sum_p in[p, e]; inputs f32 partials (half partials: `reduce_half`)
    Kernel(
        "reduce_sum",
        out=_out(_elements),
        ins=(_in(lambda p: p["parts"] * p["elements"]),),
        params=(Param("parts"), Param("elements")),
        cycles_fn=lambda t, p, e: t.reduce_cycles(p["parts"], p["elements"], e),
        run=_reduce_sum,
    ),
    # out[e] = in[e], converting dtype
    Kernel(
        "copy",
        out=_out(_elements),
        ins=(_in(_elements),),
        params=(Param("elements"),),
        cycles_fn=_copy_cycles,
        run=_map(lambda x: x),
        ints=True,  # float -> int truncates toward zero (ONNX Cast), int -> float rounds to nearest
    ),
    # row-wise over in[rows, cols] using only the first `valid` columns; padding columns of the
    # output are written as 0
    Kernel(
        "softmax_rows",
        out=_out(_rows_cols),
        ins=(_in(_rows_cols),),
        params=_ROWS,
        cycles_fn=lambda t, p, e: t.softmax_cycles(p["rows"], p["cols"], e),
        run=_softmax_rows,
        rule=_valid_rule,
    ),
    # out[rows] = reduce of each row's first `valid` columns; kind 1 = sum, 2 = max, 3 = mean, 4 = product
    Kernel(
        "reduce_rows",
        out=_out(lambda p: p["rows"]),
        ins=(_in(_rows_cols),),
        params=(*_ROWS, Param("kind")),
        cycles_fn=lambda t, p, e: t.reduce_rows_cycles(p["rows"], p["cols"], e),
        run=_reduce_rows,
        rule=lambda p: _valid_rule(p) | (p["kind"] < 1) | (p["kind"] > 4),
    ),
    # inputs x[rows, cols], gamma[cols], beta[cols]
    Kernel(
        "layer_norm_rows",
        out=_out(_rows_cols),
        ins=(_in(_rows_cols), _in(_cols), _in(_cols)),
        params=(*_ROWS, Param("eps_bits", "float")),
        cycles_fn=lambda t, p, e: t.norm_cycles(p["rows"], p["cols"], e, shift=True),
        run=_norm_rows,
        rule=_norm_rule,
    ),
    # inputs x[rows, cols], gamma[cols]
    Kernel(
        "rms_norm_rows",
        out=_out(_rows_cols),
        ins=(_in(_rows_cols), _in(_cols)),
        params=(*_ROWS, Param("eps_bits", "float")),
        cycles_fn=lambda t, p, e: t.norm_cycles(p["rows"], p["cols"], e, shift=False),
        run=_norm_rows,
        rule=_norm_rule,
    ),
    # out = attention state [qr, d + 2] f32 per row (whatever the out dtype field says): d
    # accumulator values, running max m (-inf), running sum l (0); the accumulator starts at 0
    Kernel(
        "attention_init",
        out=_out(_state, "f32"),
        ins=(),
        params=(Param("qr"), Param("d")),
        cycles_fn=lambda t, p, e: t.fill_cycles(p["qr"] * (p["d"] + 2), 4),
        run=_attention_init,
    ),
    # online-softmax update of the f32 state at `out` (an accumulator) with one key block.
    # Inputs: q[qr, d], k[kr, d], v[kr, d] (in dtype), offsets f32 [3] = (first query row, first
    # key, key end) of this tile; scratch [qr, kr] (in dtype) receives the scaled scores, masked
    # keys as -inf. Key j of the block has global index offsets[1] + k_step (k_base + j) (k_step
    # 1: contiguous keys; more: striped keys, each tile's first below k_step) and counts when it
    # is below offsets[2] and, with `causal` = c >= 1, not after the query's global row
    # offsets[0] + c i (c = 1: contiguous rows; c >= 2: striped rows, each tile's first below c,
    # and the leading rows that precede every key of the block are skipped: state kept, scores
    # -inf, `attention_skipped_rows`; and in each 16-key group the rows that precede all its
    # keys, priced by `Target.attention_causal_cycles`). Keys at or past offsets[2] do not
    # exist: neither their k nor their v rows are read. (The bias forms take no k_step.)
    _attention_kernel(
        "attention_update",
        Operand(Role.ACCUMULATOR, _state, "f32"),
        lambda t, p, e: t.attention_update_cycles(p["qr"], p["kr"], p["d"], e, p["scale_bits"] != ONE_BITS),
        _attention_update,
        bias=False,
    ),
    # out[qr, d] (out dtype) = normalised combination of `parts` f32 states in[parts, qr, d + 2]
    # (the in dtype field is ignored); rows without any counted key are written as 0
    Kernel(
        "attention_combine",
        out=_out(lambda p: p["qr"] * p["d"]),
        ins=(_in(lambda p: p["parts"] * p["qr"] * (p["d"] + 2), "f32"),),
        params=(Param("parts"), Param("qr"), Param("d")),
        cycles_fn=lambda t, p, e: t.attention_combine_cycles(p["parts"], p["qr"], p["d"], e),
        run=_attention_combine,
    ),
    # exact GeLU, 0.5 x (1 + erf(x / sqrt 2)) (appended: kernel indices are the ABI)
    _unary("gelu_erf", _gelu_erf, _popops),
    # 1 / (1 + exp(-x)) (PopLibs' SIGMOID row)
    _unary("sigmoid", _sigmoid, _popops),
    # embedding lookup, PopLibs multiSlice style: out[i, :] = table[idx[i] - row_begin, :] when
    # row_begin <= idx[i] < row_end, else 0 (a partial sum over the tiles holding the table's row
    # blocks). Inputs: table block [rows, cols] (in dtype), indices i32 [indices], the tile's
    # rows i32 [row_begin, row_end]. Cost: multiSlice's per-index shape (Target.multi_slice_cycles)
    _embedding_slice_kernel(),
    # Every elementwise kernel is priced by its own PopLibs row (target [elementwise] table,
    # docs/cycle-model-sources.md 1.4 and 1.6); ops PopLibs has no row for are marked [U] there.
    _unary("sqrt", _f64(np.sqrt), _popops),
    _unary("rsqrt", _rsqrt, _popops),
    _unary("reciprocal", _reciprocal, _popops),
    _unary("neg", np.negative, _popops, ints=True),
    _unary("abs", np.abs, _popops, ints=True),
    _unary("erf", _f64(erf_precise), _popops),
    _unary("sin", _f64(np.sin), _popops),
    _unary("cos", _f64(np.cos), _popops),
    _unary("log", _f64(np.log), _popops),
    # x * sigmoid(x): sigmoid's exp per element (PopLibs prices SWISH with GELU, 1.6)
    _unary("silu", _silu, _popnn),
    _binary("min", np.minimum, ints=True),
    # a / b (PopLibs' DIVIDE row)
    _binary("div", _divide, ints=True),
    # a ** b = exp(b log a) in float64, then rounded once (PopLibs' POWER row)
    _binary("pow", _power),
    # a reshape between row lengths padded differently (an odd last axis): the valid elements
    # of in[rows, cols] re-cut into out[out_rows, out_cols]; priced as the copy it is
    Kernel(
        "repad",
        out=_out(_repad_elements_out),
        ins=(_in(_repad_elements_in),),
        params=(Param("rows"), Param("cols"), Param("out_rows"), Param("out_cols")),
        cycles_fn=lambda t, p, e: t.cast_cycles(_repad_elements_out(p)),
        run=_repad,
        rule=lambda p: p["rows"] * p["cols"] != p["out_rows"] * p["out_cols"],
        ints=True,
    ),
    # rounding to integers and the sign (PopLibs' FLOOR, CEIL, ROUND and SIGNUM rows)
    _unary("floor", np.floor, _popops),
    _unary("ceil", np.ceil, _popops),
    _unary("round", np.round, _popops),  # halves to even, as ONNX Round
    _unary("sign", np.sign, _popops),
    _unary("tan", _f64(np.tan), _popops),
    _unary("sinh", _f64(np.sinh), _popops),
    _unary("cosh", _f64(np.cosh), _popops),
    _unary("asin", _f64(np.arcsin), _popops),
    _unary("acos", _f64(np.arccos), _popops),
    _unary("atan", _f64(np.arctan), _popops),
    _unary("asinh", _f64(np.arcsinh), _popops),
    _unary("acosh", _f64(np.arccosh), _popops),
    _unary("atanh", _f64(np.arctanh), _popops),
    _unary("softplus", _f64(lambda x: np.logaddexp(0.0, x)), _popops),
    _unary("softsign", _softsign, _popops),
    # attention_update with an additive bias (a position bias or a mask, -inf hiding a key) on
    # the scaled scores before the online softmax: inputs q, k, v as attention_update, then the
    # bias block of this call's keys [qr, kr] (in dtype; rows padded to an even length, as a
    # tensor block's last axis is), then offsets and the score scratch. A query row whose keys
    # all score -inf counts none of them.
    _attention_kernel(
        "attention_update_bias",
        Operand(Role.ACCUMULATOR, _state, "f32"),
        lambda t, p, e: t.attention_bias_update_cycles(p["qr"], p["kr"], p["d"], e, p["scale_bits"] != ONE_BITS),
        _attention_update,
        bias=True,
    ),
    # Integers and bools (bool = an i32 word holding 0 or 1). Integer ops cost what the float
    # elementwise op of the same width costs (their words take the FLOAT rows [U]).
    _binary("mod", _mod(False), ints=True),
    _binary("fmod", _mod(True), ints=True),
    # comparisons: any in dtype, out i32 0/1
    _binary("equal", _compare(np.equal), ints=True),
    _binary("less", _compare(np.less), ints=True),
    _binary("less_equal", _compare(np.less_equal), ints=True),
    _binary("greater", _compare(np.greater), ints=True),
    _binary("greater_equal", _compare(np.greater_equal), ints=True),
    # bitwise on i32 words (on 0/1 bools: the logical and, or, xor)
    _binary("and", _bitwise(np.bitwise_and), ints=True),
    _binary("or", _bitwise(np.bitwise_or), ints=True),
    _binary("xor", _bitwise(np.bitwise_xor), ints=True),
    _binary("shift_left", _shift(True), ints=True),
    _binary("shift_right", _shift(False), ints=True),
    _unary("not", lambda x: (x == 0).astype(np.int32), _popops, ints=True),  # logical: 0/1 words
    _unary("bitwise_not", lambda x: np.invert(x.astype(np.int32)), _popops, ints=True),
    # x != 0 as a 0/1 word (NaN is true): a cast to bool from any dtype
    _unary("to_bool", lambda x: (x != 0).astype(np.int32), _popops, ints=True),
    # the wrap-around of the narrow integer types carried in i32 words (after each op that can
    # leave their range)
    _unary("wrap_i8", _wrap(8, True), _popops, ints=True),
    _unary("wrap_u8", _wrap(8, False), _popops, ints=True),
    _unary("wrap_i16", _wrap(16, True), _popops, ints=True),
    _unary("wrap_u16", _wrap(16, False), _popops, ints=True),
    # out[e] = cond[e] ? a[e] : b[e]: inputs a, b (in dtype) and cond (i32 0/1); PopLibs' Select, 5 cycles an element
    Kernel(
        "select",
        out=_out(_elements),
        ins=(_in(_elements), _in(_elements), _in(_elements, "i32")),
        params=(Param("elements"),),
        cycles_fn=lambda t, p, e: t.binary_cycles("select", p["elements"], e),
        run=_select,
        ints=True,
    ),
    # out[rows] i32 = the column of each row's largest (kind 1) or smallest (kind 2) value among
    # the first `valid`, the first such or with `last` the last; priced as a row reduction
    Kernel(
        "arg_rows",
        out=_out(lambda p: p["rows"]),
        ins=(_in(_rows_cols),),
        params=(*_ROWS, Param("kind"), Param("last", "index")),
        cycles_fn=lambda t, p, e: t.reduce_rows_cycles(p["rows"], p["cols"], e),
        run=_arg_rows,
        rule=lambda p: _valid_rule(p) | (p["kind"] < 1) | (p["kind"] > 2) | (p["last"] > 1),
        ints=True,
    ),
    # out[e] = in[iteration, e] of a stacked in[iterations, elements]: this trip's slice of a
    # per-iteration weight (a rolled layer's), picked by the loop's counter; PopLibs' DynamicSlice1D
    Kernel(
        "iteration_slice",
        out=_out(_elements),
        ins=(_in(lambda p: p["iterations"] * p["elements"]),),
        params=(Param("iterations"), Param("elements")),
        cycles_fn=lambda t, p, e: t.dynamic_slice_cycles(p["elements"], e),
        run=_iteration_slice,
        ints=True,
        iterated=True,
    ),
    # attention_update (and _bias) from an empty state, so no attention_init before it and no
    # rescale of a state that holds nothing: the state [qr, d + 2] is written, not read. Inputs
    # as attention_update's (the bias block after v for the _bias form)
    _attention_kernel(
        "attention_start",
        _out(_state, "f32"),
        lambda t, p, e: t.attention_start_cycles(p["qr"], p["kr"], p["d"], e, p["scale_bits"] != ONE_BITS),
        _attention_start,
        bias=False,
    ),
    _attention_kernel(
        "attention_start_bias",
        _out(_state, "f32"),
        lambda t, p, e: t.attention_start_cycles(p["qr"], p["kr"], p["d"], e, p["scale_bits"] != ONE_BITS, bias=True),
        _attention_start,
        bias=True,
    ),
    # out[rows, cols] = the running sum of each row's first `valid` columns of in[rows, cols]
    # (flags: 1 exclusive, 2 reverse), float32 for floats, wrapping for i32 (ONNX CumSum's
    # position ids); the chain of dependent adds priced one element a worker cycle [U]
    Kernel(
        "cumsum_rows",
        out=_out(_rows_cols),
        ins=(_in(_rows_cols),),
        params=(*_ROWS, Param("flags", "index")),
        cycles_fn=lambda t, p, e: t.scan_rows_cycles(p["rows"], p["cols"], e),
        run=_cumsum_rows,
        rule=lambda p: _valid_rule(p) | (p["flags"] > 3),
        ints=True,
    ),
    # a convolution's partials over kernel positions (appended: the ABI keeps earlier indices)
    _amp_conv_kernel(),
    _dw_conv_kernel(),
    # max(a + b, 0): an add (a conv's bias, a residual) and the ReLU after it in one pass over
    # the rows (the sum rounded to the output type first: rounding is monotonic, so this is
    # the two ops' result exactly)
    _binary("add_relu", lambda a, b: np.maximum(np.add(a, b), 0)),
    # the AMP with fp16 partials (opt-in: `plan-ops{partials=f16}`): 16 conv units on IPU2/IPU21,
    # the running sum held in half; and the sum of half partials (ReduceAdd<half, half>: 8-wide
    # accumulations in float)
    _amp("amp_matmul_half", _out(_mn), half=True),
    _amp_conv_kernel(half=True),
    Kernel(
        "reduce_half",
        out=_out(_elements),
        ins=(_in(lambda p: p["parts"] * p["elements"]),),
        params=(Param("parts"), Param("elements")),
        cycles_fn=lambda t, p, e: t.reduce_cycles(p["parts"], p["elements"], e, partials_esize=2),
        run=_reduce_sum,
    ),
    # a max pool of a non-negative value (or of no padding) over a depthwise conv's patch
    Kernel(
        "max_pool",
        out=_out(lambda p: p["n"] * p["oh"] * p["ow"] * p["c"]),
        ins=(_in(_patch_elements),),
        params=_DW_CONV_PARAMS,
        cycles_fn=lambda t, p, e: t.pool_cycles(p["n"] * p["oh"], p["ow"], p["c"], p["kh"], p["kw"], e),
        run=_max_pool,
        rule=_conv_rule,
    ),
    # acc[iteration, e] = in[e] of a stacked acc[iterations, elements], in place: this trip's
    # slice of a loop's stacked output (a recurrent layer's per-step states); PopLibs'
    # DynamicUpdateSlice1D, priced as its DynamicSlice1D (the same loop, stores for loads)
    Kernel(
        "iteration_store",
        out=Operand(Role.ACCUMULATOR, lambda p: p["iterations"] * p["elements"]),
        ins=(_in(_elements),),
        params=(Param("iterations"), Param("elements")),
        cycles_fn=lambda t, p, e: t.dynamic_slice_cycles(p["elements"], e),
        run=_iteration_store,
        iterated=True,
    ),
    # the AMP with its operands' roles swapped (`plan.gemm {swapped}`), fp32 and fp16 partials
    _amp_swapped("amp_matmul_swapped"),
    _amp_swapped("amp_matmul_swapped_half", half=True),
    # a norm over rows split in column blocks across tiles: each tile's row statistics of its
    # block x[rows, cols], out f32 [rows, 2] (sum, sum of squared deviations from the block mean)
    Kernel(
        "norm_stats",
        out=_out(lambda p: p["rows"] * 2, "f32"),
        ins=(_in(_rows_cols),),
        params=(Param("rows"), Param("cols")),
        cycles_fn=lambda t, p, e: t.norm_stats_cycles(p["rows"], p["cols"], e),
        run=_norm_stats,
        reads_in_dtype=True,
    ),
    # then each tile normalises its block from all `parts` blocks' statistics of its rows:
    # inputs x[rows, cols], stats f32 [parts, rows, 2], gamma[cols] (and beta[cols])
    _norm_apply_kernel("layer_norm_apply", shift=True),
    _norm_apply_kernel("rms_norm_apply", shift=False),
)
# the AMP kernels reading this trip's block of a stacked rhs in place (appended: earlier indices stay)
_GEMM_AMP = ("amp_matmul", "amp_matmul_half", "amp_matmul_swapped", "amp_matmul_swapped_half")  # `plan.gemm`'s
_ALL += tuple(_stacked(k) for k in _ALL if k.name in _GEMM_AMP)
# a norm split over column blocks of which the last are padded: each tile's statistics over its
# own real columns (input 1, f32 [2]: their count first), then the apply weighing each block by it
_ALL += (
    Kernel(
        "norm_stats_valid",
        out=_out(lambda p: p["rows"] * 2, "f32"),
        ins=(_in(_rows_cols), _in(lambda p: 2 + 0 * p["rows"], "f32")),
        params=(Param("rows"), Param("cols")),
        cycles_fn=lambda t, p, e: t.norm_stats_cycles(p["rows"], p["cols"], e),
        run=_norm_stats_valid,
        reads_in_dtype=True,
    ),
    _norm_apply_kernel("layer_norm_apply_padded", shift=True, padded=True),
    _norm_apply_kernel("rms_norm_apply_padded", shift=False, padded=True),
)
# a rolled layer's bias add or scale reading this trip's block of its stacked vector in place
STACKED_BINARY: tuple[str, ...] = ("add", "mul")
_ALL += tuple(_stacked(k) for k in _ALL if k.name in STACKED_BINARY)

KERNELS: dict[str, Kernel] = {k.name: k for k in _ALL}
assert len(KERNELS) == len(_ALL), "kernel names must be unique"
KERNEL_NAMES: tuple[str, ...] = tuple(KERNELS)
# The AMP kernels: they stream their weights operand (`Kernel.amp_weights`: the right one, or the
# left one swapped) with 128-bit loads (ld128putcs), so it must lie in one interleaved region, and
# an unswapped one reads its left operand in the cycles it writes the output.
AMP_KERNELS: tuple[str, ...] = tuple(k.name for k in _ALL if k.amp)
# The elementwise maps y = f(x): the kinds of `plan.unary`, each lowered to the kernel of its name.
UNARY_KERNELS: tuple[str, ...] = tuple(k.name for k in _ALL if k.unary)
# The kernels that accept INT32 in a CALL's dtype word.
INT_KERNELS: tuple[str, ...] = tuple(k.name for k in _ALL if k.ints)


def kernel_cycles(target: Target, name: str, p: Params, out_esize: int, in_esize: int | None = None) -> int:
    """One tile's cycles for one call of kernel `name` with parameters `p` (`in_esize`, the
    call's in element size: needed by the kernels that `reads_in_dtype`)."""
    return KERNELS[name].cycles(target, p, out_esize, in_esize)


# ---------------------------------------------------------------------------------------------
# CALL words
# ---------------------------------------------------------------------------------------------


def encode_call(
    kernel: str, in_dtype: DType, out_dtype: DType, out: int, ins: list[int], params: list[int]
) -> np.ndarray:
    """One CALL instruction (`Kernel.call_words` words). Word 2 packs (in_dtype | out_dtype << 8)."""
    k = KERNELS[kernel]
    if len(ins) != k.n_in or len(params) != len(k.params) or k.call_words > INSTRUCTION_WORDS:
        raise ValueError(f"kernel {kernel}: expected {k.n_in} inputs and params {k.param_names}")
    w = np.zeros(k.call_words, np.uint32)
    w[0] = header(Opcode.CALL, k.call_words)
    w[1] = KERNEL_NAMES.index(kernel)
    w[2] = int(in_dtype) | (int(out_dtype) << 8)
    w[3] = out
    w[4 : 4 + k.n_in] = ins
    w[k.param_offset : k.param_offset + len(params)] = params
    return w


def decode_call_params(kernel: str, words: np.ndarray) -> Params:
    """Parameter columns of CALL words [..., 16] (int64 of the u32 words): float parameters stay
    raw u32, all others are read as signed 32-bit values (so a stored -1 reads as -1)."""
    k = KERNELS[kernel]
    out = {}
    for q, param in enumerate(k.params):
        v = np.asarray(words[..., k.param_offset + q], np.int64) & 0xFFFFFFFF
        out[param.name] = v if param.kind == "float" else (v ^ 0x80000000) - 0x80000000
    return out
