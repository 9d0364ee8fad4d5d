"""Emulator tests on hand-built sim16 packages."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from ipu.abi.isa import DType, Opcode, encode_simple, float_bits
from ipu.abi.kernels import KERNELS, ONE_BITS, encode_call
from ipu.abi.package import Binding, Package, PackageError, Phase, Program, host_calls_for
from ipu.abi.package_check import validate_package
from ipu.runtime.emulator import Emulator, EmulatorError
from ipu.target import load_target

T = load_target("sim16")
BASE = T.memory_base
CODE = BASE
DATA = 0x50000
WEIGHTS = 0x80000  # AMP right operands stream from the interleaved region


def code(*instrs: np.ndarray) -> bytes:
    return np.concatenate(list(instrs)).astype("<u4").tobytes()


def sl(*cols: int) -> list[int]:
    """A slice row in ipu.abi.tables.SLICE order."""
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
    """A phase from 14-column rows (no offset or time steps) or full ipu.abi.tables.TRANSFER rows."""
    t = np.array(rows, np.int64)
    t = t.reshape(-1, t.shape[-1] if t.size else 14)
    if t.shape[1] == 14:
        t = np.concatenate([t, np.zeros((len(t), 3), np.int64)], axis=1)
    return Phase(index, 0, 0, "test", t)


def package(
    programs: list[Program],
    phases: list[Phase] | None = None,
    weights: list[Binding] | None = None,
    inputs: list[Binding] | None = None,
    outputs: list[Binding] | None = None,
) -> Package:
    """A sim16 package with the host calls its weights and HOST_IN/HOST_OUT order imply."""
    pkg = Package(
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
    pkg.host_calls = host_calls_for(pkg, T)
    return pkg


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
    X, W, B, TMP, TMP2, Y = DATA, WEIGHTS, DATA + 0x200, DATA + 0x300, DATA + 0x500, DATA + 0x700
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
    # each call at its kernel's model for its output dtype (f32: PopLibs' FLOAT rows)
    expected = (
        T.amp_matmul_cycles(4, 8, 16)
        + T.binary_cycles("add", 64, 4)
        + T.nonlinearity_cycles("gelu", 64, 4)
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
    assert res.total_cycles == (
        T.transform_cycles(3, 5, 4)
        + T.reduce_cycles(3, 5, 4)
        + T.cast_cycles(15)  # the copy to f16 is a Cast1D
        + T.unary_cycles("relu", 15, 4)
        + T.binary_cycles("sub", 15, 4)
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
    A, B_, O = DATA, WEIGHTS, DATA + 0x800
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
    compute = max(T.amp_matmul_cycles(8, 32, 16), T.binary_cycles("add", 128, 4))
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


def _host_package(*body: np.ndarray) -> Package:
    """y [16, 16] = x + w (a 16-element f32 weight): one row per tile, `body` between HOST_IN and
    HOST_OUT (default: the add)."""
    X, W, Y = DATA, DATA + 0x100, DATA + 0x200
    body = body or (encode_call("add", DType.F32, DType.F32, Y, [X, W], [1, 16, 1, 16]),)
    prog = code(encode_simple(Opcode.HOST_IN, 0), *body, encode_simple(Opcode.HOST_OUT, 0), encode_simple(Opcode.END))
    rows = [[sl(16 * t, 0, 1, 16, t, 1, 0, at, 0) for t in range(16)] for at in (X, Y)]
    w = np.arange(16, dtype=np.float32)
    return package(
        [Program(0, 16, CODE, prog)],
        weights=[binding("w", DType.F32, (16,), [sl(0, 0, 1, 16, 0, 16, 1, W, 0)], w.tobytes())],
        inputs=[binding("x", DType.F32, (16, 16), rows[0])],
        outputs=[binding("y", DType.F32, (16, 16), rows[1])],
    )


def test_host_calls_stream_in_phases_and_sum_to_host_cycles() -> None:
    pkg = _host_package()
    validate_package(pkg, T)
    x = np.random.default_rng(7).standard_normal((16, 16)).astype(np.float32)
    emu = Emulator(pkg, T)
    res = emu.run({"x": x})
    np.testing.assert_array_equal(res.outputs["y"], x + np.arange(16, dtype=np.float32))
    # loading ran `initialize` (w); `run` wrote x, executed the program, read y
    kinds = ["host_write", "host_write", "host_in", "compute", "host_out", "host_read"]
    assert [r["kind"] for r in res.profile] == kinds
    host = [(r["call"], r["binding"], r["bytes"], r["cycles"]) for r in res.profile if "call" in r]
    assert host == [
        ("initialize", "w", 64, 600 + 3),  # 600-cycle phase + ceil(64 / 23)
        ("run", "x", 1024, 600 + 45),
        ("run", "y", 1024, 600 + 45),
    ]
    assert res.host_cycles == sum(h[3] for h in host) == 1893
    assert res.total_cycles == T.binary_cycles("add", 16, 4)  # the device's cycles only
    again = emu.run({"x": x})  # already loaded: the run call alone
    assert again.host_cycles == 2 * T.host_transfer_cycles(1024)
    counted = Emulator(pkg, T, execute=False).run({})
    assert (counted.host_cycles, counted.total_cycles) == (res.host_cycles, res.total_cycles)


def test_host_steps_are_checked_at_run_time() -> None:
    x = {"x": np.zeros((16, 16), np.float32)}
    pkg = _host_package()
    pkg.host_calls[1].steps[0].cycles += 1
    with pytest.raises(EmulatorError, match=r"step 0 \(write input 'x'\): the package says 1024 bytes, 646 cycles"):
        Emulator(pkg, T).run(x)
    pkg = _host_package()
    pkg.host_calls = pkg.host_calls[1:]
    with pytest.raises(EmulatorError, match="0 host calls named 'initialize'"):
        Emulator(pkg, T).run(x)
    late = _host_package()
    late.programs[0] = Program(0, 16, CODE, code(encode_simple(Opcode.SYNC)) + late.programs[0].code)
    with pytest.raises(PackageError, match=r"instruction 1 \(HOST_IN\) follows device work \(instruction 0\)"):
        validate_package(late, T)
    with pytest.raises(EmulatorError, match="control instruction 1: HOST_IN after device work"):
        Emulator(late, T).run(x)


def test_code_is_decoded_from_tile_memory() -> None:
    prog = code(encode_simple(Opcode.SYNC), encode_simple(Opcode.END))
    emu = Emulator(package([Program(0, 16, CODE, prog)]), T)
    emu.load()
    assert emu.run({}).total_cycles == T.exchange["sync_cycles"]
    emu.mem[0, 0:4] = np.frombuffer(encode_simple(Opcode.END).tobytes(), np.uint8)  # patch SYNC -> END
    assert emu.run({}).total_cycles == 0


# ------------------------------------------------------------------ row-wise and attention kernels


def _kernel_emulator(*calls: np.ndarray) -> Emulator:
    emu = Emulator(package([Program(0, 16, CODE, code(*calls, encode_simple(Opcode.END)))]), T)
    emu.load()
    return emu


def _put(emu: Emulator, addr: int, per_tile: np.ndarray) -> None:
    """Write per-tile data [16, ...] at `addr` of every tile."""
    raw = np.ascontiguousarray(per_tile).reshape(16, -1).view(np.uint8)
    emu.mem[:, addr - BASE : addr - BASE + raw.shape[1]] = raw


def _get(emu: Emulator, addr: int, n: int, dt: type) -> np.ndarray:
    return emu.mem[:, addr - BASE : addr - BASE + n * np.dtype(dt).itemsize].view(dt).copy()


def test_row_kernels_match_numpy_and_ignore_padding() -> None:
    rng = np.random.default_rng(3)
    rows, cols, valid, eps = 3, 8, 5, 1e-5
    x = rng.standard_normal((16, rows, cols)).astype(np.float16) * np.float16(3)
    x[:, :, valid:] = np.float16(1000)  # padding garbage must not leak into any result
    gamma = rng.standard_normal((16, cols)).astype(np.float16)
    beta = rng.standard_normal((16, cols)).astype(np.float16)
    X, G, B = DATA, DATA + 0x100, DATA + 0x200
    EX, TH, SM, RS, RM, RA, LN, RN = (DATA + 0x400 + 0x100 * i for i in range(8))
    eb = float_bits(eps)
    emu = _kernel_emulator(
        encode_call("exp", DType.F16, DType.F32, EX, [X], [rows * cols]),
        encode_call("tanh", DType.F16, DType.F16, TH, [X], [rows * cols]),
        encode_call("softmax_rows", DType.F16, DType.F32, SM, [X], [rows, cols, valid]),
        encode_call("reduce_rows", DType.F16, DType.F32, RS, [X], [rows, cols, valid, 1]),
        encode_call("reduce_rows", DType.F16, DType.F32, RM, [X], [rows, cols, valid, 2]),
        encode_call("reduce_rows", DType.F16, DType.F32, RA, [X], [rows, cols, valid, 3]),
        encode_call("layer_norm_rows", DType.F16, DType.F32, LN, [X, G, B], [rows, cols, valid, eb]),
        encode_call("rms_norm_rows", DType.F16, DType.F16, RN, [X, G], [rows, cols, valid, eb]),
    )
    validate_package(emu.package, T)
    _put(emu, X, x)
    _put(emu, G, gamma)
    _put(emu, B, beta)
    res = emu.run({})
    xf = x.astype(np.float32)
    xv = xf[:, :, :valid]
    g, b = gamma.astype(np.float32)[:, None, :valid], beta.astype(np.float32)[:, None, :valid]

    def padded(v: np.ndarray) -> np.ndarray:
        out = np.zeros((16, rows, cols), np.float32)
        out[:, :, :valid] = v
        return out.reshape(16, -1)

    with np.errstate(over="ignore"):
        np.testing.assert_allclose(_get(emu, EX, 24, np.float32), np.exp(xf).reshape(16, -1), rtol=1e-6)
    np.testing.assert_array_equal(_get(emu, TH, 24, np.float16), np.tanh(xf).astype(np.float16).reshape(16, -1))
    e = np.exp(xv - xv.max(axis=2, keepdims=True))
    sm = _get(emu, SM, 24, np.float32)
    np.testing.assert_allclose(sm, padded(e / e.sum(axis=2, keepdims=True)), rtol=1e-6, atol=1e-7)
    assert (sm.reshape(16, rows, cols)[:, :, valid:] == 0).all()
    np.testing.assert_allclose(_get(emu, RS, rows, np.float32), xv.sum(axis=2), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(_get(emu, RM, rows, np.float32), xv.max(axis=2))
    np.testing.assert_allclose(_get(emu, RA, rows, np.float32), xv.mean(axis=2), rtol=1e-5, atol=1e-5)
    mu, var = xv.mean(axis=2, keepdims=True), xv.var(axis=2, keepdims=True)
    ln = _get(emu, LN, 24, np.float32)
    np.testing.assert_allclose(ln, padded((xv - mu) / np.sqrt(var + eps) * g + b), rtol=1e-4, atol=1e-5)
    rms = (xv / np.sqrt((xv * xv).mean(axis=2, keepdims=True) + eps) * g).astype(np.float16)
    rn = _get(emu, RN, 24, np.float16).astype(np.float32)
    np.testing.assert_allclose(rn, padded(rms.astype(np.float32)), rtol=2e-3, atol=2e-3)
    assert res.total_cycles == (  # each at its output dtype's rows (f32 4 bytes, f16 2)
        T.unary_cycles("exp", rows * cols, 4)
        + T.unary_cycles("tanh", rows * cols, 2)
        + T.softmax_cycles(rows, cols, 4)
        + 3 * T.reduce_rows_cycles(rows, cols, 4)
        + T.norm_cycles(rows, cols, 4, shift=True)
        + T.norm_cycles(rows, cols, 2, shift=False)
    )


@pytest.mark.parametrize(("in_dt", "out_dt"), [(DType.F32, DType.F32), (DType.F16, DType.F16), (DType.F16, DType.F32)])
def test_sigmoid_kernel_is_the_logistic_function(in_dt: DType, out_dt: DType) -> None:
    np_in, np_out = (np.float16 if d is DType.F16 else np.float32 for d in (in_dt, out_dt))
    n, X, Y = 96, DATA, DATA + 0x400
    x = (np.random.default_rng(7).standard_normal((16, n)) * 6).astype(np_in)
    x[:, :9] = [-100, -88, -20, -1, 0, 1, 20, 88, 100]  # exp(-x) overflows at the left end: 0, not nan
    emu = _kernel_emulator(encode_call("sigmoid", in_dt, out_dt, Y, [X], [n]))
    validate_package(emu.package, T)
    _put(emu, X, x)
    res = emu.run({})
    y = _get(emu, Y, n, np_out)
    xf = x.astype(np.float32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, (np.float32(1) / (np.float32(1) + np.exp(-xf))).astype(np_out))
    truth = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(y.astype(np.float64), truth, atol=1e-3 if np_out is np.float16 else 1e-6)
    assert y[:, 0].max() == 0 and y[:, 8].min() == 1
    # PopLibs' UnaryOp1D SIGMOID row: 6 per 4 halves, 12 per 2 floats (of the output dtype)
    esize = np.dtype(np_out).itemsize
    assert (
        res.total_cycles == T.unary_cycles("sigmoid", n, esize) == KERNELS["sigmoid"].cycles(T, {"elements": n}, esize)
    )


# The elementwise kernels of real exports: float64 truth, the special values IEEE gives, and the cost.
from test_elementwise_ops import TRUTH as _MATH  # noqa: E402 -- one float64 truth per kernel

_SPECIAL = [0.0, -0.0, 1.0, -1.0, 4.0, 1e-30, np.inf, -np.inf, np.nan, -100.0, 100.0, 0.5, 2.5, -0.5, 0.25]


@pytest.mark.parametrize("kernel", sorted(_MATH))
@pytest.mark.parametrize(("in_dt", "out_dt"), [(DType.F32, DType.F32), (DType.F16, DType.F16), (DType.F16, DType.F32)])
def test_elementwise_kernels_match_float64_math(kernel: str, in_dt: DType, out_dt: DType) -> None:
    np_in, np_out = (np.float16 if d is DType.F16 else np.float32 for d in (in_dt, out_dt))
    n, X, Y = 96, DATA, DATA + 0x400
    x = (np.random.default_rng(11).standard_normal((16, n)) * 3).astype(np_in)
    x[:, : len(_SPECIAL)] = np.array(_SPECIAL, np.float32).astype(np_in)
    emu = _kernel_emulator(encode_call(kernel, in_dt, out_dt, Y, [X], [n]))
    validate_package(emu.package, T)
    _put(emu, X, x)
    res = emu.run({})
    y = _get(emu, Y, n, np_out).astype(np.float64)
    f = _MATH[kernel]
    with np.errstate(all="ignore"):
        truth = np.asarray(f(x.astype(np.float64)), np.float64)
    with np.errstate(over="ignore"):  # cosh(100) is inf in f16
        want = truth.astype(np_out).astype(np.float64)  # the truth rounded once to the output type
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    ok = ~np.isnan(want)
    # correctly rounded in float64 (sqrt, erf, sin, cos, log), or float32 steps (rsqrt and silu
    # round after each step as their ONNX spellings do: a few units in the last place)
    tol = 1e-3 if np_out is np.float16 else 6e-7 if kernel in ("rsqrt", "silu", "softsign") else 2e-7
    np.testing.assert_allclose(y[ok], want[ok], rtol=tol, atol=tol * 1e-3)
    if kernel in ("sqrt", "neg", "abs", "reciprocal", "floor", "ceil", "round", "sign"):  # IEEE-exact
        np.testing.assert_array_equal(y[ok], want[ok])
    esize = np.dtype(np_out).itemsize
    model = T.nonlinearity_cycles if kernel == "silu" else T.unary_cycles  # SWISH is popnn's, the rest popops'
    assert res.total_cycles == model(kernel, n, esize) == KERNELS[kernel].cycles(T, {"elements": n}, esize)


@pytest.mark.parametrize(("kernel", "f"), [("min", np.minimum), ("div", np.divide), ("pow", np.power)])
def test_min_div_pow_kernels_broadcast_a_row(kernel: str, f) -> None:
    m, n, X, B, Y = 4, 24, DATA, DATA + 0x400, DATA + 0x800
    rng = np.random.default_rng(12)
    a = (np.abs(rng.standard_normal((16, m, n))) + 0.25).astype(np.float32)
    b = rng.standard_normal((16, 1, n)).astype(np.float32)
    b[:, 0, :3] = [0.0, -0.0, 2.0]  # x / 0 = inf, x ** 0 = 1
    emu = _kernel_emulator(encode_call(kernel, DType.F32, DType.F32, Y, [X, B], [m, n, 1, n]))
    validate_package(emu.package, T)
    _put(emu, X, a)
    _put(emu, B, b)
    res = emu.run({})
    y = _get(emu, Y, m * n, np.float32).reshape(16, m, n)
    with np.errstate(divide="ignore"):
        want = f(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(y, want)  # one rounding of the float64 result: exact
    assert res.total_cycles == T.binary_cycles(kernel, m * n, 4)  # PopLibs' FLOAT MINIMUM, DIVIDE, POWER rows


@pytest.mark.parametrize(("dt", "np_dt"), [(DType.F32, np.float32), (DType.F16, np.float16)])
def test_repad_recuts_padded_rows(dt: DType, np_dt: type) -> None:
    """[4, 5] stored as [4, 6] becomes [20, 1] stored as [20, 2]: the valid elements in order,
    the padding column of the input never read and that of the output written as 0."""
    X, Y = DATA, DATA + 0x400
    x = np.random.default_rng(13).standard_normal((16, 4, 6)).astype(np_dt)
    x[:, :, 5] = np_dt(1000)  # padding garbage
    emu = _kernel_emulator(encode_call("repad", dt, dt, Y, [X], [4, 5, 20, 1]))
    validate_package(emu.package, T)
    _put(emu, X, x)
    res = emu.run({})
    y = _get(emu, Y, 40, np_dt).reshape(16, 20, 2)
    np.testing.assert_array_equal(y[:, :, 0], x[:, :, :5].reshape(16, 20))
    assert (y[:, :, 1] == 0).all()
    assert res.total_cycles == T.cast_cycles(40)  # a Cast1D-rate copy of the 40 stored elements


def _attention_reference(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, offsets: np.ndarray, scale: float, causal: bool
) -> np.ndarray:
    """Masked softmax attention per tile: q [16, qr, d], k/v [16, keys, d] -> [16, qr, d]."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    s = q @ k.transpose(0, 2, 1) * scale
    gk = offsets[:, 1, None, None] + np.arange(k.shape[1])[None, None, :]
    gq = offsets[:, 0, None, None] + np.arange(q.shape[1])[None, :, None]
    ok = gk < offsets[:, 2, None, None]
    if causal:
        ok = ok & (gk <= gq)
    s = np.where(ok, s, -np.inf)
    mx = s.max(axis=2, keepdims=True)
    p = np.where(ok, np.exp(s - np.where(np.isfinite(mx), mx, 0)), 0)
    den = p.sum(axis=2, keepdims=True)
    return np.where(den > 0, (p @ v) / np.where(den > 0, den, 1), 0)


def _half_scores(q: np.ndarray, k: np.ndarray, scale: float, bias: np.ndarray | None = None) -> np.ndarray:
    """attention_update's scores for half inputs: the AMP's q k^T rounded to half, then the
    scale and the bias as half ops (each result rounded to half)."""
    h = np.float16
    s = (q.astype(np.float32) @ k.astype(np.float32).transpose(0, 2, 1)).astype(h)
    s = (s.astype(np.float32) * np.float32(scale)).astype(h)
    if bias is not None:
        s = (s.astype(np.float32) + bias.astype(np.float32)).astype(h)
    return s.astype(np.float32)


@pytest.mark.parametrize("dt", [DType.F16, DType.F32])
@pytest.mark.parametrize("causal", [0, 1])
def test_attention_split_keys_match_full_softmax_attention(causal: int, dt: DType) -> None:
    """Two key blocks through one state, or one state each combined, give softmax attention:
    exactly (to fp32 rounding) for fp32 inputs; for half inputs the scores and probabilities
    are halves (the scratch holds the half scores), so to half precision."""
    rng = np.random.default_rng(10 + causal)
    qr, kr, d, scale = 4, 6, 8, 0.35
    npdt = np.float16 if dt is DType.F16 else np.float32
    q = rng.standard_normal((16, qr, d)).astype(npdt)
    k = rng.standard_normal((16, 2 * kr, d)).astype(npdt)
    v = rng.standard_normal((16, 2 * kr, d)).astype(npdt)
    t = np.arange(16)
    # per tile: first query row, first key, key end; some tiles see an empty second block
    # (key end <= kr) and, causally, query rows before the first key (rows with no keys)
    offsets = np.stack([4 * (t % 4), t % 3, np.where(t % 5 == 0, kr, 2 * kr - t % 4)], axis=1).astype(np.float32)
    Q, K, V, OFF, SCR, SCR2 = DATA, DATA + 0x100, DATA + 0x300, DATA + 0x500, DATA + 0x600, DATA + 0x700
    S1, PARTS, O1, O2 = DATA + 0x800, DATA + 0x900, DATA + 0xB00, DATA + 0xC00
    kbytes = kr * d * q.itemsize
    sb = float_bits(scale)
    emu = _kernel_emulator(
        # one state updated with both key blocks
        encode_call("attention_init", DType.F32, DType.F32, S1, [], [qr, d]),
        encode_call("attention_update", dt, DType.F32, S1, [Q, K, V, OFF, SCR], [qr, kr, d, causal, sb, 0, 1]),
        encode_call(
            "attention_update",
            dt,
            DType.F32,
            S1,
            [Q, K + kbytes, V + kbytes, OFF, SCR2],
            [qr, kr, d, causal, sb, kr, 1],
        ),
        encode_call("attention_combine", DType.F32, DType.F32, O1, [S1], [1, qr, d]),
        # two states (one per key block) combined
        encode_call("attention_init", DType.F32, DType.F16, PARTS, [], [qr, d]),
        encode_call("attention_init", DType.F32, DType.F16, PARTS + qr * (d + 2) * 4, [], [qr, d]),
        encode_call("attention_update", dt, DType.F16, PARTS, [Q, K, V, OFF, SCR], [qr, kr, d, causal, sb, 0, 1]),
        encode_call(
            "attention_update",
            dt,
            DType.F16,
            PARTS + qr * (d + 2) * 4,
            [Q, K + kbytes, V + kbytes, OFF, SCR2],
            [qr, kr, d, causal, sb, kr, 1],
        ),
        encode_call("attention_combine", DType.F16, DType.F16, O2, [PARTS], [2, qr, d]),
    )
    validate_package(emu.package, T)
    for addr, a in ((Q, q), (K, k), (V, v), (OFF, offsets)):
        _put(emu, addr, a)
    res = emu.run({})
    want = _attention_reference(q, k, v, offsets, scale, bool(causal))
    assert np.isfinite(want).all() and (want == 0).any() == bool(causal)  # some rows see no key
    tol = 1e-5 if dt is DType.F32 else 2e-3
    np.testing.assert_allclose(_get(emu, O1, qr * d, np.float32).reshape(16, qr, d), want, rtol=tol, atol=tol)
    got2 = _get(emu, O2, qr * d, np.float16).astype(np.float32).reshape(16, qr, d)
    np.testing.assert_allclose(got2, want, rtol=2e-3, atol=2e-3)
    # scratch of the second block: scaled scores in the inputs' dtype, masked keys -inf
    if dt is DType.F32:
        s = q @ k[:, kr:].transpose(0, 2, 1) * np.float32(scale)
    else:
        s = _half_scores(q, k[:, kr:], scale)
    gk = offsets[:, 1, None, None] + kr + np.arange(kr)
    ok = gk < offsets[:, 2, None, None]
    if causal:
        ok = ok & (gk <= offsets[:, 0, None, None] + np.arange(qr)[:, None])
    got_s = _get(emu, SCR2, qr * kr, npdt).astype(np.float32)
    np.testing.assert_allclose(got_s, np.where(ok, s, -np.inf).reshape(16, -1), rtol=1e-6 if dt is DType.F32 else 1e-3)
    # empty parts keep m = -inf, l = 0 and combine without NaN
    st = _get(emu, PARTS + qr * (d + 2) * 4, qr * (d + 2), np.float32).reshape(16, qr, d + 2)
    assert np.isneginf(st[t % 5 == 0][:, :, d]).all() and (st[t % 5 == 0][:, :, d + 1] == 0).all()
    assert res.total_cycles == (
        3 * T.fill_cycles(qr * (d + 2), 4)  # the f32 states, whatever the dtype word says
        + 4 * T.attention_update_cycles(qr, kr, d, q.itemsize)  # priced by the inputs' dtype
        + T.attention_combine_cycles(1, qr, d, 4)  # out f32: no cast
        + T.attention_combine_cycles(2, qr, d, 2)
    )


def test_half_attention_rounds_scores_and_probabilities_to_half() -> None:
    """With half inputs the state's running max is the half scores' row max and its running sum
    adds the half probabilities round(exp(round(s - max))) in fp32 (fp32 probabilities would
    sum differently, by about 1e-4 relative)."""
    rng = np.random.default_rng(31)
    qr, kr, d = 4, 16, 8
    q = (3 * rng.standard_normal((16, qr, d))).astype(np.float16)
    k = rng.standard_normal((16, kr, d)).astype(np.float16)
    v = rng.standard_normal((16, kr, d)).astype(np.float16)
    offsets = np.tile(np.array([0, 0, kr], np.float32), (16, 1))
    Q, K, V, OFF, SCR, S1 = (DATA + 0x200 * i for i in range(6))
    emu = _kernel_emulator(
        encode_call("attention_init", DType.F32, DType.F32, S1, [], [qr, d]),
        encode_call("attention_update", DType.F16, DType.F32, S1, [Q, K, V, OFF, SCR], [qr, kr, d, 0, ONE_BITS, 0, 1]),
    )
    for addr, a in ((Q, q), (K, k), (V, v), (OFF, offsets)):
        _put(emu, addr, a)
    emu.run({})
    st = _get(emu, S1, qr * (d + 2), np.float32).reshape(16, qr, d + 2)
    s = _half_scores(q, k, 1.0)
    m = s.max(axis=2)
    p = np.exp((s - m[:, :, None]).astype(np.float16).astype(np.float32)).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(st[:, :, d], m)
    np.testing.assert_allclose(st[:, :, d + 1], p.sum(axis=2), rtol=1e-6)
    np.testing.assert_allclose(st[:, :, :d], p @ v.astype(np.float32), rtol=1e-5, atol=1e-6)
    exact = np.exp(s - m[:, :, None]).sum(axis=2)
    assert np.abs(st[:, :, d + 1] / exact - 1).max() > 1e-5  # the rounding is seen


@pytest.mark.parametrize("bias", [False, True])
def test_attention_start_is_an_update_of_an_empty_state(bias: bool) -> None:
    """attention_start (_bias) writes the state attention_init then attention_update (_bias)
    would leave, bit for bit, scores included, and costs less: no init call, no rescale."""
    rng = np.random.default_rng(41)
    qr, kr, d = 4, 6, 8
    q, k, v = (rng.standard_normal((16, n, d)).astype(np.float16) for n in (qr, kr, kr))
    b = rng.standard_normal((16, qr, kr)).astype(np.float16)
    t = np.arange(16)
    offsets = np.stack([4 * (t % 4), t % 3, np.full(16, kr)], axis=1).astype(np.float32)
    Q, K, V, B, OFF, SCR, SCR2, S1, S2 = (DATA + 0x200 * i for i in range(9))
    ins = [Q, K, V, *([B] if bias else []), OFF]
    upd, start = ("attention_update_bias", "attention_start_bias") if bias else ("attention_update", "attention_start")
    par = [qr, kr, d, 1, ONE_BITS, 0, *([] if bias else [1])]
    emu = _kernel_emulator(
        encode_call("attention_init", DType.F32, DType.F32, S1, [], [qr, d]),
        encode_call(upd, DType.F16, DType.F32, S1, [*ins, SCR], par),
        encode_call(start, DType.F16, DType.F32, S2, [*ins, SCR2], par),
    )
    validate_package(emu.package, T)
    for addr, a in ((Q, q), (K, k), (V, v), (B, b), (OFF, offsets)):
        _put(emu, addr, a)
    res = emu.run({})
    n = qr * (d + 2)
    np.testing.assert_array_equal(_get(emu, S2, n, np.float32), _get(emu, S1, n, np.float32))
    np.testing.assert_array_equal(_get(emu, SCR2, qr * kr, np.float16), _get(emu, SCR, qr * kr, np.float16))
    cost = T.attention_start_cycles(qr, kr, d, 2, scaled=False, bias=bias)
    full = T.fill_cycles(n, 4) + (T.attention_bias_update_cycles if bias else T.attention_update_cycles)(
        qr, kr, d, 2, scaled=False
    )
    assert res.total_cycles == full + cost and cost < full


def test_call_parameters_follow_the_inputs_and_flags_may_be_zero() -> None:
    upd = encode_call("attention_update", DType.F16, DType.F32, DATA, [DATA] * 5, [4, 4, 8, 0, float_bits(1.0), 0, 1])
    assert list(upd[KERNELS["attention_update"].param_offset :][:7]) == [4, 4, 8, 0, float_bits(1.0), 0, 1]
    assert KERNELS["attention_init"].param_offset == 4 and KERNELS["amp_matmul"].param_offset == 6
    pkg = _kernel_emulator(upd).package
    validate_package(pkg, T)  # causal = 0 and k_base = 0 are fine
    bad = upd.copy()
    bad[KERNELS["attention_update"].param_offset + 5] = np.uint32(0xFFFFFFFF)  # k_base = -1
    emu = _kernel_emulator(bad)
    with pytest.raises(PackageError, match=r"attention_update\) has invalid parameters .*'k_base': -1"):
        validate_package(emu.package, T)
    with pytest.raises(EmulatorError, match="invalid parameters"):
        emu.run({})
    zero_shape = encode_call("softmax_rows", DType.F32, DType.F32, DATA, [DATA], [4, 8, 0])
    with pytest.raises(PackageError, match="softmax_rows"):
        validate_package(_kernel_emulator(zero_shape).package, T)


@pytest.mark.parametrize(("in_dt", "out_dt"), [(DType.F16, DType.F32), (DType.F32, DType.F32), (DType.F16, DType.F16)])
def test_embedding_slice_writes_the_tiles_rows_and_zeros(in_dt: DType, out_dt: DType) -> None:
    """Each tile holds rows [row_begin, row_end) of a table: for every index it writes that row
    (the i32 ids and rows read as integers, never as floats) or zeros; summed over the tiles
    holding the row blocks that is the lookup. Cycles: multiSlice's per-index cost shape."""
    np_in, np_out = (np.float16 if d is DType.F16 else np.float32 for d in (in_dt, out_dt))
    rows, cols, n = 5, 6, 7  # 16 tiles: 4 row blocks of 5 rows (the last holds rows 15..17 of 18) x 4 replicas
    rng = np.random.default_rng(11)
    table = rng.standard_normal((18, cols)).astype(np_in)
    blocks = np.zeros((16, rows, cols), np_in)
    rng_rows = np.zeros((16, 2), np.int32)
    for t in range(16):
        b = t % 4
        lo, hi = b * rows, min(18, (b + 1) * rows)
        blocks[t, : hi - lo] = table[lo:hi]
        blocks[t, hi - lo :] = np_in(1000)  # padding rows past V must never be read
        rng_rows[t] = (lo, hi)
    ids = np.array([0, 17, 4, 5, 15, 9, 16], np.int32)
    T_, I_, R_, Y = DATA, DATA + 0x200, DATA + 0x280, DATA + 0x300
    emu = _kernel_emulator(encode_call("embedding_slice", in_dt, out_dt, Y, [T_, I_, R_], [n, rows, cols]))
    validate_package(emu.package, T)
    _put(emu, T_, blocks)
    _put(emu, I_, np.broadcast_to(ids, (16, n)))
    _put(emu, R_, rng_rows)
    res = emu.run({})
    y = _get(emu, Y, n * cols, np_out).reshape(16, n, cols)
    for t in range(16):
        lo, hi = rng_rows[t]
        want = np.where(((ids >= lo) & (ids < hi))[:, None], table[np.clip(ids, 0, 17)], 0).astype(np_out)
        np.testing.assert_array_equal(y[t], want)
    np.testing.assert_array_equal(y[:4].astype(np.float32).sum(axis=0), table[ids].astype(np_out).astype(np.float32))
    esize = 2 if out_dt is DType.F16 else 4
    assert res.total_cycles == T.multi_slice_cycles(n, cols * esize)
    assert res.total_cycles == (
        T.costs["local_copy_call"]
        + n * T.costs["slice_index_cycles"]
        + n * -(-cols * esize // T.costs["local_copy_bytes_per_cycle"])
    )


def test_a_call_dtype_word_naming_int32_is_refused() -> None:
    """Only the kernels marked `ints` take INT32 as a CALL's in/out dtype (copy does: a cast);
    a float-only kernel (exp) naming it is refused by the validator and the emulator, and a code
    no dtype has by both for any kernel."""
    validate_package(
        _kernel_emulator(encode_call("copy", DType.INT32, DType.F32, DATA + 0x100, [DATA], [4])).package, T
    )
    emu = _kernel_emulator(encode_call("exp", DType.INT32, DType.F32, DATA + 0x100, [DATA], [4]))
    with pytest.raises(PackageError, match=r"\(exp\) names i32 in its dtype word; the kernel computes on floats only"):
        validate_package(emu.package, T)
    with pytest.raises(EmulatorError, match="exp computes on floats only; its dtype word names i32"):
        emu.run({})
    emu = _kernel_emulator(encode_call("copy", DType.F32, DType.F32, DATA + 0x100, [DATA], [4]))
    w = np.frombuffer(emu.package.programs[0].code, "<u4").copy()
    w[2] = 9 | 2 << 8  # no dtype has code 9
    emu.package.programs[0] = dataclasses.replace(emu.package.programs[0], code=w.tobytes())
    with pytest.raises(PackageError, match="invalid dtype word"):
        validate_package(emu.package, T)


def test_attention_update_bias_adds_the_bias_and_masks_with_minus_inf() -> None:
    """attention_update_bias: the bias block (rows padded to an even length) is added to the
    scaled scores before the online softmax; -inf hides a key, and a row whose keys are all
    hidden combines to 0."""
    rng = np.random.default_rng(21)
    qr, kr, d, scale = 3, 5, 8, 0.5
    q = rng.standard_normal((16, qr, d)).astype(np.float16)
    k = rng.standard_normal((16, kr, d)).astype(np.float16)
    v = rng.standard_normal((16, kr, d)).astype(np.float16)
    bias = rng.standard_normal((16, qr, kr + 1)).astype(np.float16)  # [qr, even(kr)] blocks
    bias[:, :, kr] = np.float16(np.nan)  # the padding column is never read
    bias[:, 0, 1] = -np.inf
    bias[:, 2, :] = -np.inf  # every key of row 2 hidden
    offsets = np.tile(np.array([0, 0, kr, 0], np.float32)[:3], (16, 1))
    Q, K, V, B, OFF, SCR, S1, O1 = (DATA + 0x100 * i for i in range(8))
    sb = float_bits(scale)
    emu = _kernel_emulator(
        encode_call("attention_init", DType.F32, DType.F32, S1, [], [qr, d]),
        encode_call("attention_update_bias", DType.F16, DType.F32, S1, [Q, K, V, B, OFF, SCR], [qr, kr, d, 0, sb, 0]),
        encode_call("attention_combine", DType.F32, DType.F32, O1, [S1], [1, qr, d]),
    )
    validate_package(emu.package, T)
    for addr, a in ((Q, q), (K, k), (V, v), (B, bias), (OFF, offsets)):
        _put(emu, addr, a)
    res = emu.run({})
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) * scale + bias[:, :, :kr].astype(np.float64)
    mx = s.max(axis=2, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(mx), mx, 0))
    den = p.sum(axis=2, keepdims=True)
    want = np.where(den > 0, (p @ v.astype(np.float64)) / np.where(den > 0, den, 1), 0)
    got = _get(emu, O1, qr * d, np.float32).reshape(16, qr, d)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)  # half scores and probabilities
    assert (got[:, 2] == 0).all()
    # the scratch holds the half scores: the AMP's, scaled, plus the bias, each rounded to half
    got_s = _get(emu, SCR, qr * kr, np.float16).astype(np.float32).reshape(16, qr, kr)
    np.testing.assert_allclose(got_s, _half_scores(q, k, scale, bias[:, :, :kr]), rtol=1e-3)
    np.testing.assert_allclose(got_s, s, rtol=5e-3, atol=5e-3)
    assert res.total_cycles == (
        T.fill_cycles(qr * (d + 2), 4)
        + T.attention_bias_update_cycles(qr, kr, d, 2)
        + T.attention_combine_cycles(1, qr, d, 4)
    )


@pytest.mark.parametrize(("a", "b", "bad"), [(WEIGHTS, DATA, None), (DATA, WEIGHTS, "input 0")])
def test_a_swapped_amp_streams_its_lhs_from_interleaved_memory(a: int, b: int, bad: str | None) -> None:
    """The swapped AMP takes its lhs as the weights it loads 128 bits at a time: the lhs must lie
    in the interleaved region (its rhs need not); the scratch holds the product's transpose."""
    out, scratch = DATA + 0x1000, DATA + 0x2000
    prog = code(
        encode_call("amp_matmul_swapped", DType.F16, DType.F32, out, [a, b, scratch], [8, 32, 16]),
        encode_simple(Opcode.END),
    )
    pkg = package([Program(0, 1, CODE, prog)])
    validate_package(pkg, T)
    emu = Emulator(pkg, T)
    if bad is not None:
        with pytest.raises(EmulatorError, match=f"amp_matmul_swapped {bad}.*one interleaved region"):
            emu.run({})
        return
    rng = np.random.default_rng(5)
    av = rng.standard_normal((8, 32)).astype(np.float16)
    bv = rng.standard_normal((32, 16)).astype(np.float16)
    emu.mem[0, a - BASE : a - BASE + av.nbytes] = av.view(np.uint8).ravel()
    emu.mem[0, b - BASE : b - BASE + bv.nbytes] = bv.view(np.uint8).ravel()
    res = emu.run({})
    got = emu.mem[0, out - BASE : out - BASE + 8 * 16 * 4].view(np.float32).reshape(8, 16)
    np.testing.assert_allclose(got, av.astype(np.float32) @ bv.astype(np.float32), rtol=1e-5, atol=1e-5)
    tr = emu.mem[0, scratch - BASE : scratch - BASE + 8 * 16 * 4].view(np.float32).reshape(16, 8)
    np.testing.assert_array_equal(tr, got.T)
    assert res.total_cycles == T.amp_matmul_cycles(16, 32, 8) + T.transform_cycles(16, 8, 4)


def test_tile_memory_starts_zeroed_and_is_writable() -> None:
    """Tile memory (an anonymous mapping, not NumPy's allocation) is zeroed, writable, of the
    asked shape and dtype, and each allocation its own."""
    from ipu.runtime.emulator import tile_memory

    a, b = tile_memory(3, 4096, np.uint8), tile_memory(3, 4096, np.bool_)
    assert a.shape == b.shape == (3, 4096) and a.dtype == np.uint8 and b.dtype == np.bool_
    assert not a.any() and not b.any()
    a[2, 4095] = 7
    b[0, 0] = True
    assert a[2, 4095] == 7 and b[0, 0] and not tile_memory(3, 4096, np.uint8).any()
    assert tile_memory(0, 4096, np.uint8).shape == (0, 4096)


def test_unpopulated_tile_memory_costs_only_the_pages_touched() -> None:
    """`populate=False` (a system's stage emulators): zeroed and writable alike, but a page is
    resident only once touched, so 64 MB of it touched in one place cost a page, not 64 MB."""
    import os
    from pathlib import Path

    from ipu.runtime.emulator import tile_memory

    statm = Path("/proc/self/statm")
    if not statm.exists():
        pytest.skip("resident memory is read from /proc (Linux)")

    def resident() -> int:
        return int(statm.read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    before = resident()
    lazy = tile_memory(64, 1 << 20, np.uint8, populate=False)
    lazy[63, 12345] = 9
    assert lazy[63, 12345] == 9 and lazy.sum() == 9  # reading untouched pages maps the shared zero page
    assert resident() - before < 32 << 20
    before = resident()
    eager = tile_memory(64, 1 << 20, np.uint8)
    assert resident() - before >= 60 << 20
    assert not eager.any()
