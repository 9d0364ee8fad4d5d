"""Emulator tests on hand-built sim16 packages."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu.runtime.emulator import Emulator, EmulatorError
from ipu.runtime.isa import DType, Opcode, encode_call, encode_simple
from ipu.runtime.package import Binding, Package, Phase, Program, validate_package
from ipu.target import load_target

T = load_target("sim16")
BASE = T.memory_base
CODE = BASE
DATA = 0x50000


def code(*instrs: np.ndarray) -> bytes:
    return np.concatenate(list(instrs)).astype("<u4").tobytes()


def sl(*cols: int) -> list[int]:
    """A slice row in SLICE_COLUMNS order."""
    assert len(cols) == 9
    return list(cols)


def binding(
    name: str, dtype: DType, shape: tuple[int, ...], slices: list[list[int]], data: bytes | None = None
) -> Binding:
    return Binding(name, dtype, shape, np.array(slices, np.int64).reshape(-1, 9), data)


def xfer(
    start: int,
    src: int,
    src_addr: int,
    dst: int,
    dst_addr: int,
    rows: int = 1,
    row_words: int = 16,
    src_stride: int = 0,
    dst_stride: int = 0,
    par: int = 1,
    pss: int = 0,
    pds: int = 0,
    mc: int = 1,
    mcs: int = 0,
) -> list[int]:
    return [
        start,
        src,
        src_addr,
        src_stride,
        dst,
        dst_addr,
        dst_stride,
        rows,
        row_words,
        par,
        pss,
        pds,
        mc,
        mcs,
    ]


def phase(index: int, rows: list[list[int]]) -> Phase:
    return Phase(index, 0, 0, "test", np.array(rows, np.int64).reshape(-1, 14))


def package(
    programs: list[Program],
    phases: list[Phase] | None = None,
    weights: list[Binding] | None = None,
    inputs: list[Binding] | None = None,
    outputs: list[Binding] | None = None,
) -> Package:
    return Package(
        "test",
        T.name,
        T.tiles,
        T.memory_base,
        T.memory_size,
        programs,
        phases or [],
        weights or [],
        inputs or [],
        outputs or [],
        [],
    )


def exchange_package(transfers: list[list[int]]) -> Package:
    prog = code(encode_simple(Opcode.SYNC), encode_simple(Opcode.EXCHANGE, 0), encode_simple(Opcode.END))
    return package([Program(0, 16, CODE, prog)], [phase(0, transfers)])


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def test_matmul_add_gelu_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float16)
    w = rng.standard_normal((8, 16)).astype(np.float16)
    b = rng.standard_normal((1, 16)).astype(np.float32)
    X, W, B, TMP, TMP2, Y = DATA, DATA + 0x100, DATA + 0x200, DATA + 0x300, DATA + 0x500, DATA + 0x700
    prog = code(
        encode_simple(Opcode.HOST_IN, 0),
        encode_call("amp_matmul", DType.F16, DType.F32, TMP, [X, W], [4, 8, 16]),
        encode_call("add", DType.F32, DType.F32, TMP2, [TMP, B], [4, 16, 1, 16]),
        encode_call("gelu", DType.F32, DType.F32, Y, [TMP2], [64]),
        encode_simple(Opcode.SYNC),
        encode_simple(Opcode.HOST_OUT, 0),
        encode_simple(Opcode.END),
    )
    pkg = package(
        [Program(0, 16, CODE, prog)],
        weights=[
            binding("w", DType.F16, (8, 16), [sl(0, 0, 1, 128, 0, 16, 1, W, 0)], w.tobytes()),
            binding("b", DType.F32, (1, 16), [sl(0, 0, 1, 16, 0, 16, 1, B, 0)], b.tobytes()),
        ],
        inputs=[binding("x", DType.F16, (64, 8), [sl(32 * t, 0, 1, 32, t, 1, 0, X, 0) for t in range(16)])],
        outputs=[binding("y", DType.F32, (64, 16), [sl(64 * t, 0, 1, 64, t, 1, 0, Y, 0) for t in range(16)])],
    )
    validate_package(pkg, T)
    res = Emulator(pkg, T).run({"x": x})
    want = gelu(x.astype(np.float32) @ w.astype(np.float32) + b)
    assert res.outputs["y"].dtype == np.float32
    np.testing.assert_allclose(res.outputs["y"], want, rtol=1e-5, atol=1e-5)
    expected = (
        T.amp_matmul_cycles(4, 8, 16)
        + T.elementwise_cycles("add", 64)
        + T.elementwise_cycles("gelu", 64)
        + T.exchange["sync_cycles"]
    )
    assert res.total_cycles == expected


def test_kernels_transpose_reduce_copy_relu_broadcast() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 3, 5)).astype(np.float32)
    col = rng.standard_normal((16, 3, 1)).astype(np.float32)
    A, C, TR, RS, CP, RL, MX = (DATA + 0x100 * i for i in range(7))
    prog = code(
        encode_call("transpose", DType.F32, DType.F32, TR, [A], [3, 5]),
        encode_call("reduce_sum", DType.F32, DType.F32, RS, [A], [3, 5]),
        encode_call("copy", DType.F32, DType.F16, CP, [A], [15]),
        encode_call("relu", DType.F32, DType.F32, RL, [A], [15]),
        encode_call("sub", DType.F32, DType.F32, MX, [A, C], [3, 5, 3, 1]),
        encode_simple(Opcode.END),
    )
    emu = Emulator(package([Program(0, 16, CODE, prog)]), T)
    emu.load()
    off = lambda addr: addr - BASE  # noqa: E731
    emu.mem[:, off(A) : off(A) + 60] = a.reshape(16, -1).view(np.uint8)
    emu.mem[:, off(C) : off(C) + 12] = col.reshape(16, -1).view(np.uint8)
    res = emu.run({})
    get = lambda addr, n, dt: emu.mem[:, off(addr) : off(addr) + n * np.dtype(dt).itemsize].view(dt)  # noqa: E731
    np.testing.assert_array_equal(get(TR, 15, np.float32).reshape(16, 5, 3), a.transpose(0, 2, 1))
    np.testing.assert_allclose(get(RS, 5, np.float32), a.sum(axis=1), rtol=1e-6)
    np.testing.assert_array_equal(get(CP, 15, np.float16), a.reshape(16, -1).astype(np.float16))
    np.testing.assert_array_equal(get(RL, 15, np.float32), np.maximum(a, 0).reshape(16, -1))
    np.testing.assert_array_equal(get(MX, 15, np.float32), (a - col).reshape(16, -1))
    copy_cycles = T.costs["local_copy_call"] + -(-30 // T.costs["local_copy_bytes_per_cycle"])
    assert res.total_cycles == (
        T.elementwise_cycles("transpose", 15)
        + T.reduce_cycles(3, 5)
        + copy_cycles
        + T.elementwise_cycles("relu", 15)
        + T.elementwise_cycles("sub", 15)
    )


def test_exchange_moves_blocks_with_snapshot_semantics() -> None:
    A, B = DATA, DATA + 0x1000
    transfers = [
        # ring: tile t -> t+1 (t < 15) as one par family, two 32-byte rows with strides
        xfer(0, 0, A, 1, B, rows=2, row_words=8, src_stride=64, dst_stride=32, par=15, pss=1, pds=1),
        xfer(0, 15, A, 0, B, rows=2, row_words=8, src_stride=64, dst_stride=32),
        # swap tile 0 <-> tile 1 at the same address: reads must see pre-phase memory
        xfer(16, 0, A + 0x800, 1, A + 0x800, row_words=4),
        xfer(16, 1, A + 0x800, 0, A + 0x800, row_words=4),
    ]
    pkg = exchange_package(transfers)
    validate_package(pkg, T)
    emu = Emulator(pkg, T)
    emu.load()
    rng = np.random.default_rng(2)
    before = rng.integers(0, 256, (16, 0x1000), dtype=np.uint8)
    emu.mem[:, A - BASE : A - BASE + 0x1000] = before
    res = emu.run({})
    for t in range(16):
        got = emu.mem[(t + 1) % 16, B - BASE : B - BASE + 64]
        np.testing.assert_array_equal(got, np.concatenate([before[t, 0:32], before[t, 64:96]]))
    np.testing.assert_array_equal(emu.mem[1, A - BASE + 0x800 : A - BASE + 0x810], before[0, 0x800:0x810])
    np.testing.assert_array_equal(emu.mem[0, A - BASE + 0x800 : A - BASE + 0x810], before[1, 0x800:0x810])
    ex = [r for r in res.profile if r["kind"] == "exchange"][0]
    assert (ex["horizon"], ex["transfers"], ex["lower_bound"]) == (20, 18, 20)
    assert ex["cycles"] == 20 + T.exchange["route_tail_cycles"]


def test_multicast_family() -> None:
    A = DATA
    pkg = exchange_package([xfer(0, 0, A, 1, A + 0x100, row_words=8, mc=15, mcs=1)])
    emu = Emulator(pkg, T)
    emu.load()
    emu.mem[0, A - BASE : A - BASE + 32] = np.arange(32, dtype=np.uint8) + 1
    res = emu.run({})
    got = emu.mem[1:, A - BASE + 0x100 : A - BASE + 0x120]
    np.testing.assert_array_equal(got, np.tile(np.arange(32, dtype=np.uint8) + 1, (15, 1)))
    assert not emu.mem[0, A - BASE + 0x100 : A - BASE + 0x120].any()
    ex = res.profile[-1]
    assert (ex["kind"], ex["lower_bound"], ex["horizon"], ex["transfers"]) == ("exchange", 8, 8, 15)


@pytest.mark.parametrize(
    ("transfers", "message"),
    [
        ([xfer(0, 0, DATA, 1, DATA), xfer(8, 0, DATA, 2, DATA)], "send port of tile 0"),
        ([xfer(0, 1, DATA, 3, DATA), xfer(15, 2, DATA, 3, DATA + 0x100)], "receive port of tile 3"),
        ([xfer(0, 1, DATA, 3, DATA), xfer(100, 2, DATA, 3, DATA + 32)], "tile 3: transfers 0 and 1"),
        ([xfer(0, 0, DATA, 1, BASE + T.memory_size - 32)], "outside memory"),
        ([xfer(0, 0, DATA, 1, DATA, mc=2, mcs=0)], "receive port of tile 1"),
    ],
)
def test_exchange_rule_violations(transfers: list[list[int]], message: str) -> None:
    emu = Emulator(exchange_package(transfers), T)
    with pytest.raises(EmulatorError, match=message) as e:
        emu.run({})
    assert "phase 0" in str(e.value)


def test_cycles_two_programs_take_the_max() -> None:
    A, B_, O = DATA, DATA + 0x400, DATA + 0x800
    tail = [encode_simple(Opcode.SYNC), encode_simple(Opcode.EXCHANGE, 0), encode_simple(Opcode.END)]
    heavy = code(encode_call("amp_matmul", DType.F16, DType.F32, O, [A, B_], [8, 32, 16]), *tail)
    light = code(encode_call("add", DType.F32, DType.F32, O, [A, B_], [8, 16, 1, 1]), *tail)
    pkg = package(
        [Program(0, 8, CODE, heavy), Program(8, 8, CODE, light)],
        [
            phase(
                0,
                [
                    xfer(0, 0, A, 9, A + 0x1000, rows=2, row_words=8, dst_stride=32),
                    xfer(10, 3, A, 12, A + 0x1000, rows=1, row_words=4),
                ],
            )
        ],
    )
    validate_package(pkg, T)
    res = Emulator(pkg, T).run({})
    compute = max(T.amp_matmul_cycles(8, 32, 16), T.elementwise_cycles("add", 128))
    assert compute == T.amp_matmul_cycles(8, 32, 16)
    assert res.total_cycles == compute + T.exchange["sync_cycles"] + 16 + T.exchange["route_tail_cycles"]
    assert [r["kind"] for r in res.profile] == ["compute", "sync", "exchange"]


def test_inputs_checked_and_gather_scatter_roundtrip() -> None:
    X = DATA
    prog = code(encode_simple(Opcode.HOST_IN, 0), encode_simple(Opcode.HOST_OUT, 0), encode_simple(Opcode.END))
    # x [4, 6]: columns 0..2 on tiles 0 and 2 (replicas), columns 3..5 on tile 5, row stride 16 bytes
    slices = [sl(0, 6, 4, 3, 0, 2, 2, X, 16), sl(3, 6, 4, 3, 5, 1, 0, X, 16)]
    pkg = package(
        [Program(0, 16, CODE, prog)],
        inputs=[binding("x", DType.F32, (4, 6), slices)],
        outputs=[binding("x_out", DType.F32, (4, 6), slices)],
    )
    validate_package(pkg, T)
    emu = Emulator(pkg, T)
    x = np.arange(24, dtype=np.float64).reshape(4, 6)
    res = emu.run({"x": x})
    np.testing.assert_array_equal(res.outputs["x_out"], x.astype(np.float32))
    np.testing.assert_array_equal(emu.mem[2, X - BASE : X - BASE + 12].view(np.float32), [0, 1, 2])
    np.testing.assert_array_equal(emu.mem[5, X - BASE + 16 : X - BASE + 28].view(np.float32), [9, 10, 11])
    with pytest.raises(EmulatorError, match=r"missing \['x'\]"):
        emu.run({})
    with pytest.raises(EmulatorError, match="unexpected"):
        emu.run({"x": x, "y": x})
    with pytest.raises(EmulatorError, match=r"shape \(6, 4\), expected \(4, 6\)"):
        emu.run({"x": x.T})


def test_code_is_decoded_from_tile_memory() -> None:
    prog = code(encode_simple(Opcode.SYNC), encode_simple(Opcode.END))
    emu = Emulator(package([Program(0, 16, CODE, prog)]), T)
    emu.load()
    assert emu.run({}).total_cycles == T.exchange["sync_cycles"]
    emu.mem[0, 0:4] = np.frombuffer(np.uint32(Opcode.END).tobytes(), np.uint8)  # patch SYNC -> END
    assert emu.run({}).total_cycles == 0
