"""`graph.conv` compiled and emulated on sim16 against the graph reference (float64 sums): by the
conv plan family (`plan.conv`: halo patches, kernel positions on the tile, on the AMP or,
depthwise, on the vector path), with grids pinned to reach every split (batch, uneven row blocks,
output and input channels with their partials' reduce, a depthwise conv's channel blocks), and
through `expand-windows` over the geometries the expansion distinguishes: strides, pads,
dilations, groups (block-diagonal), depthwise, few channels (a wide kernel's columns folded into
them, else im2col), 1-D and batch > 1."""

from __future__ import annotations

import numpy as np
import pytest

from ipu import api
from ipu.abi.package import kernels_called
from ipu.context import make_context
from ipu.dialects import exchange
from ipu.dialects.graph import ConvGeometry, conv_reference
from ipu.transforms.graph.expand_windows import ExpandWindowsPass, folds_width
from ipu.transforms.pipeline import compile_passes


def conv_module(geo: ConvGeometry, dtype: str = "f32", grid: tuple[int, ...] | None = None) -> str:
    x = f"tensor<{geo.n}x{geo.h}x{geo.w}x{geo.c}x{dtype}>"
    w = f"tensor<{geo.kh}x{geo.kw}x{geo.c // geo.groups}x{geo.o}x{dtype}>"
    r = f"tensor<{geo.n}x{geo.out_h}x{geo.out_w}x{geo.o}x{dtype}>"
    arr = lambda v: ", ".join(map(str, v))  # noqa: E731
    attrs = (
        f"strides = array<i64: {arr(geo.strides)}>, dilations = array<i64: {arr(geo.dilations)}>, "
        f"pads = array<i64: {arr(geo.pads)}>, groups = {geo.groups} : i64"
    )
    if grid is not None:
        attrs += f", plan.choice = #plan.choice<conv, grid = [{arr(grid)}]>"
    return f"""func.func @main(%x: {x}, %w: {w}) -> {r} {{
  %y = graph.conv %x, %w {{{attrs}}} : ({x}, {w}) -> {r}
  func.return %y : {r}
}}
"""


GEOMETRIES = {
    "3x3 pad 1": ConvGeometry(1, 8, 8, 16, 3, 3, 16, (1, 1), (1, 1), (1, 1, 1, 1), 1),
    "3x3 stride 2 uneven pads": ConvGeometry(1, 9, 7, 16, 3, 3, 8, (2, 2), (1, 1), (1, 0, 1, 1), 1),
    "1x1 stride 2 batch 2": ConvGeometry(2, 8, 8, 16, 1, 1, 32, (2, 2), (1, 1), (0, 0, 0, 0), 1),
    "7x7 stride 2 stem (width folded)": ConvGeometry(1, 16, 16, 3, 7, 7, 8, (2, 2), (1, 1), (3, 3, 3, 3), 1),
    "5x5 stride 2 dilation 2, 3 channels, batch 2 (width folded)": ConvGeometry(
        2, 15, 13, 3, 5, 5, 8, (2, 2), (2, 2), (2, 1, 2, 3), 1
    ),
    "3x3 stride 2 stem on 3 channels (width folded, 6-channel pixels)": ConvGeometry(
        2, 9, 8, 3, 3, 3, 8, (2, 2), (1, 1), (1, 1, 1, 1), 1
    ),
    "3x1 kernel on 3 channels (im2col)": ConvGeometry(1, 8, 8, 3, 3, 1, 8, (1, 1), (1, 1), (1, 0, 1, 0), 1),
    "dilation 2": ConvGeometry(1, 10, 10, 16, 3, 3, 8, (1, 1), (2, 2), (2, 2, 2, 2), 1),
    "groups 2 (block-diagonal)": ConvGeometry(1, 6, 6, 16, 3, 3, 16, (1, 1), (1, 1), (1, 1, 1, 1), 2),
    "depthwise stride 2": ConvGeometry(2, 8, 8, 16, 3, 3, 16, (2, 2), (1, 1), (1, 1, 1, 1), 16),
    "depthwise 5x5 dilation 2, 6 channels": ConvGeometry(1, 9, 8, 6, 5, 5, 6, (1, 1), (2, 2), (4, 4, 4, 4), 6),
    "1-D kernel 5": ConvGeometry(2, 1, 32, 16, 1, 5, 24, (1, 1), (1, 1), (0, 2, 0, 2), 1),
}


# the conv family's pinned grids (batch, row blocks, output channel blocks, input channel blocks)
PINNED = {
    "uneven row blocks": (ConvGeometry(1, 8, 8, 16, 3, 3, 16, (1, 1), (1, 1), (1, 1, 1, 1), 1), (1, 3, 1, 1)),
    "stride 2, every split": (ConvGeometry(2, 9, 7, 32, 3, 3, 32, (2, 2), (1, 1), (1, 0, 1, 1), 1), (2, 2, 2, 2)),
    "dilation 2, one row a tile": (
        ConvGeometry(1, 10, 10, 16, 3, 3, 8, (1, 1), (2, 2), (2, 2, 2, 2), 1),
        (1, 10, 1, 1),
    ),
    "5x3 stride (1, 2), input channels in 3": (
        ConvGeometry(1, 7, 11, 48, 5, 3, 16, (1, 2), (1, 1), (2, 1, 2, 1), 1),
        (1, 4, 1, 3),
    ),
    "depthwise, batch, rows and channel blocks": (
        ConvGeometry(2, 9, 7, 24, 3, 3, 24, (2, 1), (1, 1), (1, 1, 1, 1), 24),
        (2, 3, 2, 1),
    ),
}
CASES = [(name, geo, None, False) for name, geo in GEOMETRIES.items()]
CASES += [(f"expanded {name}", geo, None, True) for name, geo in GEOMETRIES.items() if geo.planned]
CASES += [(f"pinned {name}", geo, grid, False) for name, (geo, grid) in PINNED.items()]


@pytest.mark.parametrize(("name", "geo", "grid", "expand_all"), CASES, ids=[c[0] for c in CASES])
def test_conv_matches_its_reference(
    name: str, geo: ConvGeometry, grid: tuple[int, ...] | None, expand_all: bool
) -> None:
    passes = [ExpandWindowsPass(expand_all=True)] if expand_all else []
    compiled = api.compile(conv_module(geo, grid=grid), "sim16", graph_passes=passes)
    family = {"amp_conv"} if geo.on_amp or folds_width(geo) else {"dw_conv"} if geo.depthwise else set()
    assert (kernels_called(compiled.package) & {"amp_conv", "dw_conv"}) == (set() if expand_all else family)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((geo.n, geo.h, geo.w, geo.c)).astype(np.float32)
    w = rng.standard_normal((geo.kh, geo.kw, geo.c // geo.groups, geo.o)).astype(np.float32)
    report = api.run(compiled, {"x": x, "w": w})
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    y = api.host_outputs(compiled.reference, report.outputs)
    out = next(iter(y.values())).reshape(geo.n, geo.out_h, geo.out_w, geo.o)
    # an independent check of the reference itself: a direct sum over the kernel, per output
    want = np.zeros_like(out, dtype=np.float64)
    t, left = geo.pads[0], geo.pads[1]
    cg, og = geo.c // geo.groups, geo.o // geo.groups
    for oy in range(geo.out_h):
        for ox in range(geo.out_w):
            for i in range(geo.kh):
                for j in range(geo.kw):
                    iy = oy * geo.strides[0] + i * geo.dilations[0] - t
                    ix = ox * geo.strides[1] + j * geo.dilations[1] - left
                    if 0 <= iy < geo.h and 0 <= ix < geo.w:
                        for k in range(geo.groups):
                            xs = x[:, iy, ix, k * cg : (k + 1) * cg].astype(np.float64)
                            want[:, oy, ox, k * og : (k + 1) * og] += xs @ w[i, j, :, k * og : (k + 1) * og]
    np.testing.assert_allclose(conv_reference(x, w, geo), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, want, rtol=2e-4, atol=2e-4)


def pool_module(geo: ConvGeometry, kind: str, include_pad: bool, dtype: str = "f32", relu: bool = False) -> str:
    x = f"tensor<{geo.n}x{geo.h}x{geo.w}x{geo.c}x{dtype}>"
    r = f"tensor<{geo.n}x{geo.out_h}x{geo.out_w}x{geo.c}x{dtype}>"
    arr = lambda v: ", ".join(map(str, v))  # noqa: E731
    attrs = (
        f'kind = "{kind}", kernel = array<i64: {geo.kh}, {geo.kw}>, strides = array<i64: {arr(geo.strides)}>, '
        f"dilations = array<i64: {arr(geo.dilations)}>, pads = array<i64: {arr(geo.pads)}>"
        + (", count_include_pad" if include_pad else "")
    )
    first = f"  %p = graph.relu %x : {x} -> {x}\n" if relu else ""
    return f"""func.func @main(%x: {x}) -> {r} {{
{first}  %y = graph.pool {"%p" if relu else "%x"} {{{attrs}}} : {x} -> {r}
  func.return %y : {r}
}}
"""


POOLS = {
    "max 3x3/2 pad 1 (ResNet)": ("max", False, ConvGeometry(2, 8, 8, 16, 3, 3, 16, (2, 2), (1, 1), (1, 1, 1, 1), 16)),
    "max 2x2/2 ceil mode": ("max", False, ConvGeometry(1, 7, 7, 8, 2, 2, 8, (2, 2), (1, 1), (0, 0, 0, 0), 8, (4, 4))),
    "max dilation 2": ("max", False, ConvGeometry(1, 9, 9, 8, 2, 2, 8, (1, 1), (2, 2), (1, 1, 1, 1), 8)),
    "avg 3x3/1 pad 1 excluding pads": (
        "avg",
        False,
        ConvGeometry(1, 6, 6, 8, 3, 3, 8, (1, 1), (1, 1), (1, 1, 1, 1), 8),
    ),
    "avg 3x3/2 including pads, ceil": (
        "avg",
        True,
        ConvGeometry(1, 6, 6, 8, 3, 3, 8, (2, 2), (1, 1), (1, 1, 1, 1), 8, (4, 4)),
    ),
    "avg 2x2/2 no pads": ("avg", False, ConvGeometry(2, 8, 8, 8, 2, 2, 8, (2, 2), (1, 1), (0, 0, 0, 0), 8)),
    "max 2x2/2 no pads": ("max", False, ConvGeometry(2, 8, 8, 8, 2, 2, 8, (2, 2), (1, 1), (0, 0, 0, 0), 8)),
}
# (pool, a ReLU before it) -> whether the pool family plans it (`max_pool_planned`): a max pool of a
# non-negative value, or with no padding and no ceil-mode window past the input
POOL_CASES = [(name, relu) for name in POOLS for relu in (False, True)]
PLANNED = {("max 2x2/2 no pads", False)} | {(n, True) for n, (k, _, _) in POOLS.items() if k == "max"}


@pytest.mark.parametrize(("name", "relu"), POOL_CASES, ids=[f"{n}{', relu' if r else ''}" for n, r in POOL_CASES])
def test_pool_matches_its_reference(name: str, relu: bool) -> None:
    kind, include, geo = POOLS[name]
    compiled = api.compile(pool_module(geo, kind, include, relu=relu), "sim16")
    assert ("max_pool" in kernels_called(compiled.package)) == ((name, relu) in PLANNED)
    # all negative but for a few: a max whose padding won would show (a ReLU's: about a third kept)
    x = np.random.default_rng(3).standard_normal((geo.n, geo.h, geo.w, geo.c)).astype(np.float32) - (
        0.5 if relu else 2.0
    )
    report = api.run(compiled, {"x": x})
    if relu:
        x = np.maximum(x, 0)
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]
    out = next(iter(api.host_outputs(compiled.reference, report.outputs).values()))
    # independently: each output over the input elements its window covers (pads never counted
    # for max; for avg the divisor is the covered count, or the padded extent's)
    t, left, b, r = geo.pads
    want = np.zeros((geo.n, geo.out_h, geo.out_w, geo.c))
    for oy in range(geo.out_h):
        for ox in range(geo.out_w):
            ys = [oy * geo.strides[0] + i * geo.dilations[0] - t for i in range(geo.kh)]
            xs = [ox * geo.strides[1] + j * geo.dilations[1] - left for j in range(geo.kw)]
            cells = [x[:, yy, xx, :] for yy in ys for xx in xs if 0 <= yy < geo.h and 0 <= xx < geo.w]
            if kind == "max":
                want[:, oy, ox] = np.max(cells, axis=0)
            else:
                padded = sum(1 for yy in ys for xx in xs if -t <= yy < geo.h + b and -left <= xx < geo.w + r)
                want[:, oy, ox] = np.sum(cells, axis=0) / (padded if include else len(cells))
    np.testing.assert_allclose(out.reshape(want.shape), want, rtol=1e-5, atol=1e-5)


def test_computed_filters_are_fetched_from_where_they_are() -> None:
    """A folded stem's filters are computed (padded and regrouped at compile time, not a stored
    weight): the conv fetches them from where they lie, with no "weight home" copy left unread."""
    module = api.parse(conv_module(GEOMETRIES["7x7 stride 2 stem (width folded)"]))
    ctx = make_context()
    for label, p in compile_passes("sim16"):
        p.apply(ctx, module)
        if label == "schedule_exchange":
            break
    phases = [op for op in module.walk() if isinstance(op, exchange.PhaseOp)]
    assert phases and all(list(op.result.uses) for op in phases)
    assert not any(op.reason is not None and op.reason.data == "weight home" for op in phases)
