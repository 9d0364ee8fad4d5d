"""The variable-length instruction encoding (`ipu.abi.isa`): what codegen writes, the emulator and
the validator read back."""

from __future__ import annotations

import numpy as np
import pytest

from ipu.abi.isa import INSTRUCTION_WORDS, SIMPLE_WORDS, DType, IsaError, Opcode, encode_simple, pack, unpack
from ipu.abi.kernels import KERNELS, encode_call


def _code(*instrs: np.ndarray) -> bytes:
    return np.concatenate(instrs).astype("<u4").tobytes()


def test_each_instruction_is_as_long_as_its_operands() -> None:
    call = encode_call("amp_conv", DType.F16, DType.F32, 0x1000, [0x2000, 0x3000], [1, 16, 4, 4, 16, 3, 3, 0x0101])
    assert len(call) == KERNELS["amp_conv"].call_words == 4 + 2 + 8
    assert [len(encode_simple(op)) for op in SIMPLE_WORDS] == list(SIMPLE_WORDS.values())
    assert len(encode_simple(Opcode.SYNC)) == 1 and len(encode_simple(Opcode.EXCHANGE, 7)) == 2
    assert max(k.call_words for k in KERNELS.values()) <= INSTRUCTION_WORDS


def test_unpack_gives_rows_of_sixteen_words_and_pack_inverts_it() -> None:
    call = encode_call("relu", DType.F16, DType.F16, 0x1000, [0x2000], [64])
    code = _code(encode_simple(Opcode.HOST_IN, 3), call, encode_simple(Opcode.SYNC), encode_simple(Opcode.END))
    words, lengths = unpack(code)
    assert words.shape == (4, INSTRUCTION_WORDS)
    assert list(words[:, 0]) == [Opcode.HOST_IN, Opcode.CALL, Opcode.SYNC, Opcode.END]  # the opcode alone
    assert words[0, 1] == 3 and list(words[1, 3:6]) == [0x1000, 0x2000, 64]
    assert list(lengths) == [2, len(call), 1, 1]
    assert pack(words, lengths) == code
    assert len(code) == 4 * int(lengths.sum())


def test_unpack_stops_at_end() -> None:
    code = _code(encode_simple(Opcode.END), np.array([0xDEADBEEF, 0xFFFFFFFF], np.uint32))  # data after END
    words, lengths = unpack(code)
    assert len(words) == 1 and list(lengths) == [1]


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (_code(encode_simple(Opcode.SYNC)), r"runs out after 1 instructions \(4 bytes\) without END"),
        (
            _code(np.array([int(Opcode.SYNC) | 2 << 8, 0], np.uint32)),
            r"instruction 0 \(byte 0\) has invalid header 0x202",
        ),
        (_code(np.array([int(Opcode.CALL) | 3 << 8, 0, 0], np.uint32)), r"invalid header 0x301"),  # shorter than a CALL
        (_code(np.array([99 | 1 << 8], np.uint32)), r"invalid header 0x163"),  # no such opcode
        (_code(np.array([int(Opcode.END) | 17 << 8], np.uint32)), r"invalid header"),  # longer than 16 words
        (_code(np.array([1 << 16 | int(Opcode.END) | 1 << 8], np.uint32)), r"invalid header"),  # reserved bits
        (_code(encode_simple(Opcode.SYNC), np.array([int(Opcode.CALL) | 6 << 8, 0], np.uint32)), r"byte 4\) runs past"),
    ],
)
def test_bad_code_is_refused_by_name(code: bytes, message: str) -> None:
    with pytest.raises(IsaError, match=message):
        unpack(code, "program 0")
