"""The tile instruction set shared by the encoder (codegen) and the emulator.

An instruction is 1 to 16 little-endian u32 words: the header word packs the opcode (bits 0-7)
and the instruction's length in words (bits 8-15); the rest are operands. `SYNC`, `LOOP_END` and
`END` are the header alone, a reference (`EXCHANGE`, a stream, a checkpoint) or `LOOP_BEGIN` has
one operand, and a `CALL` names a kernel by its index in `ipu.abi.kernels.KERNELS` and carries
its dtypes, addresses and parameters (as many words as that kernel has: `Kernel.call_words`).
Each kernel (operands, parameters, cycles, semantics) is defined once, in `ipu.abi.kernels`.

Code is variable-length because it shares each tile's executable region with the exchange
rows: a fixed 64-byte word per instruction spent most of a large model's code region on the
padding of syncs and exchanges. Readers work on the unpacked form (`unpack`): one row of
`INSTRUCTION_WORDS` per instruction, word 0 the opcode, unused operands zero.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

INSTRUCTION_WORDS = 16
"""Most words an instruction has (the width of its unpacked row)."""
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


SIMPLE_WORDS = {
    Opcode.END: 1,
    Opcode.SYNC: 1,
    Opcode.LOOP_END: 1,
    Opcode.EXCHANGE: 2,
    Opcode.HOST_IN: 2,
    Opcode.HOST_OUT: 2,
    Opcode.CHECKPOINT: 2,
    Opcode.LOOP_BEGIN: 2,
}
"""Words of every instruction but CALL (whose length is its kernel's)."""


class IsaError(ValueError):
    """Code that does not decode: a bad header, or no END before the code runs out."""


def header(op: Opcode, words: int) -> int:
    return int(op) | (words << 8)


def encode_simple(op: Opcode, arg: int = 0) -> np.ndarray:
    """A non-CALL instruction: its header, and its operand if it has one."""
    n = SIMPLE_WORDS[op]
    w = np.zeros(n, np.uint32)
    w[0] = header(op, n)
    if n > 1:
        w[1] = arg
    return w


def unpack(code: bytes | np.ndarray, where: str = "code") -> tuple[np.ndarray, np.ndarray]:
    """The instructions of `code` up to and including the first END: their words [n, 16]
    (int64; word 0 the opcode, missing operands zero) and their lengths in words [n]. Raises
    `IsaError` naming the instruction and byte offset of a bad header, or the missing END."""
    raw = np.frombuffer(code, np.uint8) if isinstance(code, bytes | bytearray | memoryview) else code
    buf = np.asarray(raw, np.uint8)
    total = len(buf) // 4
    flat = buf[: total * 4].view("<u4")
    rows: list[np.ndarray] = []
    lengths: list[int] = []
    at = 0
    while True:
        if at >= total:
            raise IsaError(f"{where}: runs out after {len(rows)} instructions ({at * 4} bytes) without END")
        h = int(flat[at])
        op, n = h & 0xFF, (h >> 8) & 0xFF
        bad = h >> 16 or not 1 <= n <= INSTRUCTION_WORDS or op > max(Opcode)
        bad = bad or (op != Opcode.CALL and n != SIMPLE_WORDS[Opcode(op)]) or (op == Opcode.CALL and n < 4)
        if bad:
            raise IsaError(f"{where}: instruction {len(rows)} (byte {at * 4}) has invalid header {h:#x}")
        if at + n > total:
            raise IsaError(f"{where}: instruction {len(rows)} (byte {at * 4}) runs past the end of the code")
        row = np.zeros(INSTRUCTION_WORDS, np.int64)
        row[:n] = flat[at : at + n]
        row[0] = op
        rows.append(row)
        lengths.append(n)
        at += n
        if op == Opcode.END:
            return np.stack(rows), np.asarray(lengths, np.int64)


def pack(words: np.ndarray, lengths: np.ndarray) -> bytes:
    """The code of unpacked instructions (`unpack`'s inverse)."""
    out: list[np.ndarray] = []
    for row, n in zip(np.asarray(words, np.int64), lengths, strict=True):
        w = (row[: int(n)] & 0xFFFFFFFF).astype(np.uint32)
        w[0] = header(Opcode(int(row[0])), int(n))
        out.append(w)
    return np.concatenate(out).astype("<u4").tobytes()
