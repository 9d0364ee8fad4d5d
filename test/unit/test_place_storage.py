"""Storage placement rules on compiled examples, and its helpers against hand-computed values."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from conftest import EXAMPLES
from xdsl.dialects import func
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import AMP_KERNELS, KERNELS
from ipu.dialects import exchange, tilemap
from ipu.target import load_target
from ipu.tools.common import make_context, parse_file
from ipu.transforms.exchange.place_storage import (
    NoFit,
    _element_span,
    _fit,
    _free_bytes,
    _largest_free,
    exchange_row_bytes,
    place_function,
)
from ipu.transforms.exchange.slots import slot
from ipu.transforms.pipeline import compile_passes

T = load_target("sim16")


def _placed(name: str, target: str):  # noqa: ANN202
    ctx = make_context()
    module = parse_file(ctx, EXAMPLES / name)
    for pass_name, p in compile_passes(target):
        p.apply(ctx, module)
        if pass_name == "place_storage":
            break
    return next(o for o in module.body.block.ops if isinstance(o, func.FuncOp))


def test_element_span_by_hand() -> None:
    # region 0 has 16 KiB elements from 0x4C000; region 1 interleaves 32 KiB element pairs from 0x80000
    assert _element_span(T, 0x50280, 0x502A0) == (0x50000, 0x54000)
    assert _element_span(T, 0x53FF0, 0x54010) == (0x50000, 0x58000)
    assert _element_span(T, 0x80010, 0x80020) == (0x80000, 0x88000)
    assert _element_span(T, 0x7FF00, 0x80100) == (0x7C000, 0x88000)


def _iv(*pairs: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)


def test_largest_free_by_hand() -> None:
    s, e = _iv((100, 200), (300, 350))
    assert _largest_free(s, e, 0, 1000) == 650
    assert _largest_free(s, e, 150, 400) == 100
    assert _largest_free(*_iv(), 0, 64) == 64
    # buffers on disjoint tiles may overlap in address: a nested interval hides no gap
    assert _largest_free(*_iv((0, 1000), (500, 600)), 0, 1024) == 24


def test_free_bytes_by_hand() -> None:
    s, e = _iv((100, 200), (150, 250), (300, 350))
    assert _free_bytes(s, e, 0, 1000) == 100 + 50 + 650
    assert _free_bytes(s, e, 120, 320) == 50
    assert _free_bytes(*_iv(), 0, 64) == 64


def test_fit_by_hand() -> None:
    s, e = _iv((0, 100), (160, 300))
    assert _fit(s, e, 0, 1024, 32, top_down=False) == 128  # first aligned gap above 100
    assert _fit(s, e, 0, 1024, 64, top_down=False) == 320  # [128, 160) is too short
    assert _fit(s, e, 0, 1024, 64, top_down=True) == 960
    assert _fit(*_iv((0, 1024)), 0, 1024, 32, top_down=False) is None
    # overlapping intervals (disjoint tiles): the one reaching highest decides, whatever its start
    nested = _iv((0, 1000), (500, 600))
    assert _fit(*nested, 0, 1024, 32, top_down=True) is None
    assert _fit(*nested, 0, 2048, 32, top_down=True) == 2016
    assert _fit(*nested, 0, 1100, 64, top_down=True) == 1024
    assert _fit(*_iv((500, 600), (0, 1000)), 0, 1100, 64, top_down=False) == 1024


_STREAM = (
    '  %{n} = tilemap.host_write "{n}" : tensor<{c}x{e}xf16> layout #plan.layout<grid = [{c}, 1], '
    "split = [[0], [1]], first = {f}, memory = {m}> -> !tilemap.buffer<1x{e}xf16, tiles = [{f}, {c}], memory = {m}>\n"
)
_READ = (
    '  tilemap.host_read "o{n}" %{n} : !tilemap.buffer<1x{e}xf16, tiles = [{f}, {c}], memory = {m}> as '
    "tensor<{c}x{e}xf16> layout #plan.layout<grid = [{c}, 1], split = [[0], [1]], first = {f}, memory = {m}>\n"
)


def _streams(*bufs: tuple[str, int, int, int, str]) -> func.FuncOp:
    """A function writing host streams (name, first tile, tile count, f16 elements per tile,
    memory class) that all stay live to the end, where each is read back."""
    from xdsl.parser import Parser

    names = ", ".join(f'"{b[0]}"' for b in bufs)
    outs = ", ".join(f'"o{b[0]}"' for b in bufs)
    text = f"func.func @main() attributes {{ipu.inputs = [{names}], ipu.outputs = [{outs}], "
    text += "tilemap.mapping = #tilemap.mapping<identity>} {\n"
    for tpl in (_STREAM, _READ):
        text += "".join(tpl.format(n=n, f=f, c=c, e=e, m=m) for n, f, c, e, m in bufs)
    module = Parser(make_context(), text + "  func.return\n}\n").parse_module()
    return next(o for o in module.walk() if isinstance(o, func.FuncOp))


def _addresses(f: func.FuncOp) -> dict[str, int]:
    return {op.sym_name.data: slot(op.result).address.data for op in f.walk() if isinstance(op, tilemap.HostWriteOp)}


@pytest.mark.parametrize("memory", ["standard", "interleaved"])
def test_disjoint_tiles_share_an_address(memory: str) -> None:
    f = _streams(("a", 0, 8, 3000, memory), ("b", 8, 8, 3000, memory))
    figures = place_function(f, T)
    at = _addresses(f)
    assert at["a"] == at["b"]
    # the busiest tile holds one of the two: peaks are per tile, not the sum over buffers
    size = -(-3000 * 2 // 32) * 32
    assert figures[f"peak_{memory}_bytes"] == figures["peak_total_bytes"] == size


@pytest.mark.parametrize("memory", ["standard", "interleaved"])
def test_overlapping_tiles_do_not_share(memory: str) -> None:
    f = _streams(("a", 0, 8, 3000, memory), ("b", 7, 8, 3000, memory), ("c", 15, 1, 16, memory))
    figures = place_function(f, T)
    at = _addresses(f)
    size = -(-3000 * 2 // 32) * 32
    assert abs(at["a"] - at["b"]) >= size  # tile 7 holds both
    assert at["a"] <= at["c"] < at["a"] + size  # tile 15 holds only b: c lies within a's range
    assert figures["peak_total_bytes"] == 2 * size  # tile 7


def test_disjoint_tiles_fit_where_shared_addresses_do_not() -> None:
    """Two buffers of more than half a tile's data memory on disjoint tiles: placed together."""
    big = 200_000  # f16 elements: 400000 bytes of 621488
    f = _streams(("a", 0, 8, big, "standard"), ("b", 8, 8, big, "standard"))
    place_function(f, T)
    g = _streams(("a", 0, 9, big, "standard"), ("b", 8, 8, big, "standard"))
    with pytest.raises(DiagnosticException) as err:
        place_function(g, T)
    msg = str(err.value)
    assert "value %b (tilemap.host_write) needs 400000 bytes of standard memory on tiles [8, 16)" in msg
    assert "400000 bytes are live on tile 8 (largest: %a 400000)" in msg


def _program(*steps: tuple[str, tuple[str, int, int, int, str]]) -> func.FuncOp:
    """A function of host writes and reads ("w" or "r", buffer) in the given order, so each
    buffer lives from its write to its read."""
    from xdsl.parser import Parser

    bufs = [b for kind, b in steps if kind == "w"]
    names = ", ".join(f'"{b[0]}"' for b in bufs)
    outs = ", ".join(f'"o{b[0]}"' for b in bufs)
    text = f"func.func @main() attributes {{ipu.inputs = [{names}], ipu.outputs = [{outs}], "
    text += "tilemap.mapping = #tilemap.mapping<identity>} {\n"
    for kind, (n, f, c, e, m) in steps:
        text += (_STREAM if kind == "w" else _READ).format(n=n, f=f, c=c, e=e, m=m)
    module = Parser(make_context(), text + "  func.return\n}\n").parse_module()
    return next(o for o in module.walk() if isinstance(o, func.FuncOp))


def test_offline_packing_when_first_fit_fragments() -> None:
    """a (300000 B) dies before d (400000 B) is written while b (32000 B), written after a,
    lives on: first-fit leaves d two holes of under 300000 B, the offline packing puts d and a
    at the bottom, one after the other in time, and b above both."""
    a, b, d = ("a", 0, 16, 150_000, "standard"), ("b", 0, 16, 16_000, "standard"), ("d", 0, 16, 200_000, "standard")
    f = _program(("w", a), ("w", b), ("r", a), ("w", d), ("r", b), ("r", d))
    figures = place_function(f, T)
    at = _addresses(f)
    assert at["a"] == at["d"] < at["b"]
    assert at["b"] >= at["d"] + 400_000
    assert figures["peak_total_bytes"] == 432_000  # d and b
    # nothing can pack a and b beside d when all three live together: the first-fit diagnostic
    g = _program(("w", a), ("w", b), ("w", d), ("r", a), ("r", b), ("r", d))
    with pytest.raises(NoFit, match="value %d .* needs 400000 bytes of standard memory") as err:
        place_function(g, T)
    free = int(re.search(r"the largest free range is (\d+) bytes", str(err.value)).group(1))
    assert (err.value.shortfall, err.value.stranded) == (400_000 - free, 0)  # a and b packed below: no hole


@pytest.mark.parametrize(
    ("name", "target"),
    [("mlp_small.mlir", "sim16"), ("attention_small.mlir", "sim64"), ("transformer_block_small.mlir", "sim64")],
)
def test_placement_rules_hold(name: str, target: str) -> None:
    t = load_target(target)
    f = _placed(name, target)
    figures = f.attributes["exchange.memory"].data  # type: ignore[union-attr]
    rows = figures["exchange_row_bytes"].value.data
    assert rows == -(-exchange_row_bytes(f, t.tiles) // 32) * 32 > 0
    data_start = t.memory_base + t.code_reserve_bytes + rows
    interleaved = next(r for r in t.regions if r.interleaved)
    amp_calls = 0
    for op in f.walk():
        s = op.attributes.get("slot")
        if isinstance(s, exchange.SlotAttr):
            a, e = s.address.data, s.address.data + s.size.data
            assert a % 32 == 0 and data_start <= a and e <= t.data_end < t.memory_end
            if s.region.data == "interleaved":
                assert interleaved.start <= a
        if isinstance(op, tilemap.RunOp) and op.kernel.data in AMP_KERNELS:
            amp_calls += 1
            if KERNELS[op.kernel.data].amp_weights != 1:
                continue  # a swapped AMP writes its scratch; the transpose after it, the output
            lhs, out = slot(op.inputs[0]), slot(op.result)
            lo, hi = _element_span(t, lhs.address.data, lhs.address.data + lhs.size.data)
            assert out.address.data >= hi or out.address.data + out.size.data <= lo, "AMP output shares an element"
    assert amp_calls > 0


def test_does_not_fit_names_value_tiles_and_free_range() -> None:
    f = _placed("mlp_small.mlir", "sim16")
    # the same program on a machine whose loader reaches only 96 KiB above the code
    small = dataclasses.replace(T, loadable_end=T.memory_base + T.code_reserve_bytes + 96 * 1024)
    with pytest.raises(DiagnosticException) as err:
        place_function(f, small)
    msg = str(err.value)
    assert msg.startswith("model does not fit target sim16: value %")
    assert "on tiles [0, 16) (tile 0 first)" in msg
    assert "the largest free range is" in msg and "capacity is" in msg


def _deep_chain(n: int):  # noqa: ANN202
    from ipu.builder import GraphBuilder

    b = GraphBuilder()
    x = b.input("x", [64, 64], "f32")
    for i in range(n):
        x = b.add(b.relu(x, name=f"r{i}"), x, name=f"a{i}")
    b.output(x, name="y")
    return b.build()


_DEEP = 240  # layers whose programs outgrow sim16's 16 KiB code reserve


def test_code_region_grows_to_fit_the_programs() -> None:
    """Programs larger than the target's code reserve get a measured code region (whole 4 KiB
    steps) below the data; the package records it and the run still checks out."""
    from ipu import api

    small = api.compile(_deep_chain(4), "sim16")
    assert small.package.metrics["code_bytes"] == T.code_reserve_bytes
    big = api.compile(_deep_chain(_DEEP), "sim16")
    code = big.package.metrics["code_bytes"]
    longest = max(len(p.code) for p in big.package.programs)
    assert longest > T.code_reserve_bytes and code >= longest and code % 4096 == 0
    report = api.run(big)
    assert report.checks and all(c.result.passed for c in report.checks)


def test_validator_refuses_code_past_its_region() -> None:
    from ipu import api
    from ipu.abi.package import PackageError
    from ipu.abi.package_check import validate_package

    pkg = api.compile(_deep_chain(_DEEP), "sim16").package
    pkg.metrics["code_bytes"] = T.code_reserve_bytes  # a package claiming the default reserve
    with pytest.raises(PackageError, match="leaves the code region"):
        validate_package(pkg, T)
