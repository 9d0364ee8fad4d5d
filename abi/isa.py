"""The tile instruction set shared by the encoder (codegen) and the emulator.

Every instruction is 16 little-endian u32 words (64 bytes): word 0 is the opcode, the rest
are operands. A `CALL` names a kernel by its index in `ipu.abi.kernels.KERNELS` and carries
addresses and shape scalars; each kernel (operands, parameters, cycles, semantics) is defined
once, in `ipu.abi.kernels`.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

INSTRUCTION_WORDS = 16
INSTRUCTION_BYTES = INSTRUCTION_WORDS * 4
CODE_GRAIN = 4096
"""A code region larger than the target's reserve is a whole number of these bytes."""


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


MAX_TRIPS = (1 << 31) - 1
"""Most trips a LOOP_BEGIN may count (a 31-bit loop counter), and so a `repeat` op's count."""


class DType(IntEnum):
    F16 = 1
    F32 = 2
    INT32 = 3  # appended (codes are the package ABI): integer host inputs, e.g. embedding indices


DTYPE_NAMES = {DType.F16: "f16", DType.F32: "f32", DType.INT32: "i32"}
DTYPE_BY_NAME = {v: k for k, v in DTYPE_NAMES.items()}
DTYPE_SIZE = {DType.F16: 2, DType.F32: 4, DType.INT32: 4}
NUMPY_DTYPE = {DType.F16: np.float16, DType.F32: np.float32, DType.INT32: np.int32}
# the dtypes a CALL's dtype word may name: floats for every kernel, INT32 only for the kernels
# that say `ints` in `ipu.abi.kernels` (bool is carried as INT32 holding 0 or 1)
CALL_DTYPES = (DType.F16, DType.F32, DType.INT32)


def float_bits(x: float) -> int:
    return int(np.array(x, np.float32).view(np.uint32))


def bits_float(b: int) -> float:
    return float(np.array(b, np.uint32).view(np.float32))


def encode_simple(op: Opcode, arg: int = 0) -> np.ndarray:
    w = np.zeros(INSTRUCTION_WORDS, np.uint32)
    w[0] = op
    w[1] = arg
    return w
