"""`graph.conv` compiled through `expand-conv` and emulated on sim16 against the graph reference
(float64 sums), over the geometries the expansion distinguishes: strides, pads, dilations,
groups (block-diagonal), depthwise (the vector path), few channels (im2col), 1-D and batch > 1."""

from __future__ import annotations

import numpy as np
import pytest

from ipu import api
from ipu.dialects.graph import ConvGeometry, conv_reference


def conv_module(geo: ConvGeometry, dtype: str = "f32") -> str:
    x = f"tensor<{geo.n}x{geo.h}x{geo.w}x{geo.c}x{dtype}>"
    w = f"tensor<{geo.kh}x{geo.kw}x{geo.c // geo.groups}x{geo.o}x{dtype}>"
    r = f"tensor<{geo.n}x{geo.out_h}x{geo.out_w}x{geo.o}x{dtype}>"
    arr = lambda v: ", ".join(map(str, v))  # noqa: E731
    attrs = (
        f"strides = array<i64: {arr(geo.strides)}>, dilations = array<i64: {arr(geo.dilations)}>, "
        f"pads = array<i64: {arr(geo.pads)}>, groups = {geo.groups} : i64"
    )
    return f"""func.func @main(%x: {x}, %w: {w}) -> {r} {{
  %y = graph.conv %x, %w {{{attrs}}} : ({x}, {w}) -> {r}
  func.return %y : {r}
}}
"""


GEOMETRIES = {
    "3x3 pad 1": ConvGeometry(1, 8, 8, 16, 3, 3, 16, (1, 1), (1, 1), (1, 1, 1, 1), 1),
    "3x3 stride 2 uneven pads": ConvGeometry(1, 9, 7, 16, 3, 3, 8, (2, 2), (1, 1), (1, 0, 1, 1), 1),
    "1x1 stride 2 batch 2": ConvGeometry(2, 8, 8, 16, 1, 1, 32, (2, 2), (1, 1), (0, 0, 0, 0), 1),
    "7x7 stride 2 stem (im2col)": ConvGeometry(1, 16, 16, 3, 7, 7, 8, (2, 2), (1, 1), (3, 3, 3, 3), 1),
    "dilation 2": ConvGeometry(1, 10, 10, 16, 3, 3, 8, (1, 1), (2, 2), (2, 2, 2, 2), 1),
    "groups 2 (block-diagonal)": ConvGeometry(1, 6, 6, 16, 3, 3, 16, (1, 1), (1, 1), (1, 1, 1, 1), 2),
    "depthwise stride 2": ConvGeometry(2, 8, 8, 16, 3, 3, 16, (2, 2), (1, 1), (1, 1, 1, 1), 16),
    "1-D kernel 5": ConvGeometry(2, 1, 32, 16, 1, 5, 24, (1, 1), (1, 1), (0, 2, 0, 2), 1),
}


@pytest.mark.parametrize("name", list(GEOMETRIES))
def test_conv_matches_its_reference(name: str) -> None:
    geo = GEOMETRIES[name]
    compiled = api.compile(conv_module(geo), "sim16")
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
