"""tasm -> package -> disassembly -> package is exact: the disassembly of a package is a complete
tasm module (bindings as explicit slice tables, weights as their bytes) that re-encodes to the
same file bytes, content digest included."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES
from xdsl.dialects import builtin
from xdsl.parser import Parser
from xdsl.printer import Printer

from ipu.abi.package import Package, host_calls_for
from ipu.abi.package_check import validate_package
from ipu.abi.package_io import package_bytes, read_package
from ipu.abi.tables import ATTENTION_OFFSETS, MOVE, SLICE, TRANSFER
from ipu.codegen.ipuexe import build_package, disassemble
from ipu.context import make_context
from ipu.dialects import tasm
from ipu.dialects.table import table_attr, table_of
from ipu.target import Target, load_target
from ipu.tools.common import parse_file
from ipu.transforms.pipeline import IpuCompilePass

# each example on the target its README row names; the stack adds a `tasm.loop`
CASES = [
    ("mlp_small.mlir", "sim16"),
    ("attention_small.mlir", "sim64"),
    ("transformer_block_small.mlir", "sim64"),
    ("transformer_stack_small.mlir", "sim64"),
]


def _parse(text: str) -> builtin.ModuleOp:
    module = Parser(make_context(), text, "disassembly").parse_module()
    module.verify()
    return module


def _read(data: bytes, tmp_path: Path, name: str) -> Package:
    path = tmp_path / name
    path.write_bytes(data)
    return read_package(path)  # checks the content digest


@pytest.fixture(scope="module", params=CASES, ids=[name for name, _ in CASES])
def compiled(request: pytest.FixtureRequest) -> tuple[builtin.ModuleOp, Target]:
    name, tname = request.param
    ctx, tg = make_context(), load_target(tname)
    module = parse_file(ctx, EXAMPLES / name)
    IpuCompilePass(target=tg.name).apply(ctx, module)
    return module, tg


def test_disassembly_rebuilds_the_same_bytes(compiled: tuple[builtin.ModuleOp, Target], tmp_path: Path) -> None:
    module, tg = compiled
    a = package_bytes(build_package(module, tg))
    pkg_a = _read(a, tmp_path, "a.ipuexe")
    validate_package(pkg_a, tg)
    text = disassemble(pkg_a, tg)

    dis = _parse(text)
    bound = [op for op in dis.walk() if isinstance(op, tasm._BoundValue)]
    assert bound and all(op.slices is not None and op.layout is None for op in bound)
    assert all(isinstance(op.init, builtin.DenseIntOrFPElementsAttr) for op in bound if isinstance(op, tasm.WeightOp))
    b = package_bytes(build_package(dis, tg))
    assert a == b
    assert disassemble(_read(b, tmp_path, "b.ipuexe"), tg) == text

    # the printed module (ipu-opt's output) re-encodes to the same bytes too
    out = io.StringIO()
    Printer(stream=out).print_op(dis)
    assert package_bytes(build_package(_parse(out.getvalue()), tg)) == a


def _odd(pkg: Package) -> Package:
    """`pkg` with what a compiler-produced package never holds: metrics not led by the program and
    phase counts, a moved program, names to escape, an aspect, weight bytes a decimal print loses.
    (xDSL 0.75 reads a literal holding both an escape and a non-ASCII character as bytes, and its
    printer escapes non-ASCII: such names survive the disassembly, not an ipu-opt print.)"""
    data = bytearray(pkg.weights[0].data or b"")
    special = np.array([-0.0, np.nan, np.inf, -np.inf], np.float16).view(np.uint16)
    special[1] |= 1  # a NaN payload
    data[:8] = special.tobytes()
    weights = [
        dataclasses.replace(pkg.weights[0], name='w "1" \\\t', data=bytes(data)),
        dataclasses.replace(pkg.weights[1], name="b1 é"),
        *pkg.weights[2:],
    ]
    checkpoints = [dataclasses.replace(pkg.checkpoints[0], aspect="scores"), *pkg.checkpoints[1:]]
    programs = [dataclasses.replace(p, code_address=p.code_address + 64) for p in pkg.programs]
    metrics = {"odd-name": 7, **pkg.metrics}
    odd = dataclasses.replace(
        pkg,
        compiler_version="0.0.9",
        weights=weights,
        checkpoints=checkpoints,
        programs=programs,
        metrics=metrics,
    )
    odd.host_calls = host_calls_for(odd, load_target(pkg.target))  # the renamed weights
    return odd


def test_uncommon_package_content_survives(tmp_path: Path) -> None:
    ctx, tg = make_context(), load_target("sim16")
    module = parse_file(ctx, EXAMPLES / "mlp_small.mlir")
    IpuCompilePass(target=tg.name).apply(ctx, module)
    pkg = _odd(build_package(module, tg))
    validate_package(pkg, tg)
    a = package_bytes(pkg)
    text = disassemble(_read(a, tmp_path, "a.ipuexe"), tg)
    assert "tasm.metrics = {" in text and "tasm.memory" not in text
    assert f"tiles(0, 16) at {pkg.programs[0].code_address} {{" in text
    assert 'aspect "scores"' in text and 'tasm.compiler = "0.0.9"' in text
    assert package_bytes(build_package(_parse(text), tg)) == a


def test_small_weights_keep_their_bits_through_print_and_parse() -> None:
    """NaN, infinities and -0.0 among 0.0 would change under the builtin dense syntax (integers,
    a splat): such a weight prints as the hex of its bytes; ordinary values stay decimal."""
    head = '"builtin.module"() ({\n'
    tail = '\n}) {ipu.target = #ipu.target<"sim16">} : () -> ()\n'
    placed = f"slices = #table.slices<[{', '.join(SLICE.columns)}] [0, 4, 1, 4, 0, 16, 1, 327680, 8]>"
    for hexdata, printed in (
        ("0x003C0080017E00FC", 'dense<"0x003C0080017E00FC">'),
        ("0x0000008000000000", 'dense<"0x0000008000000000">'),
        ("0x003C003C003C003C", "dense<1.000000e+00>"),
        ("0x003C004000420044", "dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>"),
    ):
        src = f'  tasm.weight @w dense<"{hexdata}"> : tensor<4xf16> : tensor<4xf16> {placed}'
        op = next(o for o in _parse(head + src + tail).walk() if isinstance(o, tasm.WeightOp))
        out = io.StringIO()
        Printer(stream=out).print_op(op)
        assert out.getvalue().startswith(f"tasm.weight @w {printed} : tensor<4xf16> : tensor<4xf16> slices")
        back = next(o for o in _parse(head + out.getvalue() + tail).walk() if isinstance(o, tasm.WeightOp))
        assert isinstance(back.init, builtin.DenseIntOrFPElementsAttr)
        assert back.init.data.data == bytes.fromhex(hexdata[2:])


def test_tables_print_named_columns_in_decimal_and_parse_back() -> None:
    """Every table schema: a large table prints its header once and its rows in decimal (no hex),
    and parses back to the same rows, in custom and generic form alike."""
    rng = np.random.default_rng(0)
    for schema in (SLICE, TRANSFER, MOVE, ATTENTION_OFFSETS):
        rows = rng.integers(-(1 << 40), 1 << 40, (300, len(schema)))
        attr = table_attr(rows, schema)
        out = io.StringIO()
        Printer(stream=out).print_attribute(attr)
        text = out.getvalue()
        assert '"0x' not in text and text.count(schema.columns[-1]) == 1
        assert f"[{', '.join(str(v) for v in rows[7])}]" in text
        back = Parser(make_context(), text).parse_attribute()
        assert back == attr and np.array_equal(table_of(back), rows)
