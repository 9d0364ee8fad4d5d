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
    CALL = 1  # kernel, dtype, out, in0, in1, in2, p0..p7
    SYNC = 2  # internal sync (BSP barrier)
    EXCHANGE = 3  # phase index
    HOST_IN = 4  # input stream index: host writes a run input into tile memory
    HOST_OUT = 5  # output stream index: host reads a run output
    CHECKPOINT = 6  # checkpoint index: host samples a value for the numerical check


# Kernel table: name -> (number of input addresses, parameter names). The order is the ABI.
KERNELS: dict[str, tuple[int, tuple[str, ...]]] = {
    # out[m,n] = a[m,k] @ b[k,n]; inputs f16, fp32 accumulation; out dtype f16 or f32
    "amp_matmul": (2, ("m", "k", "n")),
    # out = a (op) b over [m,n]; b has b_rows rows (1 = broadcast a row vector) and
    # b_cols columns (1 = broadcast a column vector)
    "add": (2, ("m", "n", "b_rows", "b_cols")),
    "mul": (2, ("m", "n", "b_rows", "b_cols")),
    "sub": (2, ("m", "n", "b_rows", "b_cols")),
    "max": (2, ("m", "n", "b_rows", "b_cols")),
    "gelu": (1, ("elements",)),
    "relu": (1, ("elements",)),
    # out[n,m] = in[m,n]^T
    "transpose": (1, ("m", "n")),
    # out[e] = sum_p in[p, e]; inputs f32 partials
    "reduce_sum": (1, ("parts", "elements")),
    # out[e] = in[e], converting dtype
    "copy": (1, ("elements",)),
}
KERNEL_NAMES: tuple[str, ...] = tuple(KERNELS)


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
    if len(ins) != n_in or len(params) != len(names):
        raise ValueError(f"kernel {kernel}: expected {n_in} inputs and params {names}")
    w = np.zeros(INSTRUCTION_WORDS, np.uint32)
    w[0] = Opcode.CALL
    w[1] = KERNEL_NAMES.index(kernel)
    w[2] = int(in_dtype) | (int(out_dtype) << 8)
    w[3] = out
    w[4 : 4 + n_in] = ins
    w[7 : 7 + len(params)] = params
    return w


def encode_simple(op: Opcode, arg: int = 0) -> np.ndarray:
    w = np.zeros(INSTRUCTION_WORDS, np.uint32)
    w[0] = op
    w[1] = arg
    return w
