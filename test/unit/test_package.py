"""Package file format (round trip, corruption) and validation against a target."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from ipu.abi.isa import SIMPLE_WORDS, DType, Opcode, encode_simple, float_bits, pack, unpack
from ipu.abi.kernels import encode_call
from ipu.abi.package import Binding, Checkpoint, HostCall, HostStep, Package, PackageError, Phase, Program
from ipu.abi.package_check import validate_package
from ipu.abi.package_io import packages_equal, read_package, write_package
from ipu.target import load_target

T = load_target("sim16")
CODE, DATA = T.memory_base, 0x50000


def code(*instrs: np.ndarray) -> bytes:
    return np.concatenate(list(instrs)).astype("<u4").tobytes()


def good_package() -> Package:
    """A valid two-program sim16 package using every part of the model."""
    w = np.arange(16 * 16, dtype=np.float16).reshape(16, 16)
    body = [
        encode_simple(Opcode.HOST_IN, 0),
        encode_call("amp_matmul", DType.F16, DType.F32, DATA + 0x1000, [DATA, DATA + 0x400], [16, 16, 16]),
        encode_simple(Opcode.SYNC),
        encode_simple(Opcode.EXCHANGE, 0),
        encode_simple(Opcode.CHECKPOINT, 0),
        encode_simple(Opcode.HOST_OUT, 0),
        encode_simple(Opcode.END),
    ]
    relu = encode_call("relu", DType.F32, DType.F32, DATA + 0x1000, [DATA + 0x1000], [256])
    other = [body[0], relu, *body[2:]]
    replicated = np.array([[0, 0, 1, 256, 0, 16, 1, DATA, 0]])
    transfers = np.array(
        [
            [0, 0, DATA + 0x1000, 64, 1, DATA + 0x2000, 64, 4, 16, 8, 2, 2, 1, 0, 0, 0, 0],  # par family
            [0, 1, DATA + 0x1000, 0, 2, DATA + 0x3000, 0, 1, 16, 1, 0, 0, 7, 2, 0, 0, 0],  # multicast
            [64, 0, DATA + 0x4000, 0, 9, DATA + 0x5000, 0, 1, 4, 3, 0, 1, 1, 1, 16, 0, 4],  # serial scatter
        ]
    )
    out = Binding("y", DType.F32, (16, 16), np.array([[0, 0, 1, 256, 3, 1, 0, DATA + 0x1000, 0]]))
    return Package(
        compiler_version="0.1.0",
        target=T.name,
        tiles=T.tiles,
        memory_base=T.memory_base,
        memory_size=T.memory_size,
        programs=[Program(0, 8, CODE, code(*body)), Program(8, 8, CODE, code(*other))],
        phases=[Phase(0, 64, 80, "greedy", transfers)],
        weights=[Binding("w", DType.F16, (16, 16), np.array([[0, 0, 1, 256, 0, 16, 1, DATA + 0x400, 0]]), w.tobytes())],
        inputs=[Binding("x", DType.F16, (16, 16), replicated)],
        outputs=[out],
        checkpoints=[Checkpoint(0, "mm", "mm", dataclasses.replace(out, name="mm"))],
        host_calls=[
            HostCall("initialize", [HostStep("write", "w", 512, T.host_transfer_cycles(512))]),
            HostCall(
                "run",
                [
                    HostStep("write", "x", 512, T.host_transfer_cycles(512)),
                    HostStep("execute"),
                    HostStep("read", "y", 1024, T.host_transfer_cycles(1024)),
                ],
            ),
        ],
        metrics={"exchange_cycles": 200, "compute_cycles": -1},
    )


def test_round_trip(tmp_path: Path) -> None:
    pkg = good_package()
    validate_package(pkg, T)
    path = tmp_path / "a.ipuexe"
    write_package(pkg, path)
    back = read_package(path)
    assert packages_equal(pkg, back)
    assert back.weights[0].dtype is DType.F16
    assert back.phases[0].transfers.dtype == np.int64
    assert [p.name for p in tmp_path.iterdir()] == ["a.ipuexe"]  # no temporary left behind
    back.metrics["exchange_cycles"] = 1
    assert not packages_equal(pkg, back)


def test_host_permutation_round_trip(tmp_path: Path) -> None:
    """An input the host rearranges keeps its permutation through the file; the slices index the
    rearranged array (`Binding.device_shape`)."""
    pkg = good_package()
    x = pkg.inputs[0]
    pkg.inputs[0] = dataclasses.replace(x, shape=(16, 16), perm=(1, 0))
    validate_package(pkg, T)
    write_package(pkg, tmp_path / "p.ipuexe")
    back = read_package(tmp_path / "p.ipuexe")
    assert back.inputs[0].perm == (1, 0) and back.outputs[0].perm == ()
    assert packages_equal(pkg, back)
    b = Binding("img", DType.F32, (2, 3, 4), x.slices, perm=(0, 2, 1))
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert b.device_shape() == (2, 4, 3)
    assert np.array_equal(b.device_array(a), a.transpose(0, 2, 1))
    padded = dataclasses.replace(b, pads=(0, 1, 0, 0, 2, 1))  # 1 row above, 2 columns right, 1 channel
    assert padded.device_shape() == (2, 7, 4)
    d = padded.device_array(a)
    assert np.array_equal(d[:, 1:5, :3], a.transpose(0, 2, 1)) and d.sum() == a.sum()


def test_read_errors(tmp_path: Path) -> None:
    path = tmp_path / "a.ipuexe"
    with pytest.raises(PackageError, match="not found"):
        read_package(path)
    write_package(good_package(), path)
    raw = path.read_bytes()
    bad = tmp_path / "bad.ipuexe"
    bad.write_bytes(raw[: len(raw) // 16 * 8])
    with pytest.raises(PackageError, match="corrupt or truncated"):
        read_package(bad)
    bad.write_bytes(b"\xff" * 8 + raw[8:])
    with pytest.raises(PackageError, match="corrupt or truncated"):
        read_package(bad)
    bad.write_bytes(raw[:-3])
    with pytest.raises(PackageError, match="not a package"):
        read_package(bad)
    with pytest.raises(PackageError, match="traversal limit"):
        read_package(path, traversal_limit_words=16)
    write_package(dataclasses.replace(good_package(), schema_version=99), bad)
    with pytest.raises(PackageError, match="schema version 99"):
        read_package(bad)


def _replace_transfers(pkg: Package, row: int, col: int, value: int) -> Package:
    t = pkg.phases[0].transfers.copy()
    t[row, col] = value
    pkg.phases[0] = dataclasses.replace(pkg.phases[0], transfers=t)
    return pkg


def _bad_kernel(pkg: Package) -> Package:
    words, n = unpack(pkg.programs[1].code)
    words[1, 1] = 999
    pkg.programs[1] = dataclasses.replace(pkg.programs[1], code=pack(words, n))
    return pkg


def _extra_sync(pkg: Package) -> Package:
    words = np.frombuffer(pkg.programs[1].code, "<u4")
    pkg.programs[1] = dataclasses.replace(
        pkg.programs[1], code=encode_simple(Opcode.SYNC).astype("<u4").tobytes() + words.tobytes()
    )
    return pkg


def _short_weight(pkg: Package) -> Package:
    pkg.weights[0].data = pkg.weights[0].data[:-2]  # type: ignore[index]
    return pkg


def _far_call(pkg: Package) -> Package:
    words, n = unpack(pkg.programs[0].code)
    words[1, 3] = T.memory_end - 16  # output address: 1 KiB result does not fit
    pkg.programs[0] = dataclasses.replace(pkg.programs[0], code=pack(words, n))
    return pkg


def _uncovered_output(pkg: Package) -> Package:
    pkg.outputs[0].slices = pkg.outputs[0].slices.copy()
    pkg.outputs[0].slices[0, 3] = 128
    return pkg


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda p: _replace_transfers(p, 0, 5, T.memory_end - 32), "phase 0: transfer 0 destination bytes"),
        (lambda p: _replace_transfers(p, 1, 13, 3), "phase 0: transfer 1 destination tile"),
        (lambda p: _replace_transfers(p, 0, 8, 0), "non-positive"),
        (_bad_kernel, "program 1: instruction 1 calls invalid kernel index 999"),
        (_extra_sync, "program 1 .*control skeleton differs"),
        (lambda p: dataclasses.replace(p, target="mk2"), "target is 'mk2'"),
        (_short_weight, "weight 'w': data has 510 bytes"),
        (_far_call, r"program 0: instruction 1 \(amp_matmul\) operand 0"),
        (_uncovered_output, "output 'y': slices do not cover logical element 128"),
        (lambda p: dataclasses.replace(p, phases=[]), "no exchange phase 0"),
        (
            lambda p: (p.programs.__setitem__(1, dataclasses.replace(p.programs[1], first_tile=4)), p)[1],
            "overlap",
        ),
        (lambda p: (p.inputs.append(p.inputs[0]), p)[1], "duplicate input binding name 'x'"),
        (
            lambda p: (p.inputs.__setitem__(0, dataclasses.replace(p.inputs[0], perm=(0, 0))), p)[1],
            r"input 'x': host permutation \[0, 0\]: not a permutation of 2 axes",
        ),
        (
            lambda p: (p.outputs.__setitem__(0, dataclasses.replace(p.outputs[0], perm=(1, 0))), p)[1],
            "output 'y': a host permutation or padding: only an input is rearranged on the host",
        ),
    ],
)
def test_validation_errors(mutate, message: str) -> None:  # noqa: ANN001
    with pytest.raises(PackageError, match=message):
        validate_package(mutate(good_package()), T)


def test_wrong_target_object() -> None:
    with pytest.raises(PackageError, match="target mk2"):
        validate_package(good_package(), load_target("mk2"))


def _with_call(call: np.ndarray) -> Package:
    """good_package() with `call` after program 1's HOST_IN (device work follows the input writes)."""
    pkg = good_package()
    code = pkg.programs[1].code
    at = 4 * SIMPLE_WORDS[Opcode.HOST_IN]
    pkg.programs[1] = dataclasses.replace(pkg.programs[1], code=code[:at] + call.astype("<u4").tobytes() + code[at:])
    return pkg


_END = T.memory_end


@pytest.mark.parametrize(
    ("call", "message"),
    [
        # the attention state is f32 whatever the out dtype: 4 x 10 x 4 bytes must fit
        (
            encode_call("attention_init", DType.F16, DType.F16, _END - 4 * 10 * 2, [], [4, 8]),
            r"\(attention_init\) operand 0",
        ),
        # the score scratch is in the inputs' dtype: 4 x 6 halves, or floats, must fit
        (
            encode_call(
                "attention_update",
                DType.F16,
                DType.F16,
                DATA,
                [DATA] * 4 + [_END - 4 * 6 * 2 + 2],
                [4, 6, 8, 1, 0, 0, 1],
            ),
            r"\(attention_update\) operand 5",
        ),
        (
            encode_call(
                "attention_update", DType.F32, DType.F16, DATA, [DATA] * 4 + [_END - 4 * 6 * 2], [4, 6, 8, 1, 0, 0, 1]
            ),
            r"\(attention_update\) operand 5",
        ),
        (
            encode_call("attention_combine", DType.F16, DType.F16, DATA, [_END - 2 * 4 * 10 * 2], [2, 4, 8]),
            r"\(attention_combine\) operand 1",
        ),
        (
            encode_call("layer_norm_rows", DType.F32, DType.F32, DATA, [DATA, DATA, _END - 16], [2, 8, 8, 0]),
            "operand 3",
        ),
        (encode_call("reduce_rows", DType.F32, DType.F32, DATA, [DATA], [2, 8, 8, 5]), "invalid parameters"),
        (encode_call("softmax_rows", DType.F32, DType.F32, DATA, [DATA], [2, 8, 9]), "invalid parameters"),
        (
            encode_call("attention_update", DType.F16, DType.F32, DATA, [DATA] * 5, [4, 6, 8, 0xFFFFFFFE, 0, 0, 1]),
            "'causal': -2",
        ),
        (
            encode_call("attention_update", DType.F16, DType.F32, DATA, [DATA] * 5, [4, 6, 0, 1, 0, 0, 1]),
            "invalid parameters",
        ),
        (
            encode_call("rms_norm_rows", DType.F32, DType.F32, DATA, [DATA, DATA], [2, 8, 8, float_bits(float("nan"))]),
            "invalid parameters",
        ),
    ],
)
def test_new_kernel_validation(call: np.ndarray, message: str) -> None:
    with pytest.raises(PackageError, match=message):
        validate_package(_with_call(call), T)


def test_new_kernels_valid_at_the_memory_edge() -> None:
    """Exact-fit operands pass: sizes follow each Kernel's operand_elements and the f32 attention operands."""
    calls = [
        encode_call("attention_init", DType.F16, DType.F16, _END - 4 * 10 * 4, [], [4, 8]),
        encode_call(
            "attention_update",
            DType.F16,
            DType.F16,
            _END - 4 * 10 * 4,
            [_END - 32 * 2, DATA, DATA, _END - 12, _END - 96],
            [4, 6, 8, 0, 0, 0, 1],
        ),
        encode_call("attention_combine", DType.F16, DType.F16, _END - 32 * 2, [_END - 80 * 4], [1, 4, 8]),
        encode_call("reduce_rows", DType.F16, DType.F16, _END - 4, [DATA], [2, 8, 5, 3]),
        encode_call("exp", DType.F32, DType.F16, _END - 2, [_END - 4], [1]),
    ]
    for call in calls:
        validate_package(_with_call(call), T)
