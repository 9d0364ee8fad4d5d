"""Convolutional models from ONNX, compiled and emulated on sim16 and checked against
onnxruntime: a ResNet basic block (3x3 convs, batch norms folded, residual add, ReLU), a
downsampling block (stride 2, a 1x1 projection), a stem (7x7/2 conv, 3x3/2 max pool), a
MobileNet inverted residual (depthwise, ReLU6), grouped and dilated convolutions, Conv1d with
SAME padding, average pools and a classifier head (global average pool, Flatten, Gemm)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from ipu import api  # noqa: E402
from ipu.frontends.onnx_import import OnnxImportError, import_model  # noqa: E402

RNG = np.random.default_rng(11)


class Net:
    """A small ONNX graph builder: conv, bn, relu, add, pools, by name."""

    def __init__(self, x_shape: list[int]):
        self.nodes: list = []
        self.inits: list = []
        self.x_shape = x_shape
        self.k = 0

    def name(self, p: str) -> str:
        self.k += 1
        return f"{p}{self.k}"

    def init(self, a: np.ndarray, p: str) -> str:
        n = self.name(p)
        self.inits.append(numpy_helper.from_array(a.astype(np.float32), n))
        return n

    def node(self, op: str, ins: list[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: int | tuple, bias: bool = False, group: int = 1, **attrs) -> str:
        ks = (k,) if isinstance(k, int) and attrs.pop("one_d", False) else ((k, k) if isinstance(k, int) else k)
        w = RNG.standard_normal((cout, cin // group, *ks)) / np.sqrt(cin // group * np.prod(ks))
        ins = [x, self.init(w, "w")] + ([self.init(RNG.standard_normal(cout) * 0.1, "b")] if bias else [])
        return self.node("Conv", ins, group=group, **attrs)

    def bn(self, x: str, c: int) -> str:
        shift, mean = RNG.standard_normal(c) * 0.1, RNG.standard_normal(c) * 0.1
        p = [RNG.uniform(0.5, 1.5, c), shift, mean, RNG.uniform(0.5, 2, c)]
        return self.node("BatchNormalization", [x, *(self.init(a, "bn") for a in p)], epsilon=1e-5)

    def model(self, out: str, out_shape: list[int], opset: int = 18):
        g = helper.make_graph(
            self.nodes,
            "cnn",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, self.x_shape)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)],
            self.inits,
        )
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def run(m) -> None:
    compiled = api.compile(m, "sim16")
    report = api.run(compiled, seed=5)
    assert [c for c in report.checks if c.kind == "oracle"], "no oracle check"
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]


def test_resnet_basic_block_folds_its_norms_and_stays_channels_last() -> None:
    net = Net([1, 16, 8, 8])
    a = net.node("Relu", [net.bn(net.conv("x", 16, 16, 3, pads=[1, 1, 1, 1]), 16)])
    b = net.bn(net.conv(a, 16, 16, 3, pads=[1, 1, 1, 1]), 16)
    y = net.node("Relu", [net.node("Add", [b, "x"])])
    m = net.model(y, [1, 16, 8, 8])
    text = str(import_model(m))
    assert text.count("graph.conv") == 2 and "BatchNormalization" not in text
    # the block's input goes channels last once; the output comes back once; nothing in between
    assert text.count("graph.transpose") <= 3, text
    run(m)


def test_downsampling_block_stride_2_with_projection() -> None:
    net = Net([2, 16, 8, 8])
    a = net.node("Relu", [net.bn(net.conv("x", 16, 32, 3, strides=[2, 2], pads=[1, 1, 1, 1]), 32)])
    b = net.bn(net.conv(a, 32, 32, 3, pads=[1, 1, 1, 1]), 32)
    s = net.bn(net.conv("x", 16, 32, 1, strides=[2, 2]), 32)
    run(net.model(net.node("Relu", [net.node("Add", [b, s])]), [2, 32, 4, 4]))


def test_stem_conv_7x7_and_max_pool() -> None:
    net = Net([1, 3, 16, 16])
    a = net.node("Relu", [net.bn(net.conv("x", 3, 16, 7, strides=[2, 2], pads=[3, 3, 3, 3]), 16)])
    y = net.node("MaxPool", [a], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    run(net.model(y, [1, 16, 4, 4]))


def test_batched_rgb_stem_is_written_channels_last_by_the_host() -> None:
    """A batch of NCHW RGB images: the host writes them channels last and zero-padded for the
    7x7/2 stem (no exchange moves single pixels), which runs as a 7x1 conv over 28 channels."""
    net = Net([2, 3, 16, 16])
    y = net.node("Relu", [net.conv("x", 3, 16, 7, bias=True, strides=[2, 2], pads=[3, 3, 3, 3])])
    m = net.model(y, [2, 16, 8, 8])
    compiled = api.compile(m, "sim16")
    (x,) = compiled.package.inputs
    assert x.shape == (2, 3, 16, 16) and x.perm == (0, 2, 3, 1) and x.device_shape() == (2, 22, 22, 4)
    report = api.run(compiled, seed=5)
    assert report.passed, [(c.kind, c.name, c.result.reason) for c in report.checks if not c.result.passed]


@pytest.mark.parametrize("op", ["GlobalAveragePool", "ReduceMean"])
def test_spatial_mean_of_a_channels_last_value_is_one_matmul(op: str) -> None:
    """torch's `x.mean((2, 3))` (ReduceMean) and GlobalAveragePool of a conv's result read its
    channels-last twin: a block-diagonal matrix of ones times the pixels' rows, divided by their
    count; no transpose back to NCHW."""
    net = Net([2, 16, 5, 5])
    a = net.node("Relu", [net.conv("x", 16, 32, 3, pads=[1, 1, 1, 1])])
    axes = net.init(np.array([2, 3]), "axes") if op == "ReduceMean" else None
    if axes is not None:
        net.inits[-1] = numpy_helper.from_array(np.array([2, 3], np.int64), axes)
    g = net.node(op, [a, axes] if axes else [a], **({"keepdims": 0} if axes else {}))
    m = net.model(g, [2, 32] if axes else [2, 32, 1, 1])
    text = str(import_model(m))
    assert ".pixels" in text and "graph.reduce" not in text and "perm = array<i64: 0, 3, 1, 2>" not in text
    run(m)


def test_inverted_residual_depthwise_relu6() -> None:
    net = Net([1, 16, 8, 8])
    lo, hi = net.init(np.array(0.0), "lo"), net.init(np.array(6.0), "hi")
    e = net.node("Clip", [net.bn(net.conv("x", 16, 48, 1), 48), lo, hi])
    d = net.node("Clip", [net.bn(net.conv(e, 48, 48, 3, group=48, pads=[1, 1, 1, 1]), 48), lo, hi])
    p = net.bn(net.conv(d, 48, 16, 1), 16)
    run(net.model(net.node("Add", [p, "x"]), [1, 16, 8, 8]))


def test_grouped_dilated_and_same_padded() -> None:
    net = Net([1, 16, 9, 9])
    a = net.conv("x", 16, 32, 3, bias=True, group=4, dilations=[2, 2], pads=[2, 2, 2, 2])
    b = net.conv(a, 32, 16, 3, bias=True, strides=[2, 2], auto_pad="SAME_UPPER")
    run(net.model(b, [1, 16, 5, 5]))


def test_conv1d_same_and_strided_with_average_pool() -> None:
    net = Net([2, 16, 32])
    a = net.node("Relu", [net.conv("x", 16, 24, 5, bias=True, one_d=True, auto_pad="SAME_LOWER")])
    b = net.conv(a, 24, 16, 3, bias=True, one_d=True, strides=[2], pads=[1, 1])
    y = net.node("AveragePool", [b], kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1)
    run(net.model(y, [2, 16, 9]))


def test_average_pool_counts_and_classifier_head() -> None:
    net = Net([2, 8, 7, 7])
    a = net.node("AveragePool", ["x"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0)
    b = net.conv(a, 8, 16, 1, bias=True)
    g = net.node("GlobalAveragePool", [b])
    f = net.node("Flatten", [g])
    w, bias = net.init(RNG.standard_normal((10, 16)), "fc"), net.init(RNG.standard_normal(10), "fcb")
    y = net.node("Gemm", [f, w, bias], transB=1)
    run(net.model(y, [2, 10]))


@pytest.mark.parametrize("include_pad", [0, 1])
def test_dilated_average_pool_counts_its_taps(include_pad: int) -> None:
    """A dilated window's divisor is the count of its taps inside the input (or the padded
    extent), not of the span it covers; ceil mode adds a window that starts in the padding."""
    net = Net([1, 4, 9, 9])
    y = net.node(
        "AveragePool",
        ["x"],
        kernel_shape=[3, 3],
        strides=[2, 2],
        dilations=[2, 2],
        pads=[1, 1, 2, 2],
        ceil_mode=1,
        count_include_pad=include_pad,
    )
    run(net.model(y, [1, 4, 5, 5], opset=19))  # AveragePool's dilations: opset 19


def test_three_d_pools_are_two_two_d_pools() -> None:
    """Max then average over (D, H, W): each as a pool over (H, W) with the depth in the channels,
    then one over depth; uneven strides and pads per axis, padding not counted."""
    net = Net([1, 2, 6, 6, 6])
    a = net.node("MaxPool", ["x"], kernel_shape=[2, 2, 2], strides=[2, 1, 2], pads=[0, 1, 0, 1, 0, 1])
    y = net.node(
        "AveragePool", [a], kernel_shape=[2, 3, 2], strides=[1, 2, 1], count_include_pad=0, pads=[1, 1, 0, 0, 1, 1]
    )
    run(net.model(y, [1, 2, 3, 3, 3]))


def test_standalone_batch_norm_and_global_max_pool() -> None:
    net = Net([2, 8, 6, 6])
    a = net.node("Relu", [net.bn("x", 8)])
    run(net.model(net.node("GlobalMaxPool", [a]), [2, 8, 1, 1]))


def test_refusals_name_the_node() -> None:
    net = Net([1, 4, 6, 6])
    ins = ["x", *(net.init(np.ones(4), "p") for _ in range(4))]
    net.nodes.append(helper.make_node("BatchNormalization", ins, ["y", "rm", "rv"], name="bn", training_mode=1))
    with pytest.raises(OnnxImportError, match=r"'bn'.*training mode"):
        import_model(net.model("y", [1, 4, 6, 6]))
    net = Net([1, 4, 6, 6, 6])
    y = net.conv("x", 4, 4, (3, 3, 3))
    with pytest.raises(OnnxImportError, match=r"conv\d+.*only 1-D and 2-D convolutions"):
        import_model(net.model(y, [1, 4, 4, 4, 4]))


def test_unet_decoder_block() -> None:
    """A U-Net decoder step: ConvTranspose 2x2/2 up, a skip concatenation, 3x3 conv,
    InstanceNormalization (GroupNorm's classic export), ReLU, then a nearest 2x Resize and a
    bilinear (half-pixel) one."""
    net = Net([1, 16, 4, 4])
    w = net.init(RNG.standard_normal((16, 8, 2, 2)) * 0.3, "wt")
    up = net.node("ConvTranspose", ["x", w, net.init(RNG.standard_normal(8) * 0.1, "bt")], strides=[2, 2])
    skip = net.conv(net.node("Resize", ["x", "", net.init(np.array([1, 1, 2, 2.0]), "sc")], mode="nearest"), 16, 8, 1)
    cat = net.node("Concat", [up, skip], axis=1)
    c = net.conv(cat, 16, 8, 3, pads=[1, 1, 1, 1])
    inorm = net.node(
        "InstanceNormalization",
        [c, net.init(RNG.uniform(0.5, 1.5, 8), "s"), net.init(RNG.standard_normal(8) * 0.1, "b")],
    )
    r = net.node("Relu", [inorm])
    y = net.node("Resize", [r, "", net.init(np.array([1, 1, 2, 2.0]), "sc")], mode="linear")
    run(net.model(y, [1, 8, 16, 16]))


def test_group_normalization_and_strided_transpose_with_output_padding() -> None:
    net = Net([2, 8, 5, 5])
    g = net.node(
        "GroupNormalization",
        ["x", net.init(RNG.uniform(0.5, 1.5, 8), "s"), net.init(RNG.standard_normal(8) * 0.1, "b")],
        num_groups=2,
    )
    w = net.init(RNG.standard_normal((8, 4, 3, 3)) * 0.3, "wt")
    y = net.node("ConvTranspose", [g, w], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1], group=2)
    m = net.model(y, [2, 8, 10, 10])
    m.opset_import[0].version = 21
    run(m)


@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel_shape": [2, 3], "strides": [2, 1], "ceil_mode": 1},
        {"kernel_shape": [2, 2], "dilations": [2, 2], "storage_order": 1},
    ],
)
def test_max_pool_indices_match_onnxruntime(attrs) -> None:
    """MaxPool's second output: each window's largest element as its flat position in the input
    (row-major, or column-major with storage_order 1), beside the pooled values."""
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    x_shape = [2, 3, 7, 6]
    import onnx.shape_inference

    g = helper.make_graph(
        [node],
        "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("i", TensorProto.INT64, None),
        ],
    )
    m = onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
    run(m)
