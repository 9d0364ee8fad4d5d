"""Storage placement rules on compiled examples, and its helpers against hand-computed values."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import EXAMPLES
from xdsl.dialects import func
from xdsl.utils.exceptions import DiagnosticException

from ipu.abi.kernels import AMP_KERNELS
from ipu.dialects import exchange, tilemap
from ipu.target import load_target
from ipu.tools.common import make_context, parse_file
from ipu.transforms.pipeline import compile_passes
from ipu.transforms.place_storage import (
    _element_span,
    _largest_free,
    exchange_row_bytes,
    place_function,
)
from ipu.transforms.storage import slot

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


def test_largest_free_by_hand() -> None:
    live = [(100, 200, None), (300, 350, None)]
    assert _largest_free(live, 0, 1000) == 650
    assert _largest_free(live, 150, 400) == 100
    assert _largest_free([], 0, 64) == 64


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


def test_code_region_grows_to_fit_the_programs() -> None:
    """Programs larger than the target's code reserve get a measured code region (whole 4 KiB
    steps) below the data; the package records it and the run still checks out."""
    from ipu import api

    small = api.compile(_deep_chain(4), "sim16")
    assert small.package.metrics["code_bytes"] == T.code_reserve_bytes
    big = api.compile(_deep_chain(120), "sim16")
    code = big.package.metrics["code_bytes"]
    longest = max(len(p.code) for p in big.package.programs)
    assert longest > T.code_reserve_bytes and code >= longest and code % 4096 == 0
    report = api.run(big)
    assert report.checks and all(c.result.passed for c in report.checks)


def test_validator_refuses_code_past_its_region() -> None:
    from ipu import api
    from ipu.runtime.package import PackageError
    from ipu.runtime.package_check import validate_package

    pkg = api.compile(_deep_chain(120), "sim16").package
    pkg.metrics["code_bytes"] = T.code_reserve_bytes  # a package claiming the default reserve
    with pytest.raises(PackageError, match="leaves the code region"):
        validate_package(pkg, T)
