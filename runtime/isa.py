"""The tile instruction set shared by the encoder (codegen) and the emulator.

Every instruction is 16 little-endian u32 words (64 bytes): word 0 is the opcode, the rest
are operands. A `CALL` names a kernel by its index in `KERNELS` and carries addresses and
shape scalars; what a kernel does is defined once, by the emulator.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

INSTRUCTION_WORDS = 16
INSTRUCTION_BYTES = INSTRUCTION_WORDS * 4


class Opcode(IntEnum):
    END = 0
    CALL = 1  # kernel, dtype, out, inputs..., params...
    SYNC = 2  # internal sync (BSP barrier)
    EXCHANGE = 3  # phase index
    HOST_IN = 4  # input stream index: host writes a run input into tile memory
    HOST_OUT = 5  # output stream index: host reads a run output
    CHECKPOINT = 6  # checkpoint index: host samples a value for the numerical check
    LOOP_BEGIN = 7  # iteration count: the instructions up to the matching LOOP_END run that often
    LOOP_END = 8


# Kernel table: name -> (number of input addresses, parameter names). The order is the ABI.
# Words 4 .. 4+n_in-1 hold the input addresses, the parameters follow immediately.
# Shape parameters are positive; flags (`causal`) and offsets (`k_base`) may be zero;
# `*_bits` parameters carry a float32's bit pattern.
KERNELS: dict[str, tuple[int, tuple[str, ...]]] = {
    # out[m,n] = a[m,k] @ b[k,n]; inputs f16, fp32 accumulation; out dtype f16 or f32
    "amp_matmul": (2, ("m", "k", "n")),
    # out[m,n] += a[m,k] @ b[k,n]; out is an f32 accumulator read, then written, in place
    "amp_matmul_acc": (2, ("m", "k", "n")),
    # out[e] = 0 (an accumulator's start)
    "zero": (0, ("elements",)),
    # out = a (op) b over [m,n]; b has b_rows rows (1 = broadcast a row vector) and
    # b_cols columns (1 = broadcast a column vector)
    "add": (2, ("m", "n", "b_rows", "b_cols")),
    "mul": (2, ("m", "n", "b_rows", "b_cols")),
    "sub": (2, ("m", "n", "b_rows", "b_cols")),
    "max": (2, ("m", "n", "b_rows", "b_cols")),
    "gelu": (1, ("elements",)),
    "relu": (1, ("elements",)),
    "exp": (1, ("elements",)),
    "tanh": (1, ("elements",)),
    # out[n,m] = in[m,n]^T
    "transpose": (1, ("m", "n")),
    # out[e] = sum_p in[p, e]; inputs f32 partials
    "reduce_sum": (1, ("parts", "elements")),
    # out[e] = in[e], converting dtype
    "copy": (1, ("elements",)),
    # row-wise over in[rows, cols] using only the first `valid` columns; padding columns of
    # the output are written as 0
    "softmax_rows": (1, ("rows", "cols", "valid")),
    # out[rows] = reduce of each row's first `valid` columns; kind 1 = sum, 2 = max, 3 = mean
    "reduce_rows": (1, ("rows", "cols", "valid", "kind")),
    # inputs x[rows, cols], gamma[cols], beta[cols]
    "layer_norm_rows": (3, ("rows", "cols", "valid", "eps_bits")),
    # inputs x[rows, cols], gamma[cols]
    "rms_norm_rows": (2, ("rows", "cols", "valid", "eps_bits")),
    # out = attention state [qr, d + 2] f32 per row (whatever the out dtype field says): d
    # accumulator values, running max m (-inf), running sum l (0); the accumulator starts at 0
    "attention_init": (0, ("qr", "d")),
    # online-softmax update of the state at `out` (f32, read, then written in place) with one
    # key block. Inputs: q[qr, d], k[kr, d], v[kr, d] (in dtype), offsets f32 [3] = (first query
    # row, first key, key end) of this tile, scratch f32 [qr, kr] (receives the scaled scores,
    # masked keys as -inf). The out dtype field is ignored: the state is always f32.
    # Key j of the block has global index offsets[1] + k_base + j and counts when it is below
    # offsets[2] and, with `causal`, not after the query's global row offsets[0] + i. Keys at or
    # past offsets[2] do not exist: neither their k nor their v rows are read.
    "attention_update": (5, ("qr", "kr", "d", "causal", "scale_bits", "k_base")),
    # out[qr, d] (out dtype) = normalised combination of `parts` f32 states in[parts, qr, d + 2]
    # (the in dtype field is ignored); rows without any counted key are written as 0
    "attention_combine": (1, ("parts", "qr", "d")),
    # exact GeLU, 0.5 x (1 + erf(x / sqrt 2)) (appended: kernel indices are the ABI)
    "gelu_erf": (1, ("elements",)),
}
KERNEL_NAMES: tuple[str, ...] = tuple(KERNELS)
# The AMP kernels: they stream their right operand with 128-bit loads (ld128putcs), so it must lie
# in one interleaved region, and they read their left operand in the cycles they write the output.
AMP_KERNELS = ("amp_matmul", "amp_matmul_acc")


class DType(IntEnum):
    F16 = 1
    F32 = 2


DTYPE_NAMES = {DType.F16: "f16", DType.F32: "f32"}
DTYPE_BY_NAME = {v: k for k, v in DTYPE_NAMES.items()}
DTYPE_SIZE = {DType.F16: 2, DType.F32: 4}
NUMPY_DTYPE = {DType.F16: np.float16, DType.F32: np.float32}


def encode_call(
    kernel: str, in_dtype: DType, out_dtype: DType, out: int, ins: list[int], params: list[int]
) -> np.ndarray:
    """One CALL instruction. Word 2 packs (in_dtype | out_dtype << 8)."""
    n_in, names = KERNELS[kernel]
    if len(ins) != n_in or len(params) != len(names) or 4 + n_in + len(names) > INSTRUCTION_WORDS:
        raise ValueError(f"kernel {kernel}: expected {n_in} inputs and params {names}")
    w = np.zeros(INSTRUCTION_WORDS, np.uint32)
    w[0] = Opcode.CALL
    w[1] = KERNEL_NAMES.index(kernel)
    w[2] = int(in_dtype) | (int(out_dtype) << 8)
    w[3] = out
    w[4 : 4 + n_in] = ins
    w[4 + n_in : 4 + n_in + len(params)] = params
    return w


def param_offset(kernel: str) -> int:
    """Word index of a kernel's first parameter."""
    return 4 + KERNELS[kernel][0]


def float_bits(x: float) -> int:
    return int(np.array(x, np.float32).view(np.uint32))


def bits_float(b: int) -> float:
    return float(np.array(b, np.uint32).view(np.float32))


def encode_simple(op: Opcode, arg: int = 0) -> np.ndarray:
    w = np.zeros(INSTRUCTION_WORDS, np.uint32)
    w[0] = op
    w[1] = arg
    return w
