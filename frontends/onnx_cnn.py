"""Convolutional networks from ONNX: Conv (1-D and 2-D, strides, pads and auto_pad, dilations,
groups, batch), BatchNormalization (folded into the convolution before it when it is that
convolution's only reader, a per-channel affine otherwise), MaxPool, AveragePool and the global
pools.

ONNX computes in NCHW; `graph.conv` and `graph.pool` take channels last ([N, H, W, C], the
form whose rows are pixels and whose last axis the AMP contracts). Each such op's input is
transposed to channels last once, and its result is kept in both forms: the NCHW one that
ONNX names, and a channels-last twin (`_Importer.channels_last`). Elementwise nodes whose
inputs all have twins (ReLU, a residual Add, a per-channel Mul) are lowered a second time on
the twins, so a chain conv -> BN -> ReLU -> conv reads channels-last values throughout; the
NCHW forms nothing reads are swept as dead code at the end of the import.

A patch embedding (stride equal to the kernel, no padding, batch 1: a ViT's first layer) keeps
its cheaper lowering: one permutation of the image and one matmul.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.dialects.builtin import FloatAttr, f64
from xdsl.ir import SSAValue

from ipu.dialects import graph as g
from ipu.frontends.onnx_compose import Composer
from ipu.frontends.onnx_import import (
    _LOWERINGS,
    AFTER_LOWERING,
    REDUCE_HOOKS,
    OnnxImportError,
    _attrs,
    _Importer,
    _no_attrs,
    _val_input,
    float_input,
    lowering,
)
from ipu.frontends.value_builder import (
    Val,
    ValueBuilder,
    _matmul_core,
    _reduce_rows,
    _transpose2d,
    _tt,
    collapsed,
    transpose_value,
)

TWIN = "{}@channels_last"  # the name a twin is lowered under (never an ONNX value's)


def channels_last(im: _Importer, name: str) -> Val:
    """The [N, H, W, C] form of the NCHW (or NCL, as [N, L, 1, C]) value `name`."""
    if (twin := im.channels_last.get(name)) is not None:
        return twin
    x = im.get(name)
    if not isinstance(x, Val):
        raise im.fail(f"input '{name}' is a constant where a computed tensor was expected")
    if len(x.shape) == 3:
        n, c, length = x.shape
        x = Val(x.ssa, (n, c, length, 1), x.dtype)
    if len(x.shape) != 4:
        raise im.fail(f"input '{name}' of shape {list(x.shape)}: rank 3 (N, C, L) or 4 (N, C, H, W) expected")
    t = transpose_value(im, x, [0, 2, 3, 1], None)
    im.channels_last[name] = t
    return t


def from_channels_last(im: _Importer, y: Val, rank: int, hint: str) -> Val:
    """[N, H, W, C] back to ONNX's NCHW (rank 4) or NCL (rank 3, the length on H, W = 1)."""
    n, h, w, c = y.shape
    if n == 1:  # one 2-D transpose: [H W, C] -> [C, H W], viewed as the row collapse [C H, W]
        t = _transpose2d(im, im.raw_reshape(y.ssa, (h * w, c), y.dtype), y.dtype, None if rank == 4 else hint)
        if rank == 3:
            return Val(t, (1, c, h * w), y.dtype)
        return Val(im.raw_reshape(t, (c * h, w), y.dtype, hint), (1, c, h, w), y.dtype)
    if rank == 3:
        t = transpose_value(im, Val(y.ssa, (n, h * w, c), y.dtype), [0, 2, 1], hint)
        return Val(t.ssa, (n, c, h * w), y.dtype)
    return transpose_value(im, y, [0, 3, 1, 2], hint)


def _ints(attrs: dict[str, object], key: str, default: list[int]) -> list[int]:
    v = attrs.get(key)
    return default if v is None else [int(a) for a in v]  # type: ignore[union-attr]


def window_attrs(
    im: _Importer, attrs: dict[str, object], spatial: tuple[int, ...], kernel: tuple[int, ...], ceil: bool = False
) -> tuple[list[int], list[int], list[int], list[int]]:
    """(strides, dilations, pads as begins then ends, output sizes) of a Conv or pool node over
    `spatial` input sizes, from explicit pads or `auto_pad` (ONNX's rules, ceil mode included)."""
    d = len(spatial)
    strides = _ints(attrs, "strides", [1] * d)
    dil = _ints(attrs, "dilations", [1] * d)
    pads = _ints(attrs, "pads", [0] * 2 * d)
    if len(strides) != d or len(dil) != d or len(pads) != 2 * d:
        raise im.fail(f"strides {strides}, dilations {dil} and pads {pads} do not match {d} spatial axes")
    if min(strides + dil) < 1 or min(pads) < 0:
        raise im.fail(f"strides {strides} and dilations {dil} must be positive and pads {pads} non-negative")
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    span = [(k - 1) * dd + 1 for k, dd in zip(kernel, dil, strict=True)]
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out = [-(-x // s) for x, s in zip(spatial, strides, strict=True)]
        total = [max((o - 1) * s + k - x, 0) for o, s, k, x in zip(out, strides, span, spatial, strict=True)]
        small = [t // 2 for t in total]
        big = [t - t // 2 for t in total]
        pads = (small + big) if auto == "SAME_UPPER" else (big + small)
    elif auto == "VALID":
        pads = [0] * 2 * d
    elif auto != "NOTSET":
        raise im.fail(f"auto_pad {auto!r} is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
    out = []
    for i in range(d):
        room = spatial[i] + pads[i] + pads[d + i] - span[i]
        if room < 0:
            raise im.fail(f"the kernel ({span[i]} wide with dilation) does not fit axis {i + 2} of {spatial[i]} + pads")
        o = (-(-room // strides[i]) if ceil else room // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= spatial[i] + pads[i]:  # a last window of padding only
            o -= 1
        out.append(o)
    return strides, dil, pads, out


def _as_2d(values: list[int], spatial: int, fill: int) -> list[int]:
    """A 1-D op's per-axis values as the 2-D op's: the length on H and W of size 1, so a 1-D
    op's output splits over tiles along its length as an image's does along its rows."""
    return values if spatial == 2 else [*values, fill]


@lowering("Conv")
def _conv(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """`graph.conv` on the input's channels-last form; the bias is a row-vector add; a following
    BatchNormalization that is the only reader folds into the filters and bias."""
    _no_attrs(im, attrs, ("group", "pads", "auto_pad", "strides", "dilations", "kernel_shape"))
    x = _val_input(im, node)
    wv = im.get(node.input[1])
    computed = isinstance(wv, Val)  # filters computed at run time: laid out HWIO on the device
    w = np.zeros(wv.shape, np.float32) if computed else im.const(node.input[1], "the filters").astype(np.float32)
    rank = len(x.shape)
    if rank not in (3, 4) or w.ndim != rank:
        raise im.fail(
            f"only 1-D and 2-D convolutions are supported (input {list(x.shape)}, filters {list(w.shape)}); "
            "a 3-D one would need graph.conv over a depth axis"
        )
    groups = int(attrs.get("group", 1))  # type: ignore[call-overload]
    o, cg = w.shape[:2]
    kernel = tuple(int(k) for k in w.shape[2:])
    if "kernel_shape" in attrs and _ints(attrs, "kernel_shape", []) != list(kernel):
        raise im.fail(f"kernel_shape {_ints(attrs, 'kernel_shape', [])} differs from the filters' {list(kernel)}")
    n, c = x.shape[:2]
    if groups < 1 or c != cg * groups or o % groups:
        raise im.fail(f"{groups} groups: input channels {c} and filters {list(w.shape)} do not divide into them")
    strides, dil, pads, out = window_attrs(im, attrs, tuple(x.shape[2:]), kernel)
    if computed and wv.dtype != x.dtype:
        raise im.fail(f"filters '{node.input[1]}' are {np.dtype(wv.dtype)}, the input {np.dtype(x.dtype)}")
    bias: np.ndarray | Val | None = None
    if len(node.input) > 2 and node.input[2]:
        bias = im.get(node.input[2])
        if not isinstance(bias, Val):
            bias = bias.reshape(-1).astype(np.float32)
        if tuple(bias.shape) != (o,):
            raise im.fail(f"bias of shape {list(bias.shape)} for {o} output channels")
    folded = None if computed or isinstance(bias, Val) else _fold_norm(im, node, w, bias)
    if folded is not None:
        w, bias = folded
    if (
        not computed
        and not isinstance(bias, Val)
        and rank == 4
        and n == 1
        and groups == 1
        and list(strides) == list(kernel)
        and not any(pads)
        and dil == [1, 1]
        and x.shape[2] % kernel[0] == 0
        and x.shape[3] % kernel[1] == 0
        and node.input[0] not in im.channels_last
    ):
        _patch_embedding(im, node, x, w, bias)
        return
    xn = channels_last(im, node.input[0])
    filters: np.ndarray | Val = wv if computed else w  # type: ignore[assignment]
    y = conv_channels_last(im, xn, filters, bias, strides, dil, pads, groups, node.output[0], node.input[2:3])
    im.channels_last[node.output[0]] = y
    im.out(node, from_channels_last(im, y, rank, node.output[0]))


def conv_channels_last(
    im: ValueBuilder,
    xn: Val,
    w: np.ndarray | Val,
    bias: np.ndarray | Val | None,
    strides: list[int],
    dil: list[int],
    pads: list[int],
    groups: int,
    name: str,
    bias_name: Sequence[str] = (),
) -> Val:
    """`graph.conv` of the channels-last input xn ([N, H, W, C], or [N, 1, L, C] for 1-D) by
    filters w [O, C/groups, (KH,) KW] (a constant, or computed: laid out HWIO on the device),
    pads as begins then ends per spatial axis; the bias a row-vector add. [N, OH, OW, O]."""
    n, h, wd, c = xn.shape
    o, cg = w.shape[:2]
    kernel = tuple(int(k) for k in w.shape[2:])
    sp = len(kernel)
    kh, kw = _as_2d(list(kernel), sp, 1)
    st, dl = _as_2d(strides, sp, 1), _as_2d(dil, sp, 1)
    begin, end = _as_2d(pads[:sp], sp, 0), _as_2d(pads[sp:], sp, 0)
    oh = (h + begin[0] + end[0] - ((kh - 1) * dl[0] + 1)) // st[0] + 1
    ow = (wd + begin[1] + end[1] - ((kw - 1) * dl[1] + 1)) // st[1] + 1
    if isinstance(w, Val):  # [O, C/g, (KH,) KW] -> [KH, KW, C/g, O] on the device
        w4 = Val(w.ssa, (o, cg, kh, kw), w.dtype)
        fv = im.raw_reshape(transpose_value(im, w4, [2, 3, 1, 0], None).ssa, (kh, kw, cg, o), xn.dtype)
    else:
        filt = np.ascontiguousarray(w.reshape(o, cg, kh, kw).transpose(2, 3, 1, 0))  # HWIO
        fv = im.param(filt.astype(xn.dtype), xn.dtype, filt.shape, f"{name}.filters")
    x4 = im.raw_reshape(xn.ssa, (n, h, wd, c), xn.dtype)
    conv = g.ConvOp(x4, fv, _tt((n, oh, ow, o), xn.dtype), st, dl, (begin[0], begin[1], end[0], end[1]), groups)
    y4 = im.emit(conv, None)
    y = Val(im.raw_reshape(y4, (n * oh * ow, o), xn.dtype), (n, oh, ow, o), xn.dtype)
    if bias is not None:
        b = bias if isinstance(bias, Val) else bias.astype(xn.dtype)
        bname = bias_name[0] if isinstance(bias, Val) and bias_name else f"{name}.bias"
        y = im.binary_values("add", y, b, "", bname, None)
    return y


def _patch_embedding(im: _Importer, node: onnx.NodeProto, x: Val, w: np.ndarray, bias: np.ndarray | None) -> None:
    im.out(node, patch_embedding(im, x, w, bias, node.output[0]))


def patch_embedding(im: ValueBuilder, x: Val, w: np.ndarray, bias: np.ndarray | None, name: str) -> Val:
    """Stride equal to the kernel, no padding, batch 1: the patches are one permutation of the
    image (`graph.transpose` keeping the last axis, a plan.permute) times the flattened filters."""
    o, c, kh, kw = w.shape
    _, _, h, wd = x.shape
    ph, pw = h // kh, wd // kw
    img = im.raw_reshape(x.ssa, (c, ph, kh, pw, kw), x.dtype)
    t = im.emit(g.TransposeOp(img, (1, 3, 0, 2, 4), _tt((ph, pw, c, kh, kw), x.dtype)), f"{name}.patches")
    patches = Val(im.raw_reshape(t, (ph * pw, c * kh * kw), x.dtype), (ph * pw, c * kh * kw), x.dtype)
    filt = im.val(np.ascontiguousarray(w.reshape(o, c * kh * kw).T).astype(x.dtype), x, f"{name}.filters")
    y = _matmul_core(im, patches, filt.ssa, o, None)  # [P, O]
    if bias is not None:
        y = im.binary_values("add", y, bias.astype(x.dtype), "", f"{name}.bias", None)
    yt = _transpose2d(im, y.ssa, x.dtype, name)  # [O, P]: NCHW
    return Val(im.raw_reshape(yt, (o * ph, pw), x.dtype, name), (1, o, ph, pw), x.dtype)


def _check_norm(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> float:
    """An inference BatchNormalization's epsilon (training mode and its outputs refused)."""
    _no_attrs(im, attrs, ("epsilon", "momentum", "training_mode", "spatial"))
    if int(attrs.get("training_mode", 0)):  # type: ignore[call-overload]
        raise im.fail(
            "BatchNormalization in training mode (batch statistics) is not supported; export the model in "
            "inference mode"
        )
    if any(o for o in node.output[1:]):
        raise im.fail("BatchNormalization's running-statistics outputs are not supported (training mode)")
    if len(node.input) != 5:
        raise im.fail(f"BatchNormalization takes 5 inputs, got {len(node.input)}")
    return float(attrs.get("epsilon", 1e-5))  # type: ignore[arg-type]


def _norm_params(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> tuple[np.ndarray, np.ndarray]:
    """Inference BatchNormalization as y = x * m + a per channel (m = scale / sqrt(var + eps),
    a = B - mean * m), from constant parameters."""
    eps = _check_norm(im, node, attrs)
    scale, beta, mean, var = (im.const(n, f"BatchNormalization's {k}").astype(np.float64).reshape(-1)
                              for n, k in zip(node.input[1:], ("scale", "B", "mean", "var"), strict=True))  # fmt: skip
    if not (scale.shape == beta.shape == mean.shape == var.shape):
        raise im.fail("BatchNormalization's scale, B, mean and var differ in length")
    m = scale / np.sqrt(var + eps)
    return m, beta - mean * m


def _norm_values(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object], like: Val) -> tuple[Val, Val]:
    """m and a (see `_norm_params`) computed on the device, some parameters being run-time values."""
    eps = _check_norm(im, node, attrs)
    s, b, mean, var = (im.get(n) for n in node.input[1:])
    for n, v in zip(node.input[1:], (s, b, mean, var), strict=True):
        if tuple(np.shape(v) if not isinstance(v, Val) else v.shape) != (like.shape[-1],):
            raise im.fail(f"BatchNormalization's '{n}' is not one value per channel ({like.shape[-1]})")
    dt = like.dtype

    def vec(v: Val | np.ndarray, name: str) -> Val:
        return v if isinstance(v, Val) else im.val(np.asarray(v, np.float32).astype(dt), like, name)

    std = im.binary_values("add", vec(var, node.input[4]), np.array([eps], dt), node.input[4], "", None)
    inv = Val(im.emit(g.RsqrtOp(std.ssa), None), std.shape, dt)
    m = im.binary_values("mul", vec(s, node.input[1]), inv, node.input[1], "", None)
    mm = im.binary_values("mul", vec(mean, node.input[3]), m, node.input[3], "", None)
    a = im.binary_values("sub", vec(b, node.input[2]), mm, node.input[2], "", None)
    return m, a


def _fold_norm(
    im: _Importer, conv: onnx.NodeProto, w: np.ndarray, bias: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The filters and bias with the BatchNormalization that is the conv's only reader folded
    in (w * m per output channel, (b - mean) * m + B), recording the norm as folded; None when
    there is no such norm."""
    out = conv.output[0]
    readers = im.consumers.get(out, [])
    if len(readers) != 1 or readers[0].op_type != "BatchNormalization" or readers[0].input[0] != out:
        return None
    if out in {o.name for o in im.graph.output}:
        return None
    bn = readers[0]
    if not all(n in im.consts for n in bn.input[1:]) or len(bn.input) != 5:
        return None
    try:
        m, a = _norm_params(im, bn, _attrs(bn))
    except OnnxImportError:
        return None  # the norm's own lowering names what is wrong
    if m.shape != (w.shape[0],):
        return None
    b = np.zeros(w.shape[0]) if bias is None else bias.astype(np.float64)
    im.folded_norms[bn.output[0]] = out
    wf = (w.astype(np.float64) * m.reshape(-1, *([1] * (w.ndim - 1)))).astype(np.float32)
    return wf, (b * m + a).astype(np.float32)


@lowering("BatchNormalization")
def _batch_norm(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Folded into the convolution before it (its output is that convolution's), else a
    per-channel multiply and add on the channels-last form."""
    if (conv_out := im.folded_norms.get(node.output[0])) is not None:
        im.out(node, im.vals[conv_out])
        if conv_out in im.channels_last:
            im.channels_last[node.output[0]] = im.channels_last[conv_out]
        return
    x = _val_input(im, node)
    if len(x.shape) < 2:
        raise im.fail(f"BatchNormalization over {list(x.shape)}: (N, C, ...) expected")
    ms: tuple[np.ndarray | Val, np.ndarray | Val]
    if all(n in im.consts for n in node.input[1:]):
        m, a = _norm_params(im, node, attrs)
        if m.shape != (x.shape[1],):
            raise im.fail(f"BatchNormalization over {list(x.shape)} with {m.size} channels")
        ms = (m.astype(x.dtype), a.astype(x.dtype))
    else:
        ms = _norm_values(im, node, attrs, Val(x.ssa, (x.shape[1],), x.dtype))
    xn = x if len(x.shape) == 2 else channels_last(im, node.input[0])  # [N, C]: channels already last
    y = im.binary_values("mul", xn, ms[0], "", f"{node.output[0]}.scale", None)
    if len(x.shape) == 2:
        im.out(node, im.binary_values("add", y, ms[1], "", f"{node.output[0]}.shift", node.output[0]))
        return
    y = im.binary_values("add", y, ms[1], "", f"{node.output[0]}.shift", None)
    im.channels_last[node.output[0]] = y
    im.out(node, from_channels_last(im, y, len(x.shape), node.output[0]))


@lowering("MaxPool", "AveragePool")
def _pool(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """`graph.pool` on the channels-last form (1-D and 2-D; ceil mode, pads, count_include_pad)."""
    allowed = ("kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations")
    _no_attrs(im, attrs, (*allowed, "storage_order") if node.op_type == "MaxPool" else (*allowed, "count_include_pad"))
    x = _val_input(im, node)
    if len(node.output) > 1 and node.output[1]:
        _max_pool_indices(im, node, attrs, x)
        if not node.output[0]:
            return
    rank = len(x.shape)
    kernel = tuple(_ints(attrs, "kernel_shape", []))
    if rank == 5 and len(kernel) == 3:
        _pool_3d(im, node, attrs, x, kernel)
        return
    if rank not in (3, 4) or len(kernel) != rank - 2:
        raise im.fail(f"only 1-D, 2-D and 3-D pools are supported (input {list(x.shape)}, kernel {list(kernel)})")
    if np.dtype(x.dtype).kind != "f":
        raise im.fail(f"{node.op_type} of {np.dtype(x.dtype)} values; floats only")
    ceil = bool(attrs.get("ceil_mode", 0))
    strides, dil, pads, out = window_attrs(im, attrs, tuple(x.shape[2:]), kernel, ceil)
    if any(p >= k * d for p, k, d in zip(pads, kernel * 2, dil * 2, strict=True)):
        raise im.fail(f"pads {pads} as large as the {list(kernel)} window: a window of padding only")
    kind = "max" if node.op_type == "MaxPool" else "avg"
    xn = channels_last(im, node.input[0])
    count_pad = bool(attrs.get("count_include_pad", 0))
    y = pool_channels_last(im, xn, kind, list(kernel), strides, dil, pads, out, count_pad)
    im.channels_last[node.output[0]] = y
    im.out(node, from_channels_last(im, y, rank, node.output[0]))


def _max_pool_indices(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object], x: Val) -> None:
    """MaxPool's Indices (2-D): each window's first largest element (in row-major window order,
    as onnxruntime picks ties) as its flat position in the input (`storage_order` 0: row-major,
    1: column-major per image and channel). The windows' K = KH KW strided slices of the input
    padded with -inf stand side by side on a new last axis, an ArgMax picks k, and the position
    is a constant per output pixel plus a constant per k (gathered), added in float32 (exact:
    positions stay below 2^24)."""
    kernel = tuple(_ints(attrs, "kernel_shape", []))
    if len(x.shape) != 4 or len(kernel) != 2:
        raise im.fail(f"MaxPool's Indices output of {list(x.shape)}: only 2-D pools' indices are supported")
    if np.dtype(x.dtype).kind != "f":
        raise im.fail(f"MaxPool of {np.dtype(x.dtype)} values; floats only")
    n, ch, h, w = x.shape
    if n * ch * h * w > 1 << 24:
        raise im.fail(f"MaxPool's Indices of {list(x.shape)}: positions past 2^24 are not supported")
    strides, dil, pads, out = window_attrs(im, attrs, (h, w), kernel, bool(attrs.get("ceil_mode", 0)))
    (sh, sw), (dh, dw), (oh, ow) = strides, dil, out
    pt, pl, pb, pr = pads
    # ceil mode: the last window may reach past the end pads; -inf there too
    pb += max(0, (oh - 1) * sh + (kernel[0] - 1) * dh + 1 - (h + pt + pb))
    pr += max(0, (ow - 1) * sw + (kernel[1] - 1) * dw + 1 - (w + pl + pr))
    c = Composer(node)
    c.output = node.output[1]
    xp = c.node(
        "Pad",
        [node.input[0], c.const(np.array([0, 0, pt, pl, 0, 0, pb, pr], np.int64)), c.const(np.array(-np.inf, x.dtype))],
    )
    rows = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            st = np.array([i * dh, j * dw], np.int64)
            end = st + np.array([(oh - 1) * sh + 1, (ow - 1) * sw + 1], np.int64)
            win = c.node(
                "Slice",
                [
                    xp,
                    c.const(st),
                    c.const(end),
                    c.const(np.array([2, 3], np.int64)),
                    c.const(np.array([sh, sw], np.int64)),
                ],
            )
            rows.append(c.node("Unsqueeze", [win, c.const(np.array([4], np.int64))]))
    k = c.node("ArgMax", [c.node("Concat", rows, axis=4)], axis=4, keepdims=0)
    row_major = not int(attrs.get("storage_order", 0))  # type: ignore[call-overload]
    hs = np.arange(oh) * sh - pt
    ws = np.arange(ow) * sw - pl
    plane = hs[:, None] * w + ws[None, :] if row_major else ws[None, :] * h + hs[:, None]
    base = (np.arange(n * ch).reshape(n, ch, 1, 1) * h * w + plane).astype(np.int64)
    ii, jj = np.divmod(np.arange(kernel[0] * kernel[1]), kernel[1])
    step = ii * dh * w + jj * dw if row_major else jj * dw * h + ii * dh
    flat = c.node("Reshape", [k, c.const(np.array([-1], np.int64))])  # the lookup takes a row of ids
    picked = c.node("Gather", [c.const(step.astype(np.float32).reshape(-1, 1)), flat])
    shaped = c.node("Reshape", [picked, c.const(np.array(base.shape, np.int64))])
    # positions are whole numbers below 2^24, exact in float32; int64 lives in int32 words
    pos = c.node("Add", [shaped, c.const(base.astype(np.float32))])
    c.lower(im, c.node("Cast", [c.node("Cast", [pos], to=onnx.TensorProto.INT32)], to=onnx.TensorProto.INT64))


def pool_channels_last(
    im: ValueBuilder,
    xn: Val,
    kind: str,
    kernel: list[int],
    strides: list[int],
    dil: list[int],
    pads: list[int],
    out: list[int],
    count_include_pad: bool,
) -> Val:
    """`graph.pool` (`kind` max or avg) of the channels-last input xn ([N, H, W, C], or
    [N, 1, L, C] for 1-D) to the spatial sizes `out`, pads as begins then ends per axis."""
    n, h, wd, c = xn.shape
    sp = len(kernel)
    oh, ow = _as_2d(out, sp, 1)
    begin, end = _as_2d(pads[:sp], sp, 0), _as_2d(pads[sp:], sp, 0)
    op = g.PoolOp(
        im.raw_reshape(xn.ssa, (n, h, wd, c), xn.dtype),
        kind,
        _as_2d(kernel, sp, 1),
        _tt((n, oh, ow, c), xn.dtype),
        _as_2d(strides, sp, 1),
        _as_2d(dil, sp, 1),
        (begin[0], begin[1], end[0], end[1]),
        count_include_pad,
    )
    return Val(im.raw_reshape(im.emit(op, None), (n * oh * ow, c), xn.dtype), (n, oh, ow, c), xn.dtype)


def _pool_3d(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object], x: Val, kernel: tuple[int, ...]) -> None:
    """A 3-D pool as two 2-D pools of the same kind (`Composer`): over (H, W) with the depth
    folded into the channels, then over depth. A box window separates exactly: its max is the max
    of the (H, W) maxima, and its mean the mean of the (H, W) means, since the count of a clipped
    box is the product of its per-axis counts (padding counted or not, ceil mode included)."""
    n, ch, d, h, w = x.shape
    ceil = bool(attrs.get("ceil_mode", 0))
    strides, dil, pads, out = window_attrs(im, attrs, (d, h, w), kernel, ceil)
    extra: dict[str, object] = {"ceil_mode": int(ceil)}
    if node.op_type == "AveragePool":
        extra["count_include_pad"] = int(attrs.get("count_include_pad", 0))  # type: ignore[call-overload]
    c = Composer(node)
    x4 = c.node("Reshape", [node.input[0], c.const(np.array([n, ch * d, h, w], np.int64))])
    hw = c.node(
        node.op_type,
        [x4],
        kernel_shape=list(kernel[1:]),
        strides=strides[1:],
        dilations=dil[1:],
        pads=[pads[1], pads[2], pads[4], pads[5]],
        **extra,
    )
    oh, ow = out[1], out[2]
    y = c.node("Reshape", [hw, c.const(np.array([n, ch, d, oh * ow], np.int64))])
    dp = c.node(
        node.op_type,
        [y],
        kernel_shape=[kernel[0], 1],
        strides=[strides[0], 1],
        dilations=[dil[0], 1],
        pads=[pads[0], 0, pads[3], 0],
        **extra,
    )
    c.lower(im, c.node("Reshape", [dp, c.const(np.array([n, ch, out[0], oh, ow], np.int64))]))


MEAN_MATRIX_ELEMENTS = 1 << 21
"""The largest block-diagonal averaging matrix [N, N H W] a spatial mean of a channels-last value
is computed with (4 MB of half-precision constants); larger ones reduce rows of the NCHW form."""


def spatial_mean(im: _Importer, name: str, hint: str) -> Val | None:
    """The mean over the spatial axes of NCHW (NCL) value `name`, [N, C], read from its
    channels-last twin: a constant [N, N H W] block-diagonal matrix of ones times the twin's rows
    [N H W, C] (the AMP contracts the pixels, f32 inside; no transpose back to NCHW, which at
    ResNet-50's batch 16 is a 3.2 MB all-to-all before its pool), divided by H W (1 / 49 has no
    exact half-precision value: a factor would bias every mean by 4e-4); None without a twin or
    when the matrix would be too large."""
    twin = im.channels_last.get(name)
    if twin is None:
        return None
    n, h, w, c = twin.shape
    hw = h * w
    if n * n * hw > MEAN_MATRIX_ELEMENTS or np.dtype(twin.dtype).kind != "f":
        return None
    ones = np.kron(np.eye(n), np.ones((1, hw))).astype(twin.dtype)
    a = Val(im.param(ones, twin.dtype, (n, n * hw), f"{hint}.pixels"), (n, n * hw), twin.dtype)
    rows = im.raw_reshape(twin.ssa, (n * hw, c), twin.dtype)
    total = _matmul_core(im, a, rows, c, f"{hint}.sum")
    count = im.splat(float(hw), total, f"{hint}.count")
    return Val(im.emit(g.DivOp(total.ssa, count, total.ssa.type), hint), (n, c), twin.dtype)


def _reduce_spatial_mean(im: _Importer, node: onnx.NodeProto, x: Val, axes: list[int], keep: bool) -> Val | None:
    """ReduceMean over exactly the spatial axes of an NCHW (NCL) value with a channels-last twin
    (torch's `x.mean((2, 3))`, the dynamo export of `adaptive_avg_pool2d(1)`): `spatial_mean`."""
    rank = len(x.shape)
    if node.op_type != "ReduceMean" or rank not in (3, 4) or axes != list(range(2, rank)):
        return None
    m = spatial_mean(im, node.input[0], node.output[0] if not keep else f"{node.output[0]}.rows")
    if m is None:
        return None
    n, c = x.shape[:2]
    shape = (n, c, *([1] * (rank - 2))) if keep else (n, c)
    return Val(im.raw_reshape(m.ssa, collapsed(shape), x.dtype, node.output[0]), shape, x.dtype)


REDUCE_HOOKS.append(_reduce_spatial_mean)


@lowering("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """The mean (max) of each channel's spatial extent: a row reduction of [N C, H W] (a mean of
    a value with a channels-last twin: `spatial_mean`)."""
    _no_attrs(im, attrs)
    x = _val_input(im, node)
    if len(x.shape) < 3:
        raise im.fail(f"{node.op_type} of {list(x.shape)}: rank 3 or more (N, C, spatial...) expected")
    n, c = x.shape[:2]
    spatial = math.prod(x.shape[2:])
    if np.dtype(x.dtype).kind != "f":
        raise im.fail(f"{node.op_type} of {np.dtype(x.dtype)} values; floats only")
    shape = (n, c, *([1] * (len(x.shape) - 2)))
    if node.op_type == "GlobalAveragePool" and len(x.shape) in (3, 4):
        m = spatial_mean(im, node.input[0], node.output[0])
        if m is not None:
            im.out(node, Val(im.raw_reshape(m.ssa, (n, c), x.dtype, node.output[0]), shape, x.dtype))
            return
    flat = im.raw_reshape(x.ssa, (n * c, spatial), x.dtype)
    kind = "mean" if node.op_type == "GlobalAveragePool" else "max"
    r = _reduce_rows(im, flat, kind, x.dtype, (n, c), None)
    im.out(node, Val(im.raw_reshape(r, (n, c), x.dtype, node.output[0]), shape, x.dtype))


# elementwise nodes lowered a second time on their inputs' channels-last twins
FOLLOW_UNARY = frozenset(
    {"Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "LeakyRelu", "Tanh", "Elu", "Selu", "Gelu", "Mish",
     "Softplus", "Neg", "Abs", "Exp", "Erf", "Sqrt", "Identity", "PRelu"}
)  # fmt: skip
FOLLOW_BINARY = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum"})


def _twin_const(c: np.ndarray, rank: int) -> np.ndarray | None:
    """A constant operand of an NCHW (NCL) elementwise node in the channels-last form, or None
    when it is neither a scalar nor broadcast over the spatial axes."""
    if c.size == 1:
        return c
    if c.ndim > rank:
        return None
    full = c.reshape((1,) * (rank - c.ndim) + c.shape)
    if any(d != 1 for d in full.shape[2:]):
        return None  # varies over the spatial axes: not a per-channel value
    return full.reshape(full.shape[:2]).reshape(full.shape[0], 1, 1, full.shape[1])


def follow_channels_last(im: _Importer, node: onnx.NodeProto) -> None:
    """Give an elementwise node's result a channels-last twin when every computed input has one."""
    if node.op_type not in FOLLOW_UNARY | FOLLOW_BINARY or len(node.output) != 1 or node.output[0] not in im.vals:
        return
    ins = [n for n in node.input if n]
    computed = [n for n in ins if n in im.vals]
    if not computed or not all(n in im.channels_last for n in computed):
        return
    if node.op_type in FOLLOW_UNARY and node.input[0] not in computed:
        return
    rank = len(im.vals[node.output[0]].shape)
    if rank not in (3, 4):
        return
    names: dict[str, str] = {}
    temps: list[str] = []
    for i, name in enumerate(node.input):
        if not name or name in names:
            continue
        if name in im.vals:
            names[name] = TWIN.format(name)
            im.vals[names[name]] = im.channels_last[name]
            temps.append(names[name])
        elif name in im.consts and node.op_type in FOLLOW_BINARY | {"PRelu"} and i < 2:
            c = _twin_const(im.consts[name], rank)
            if c is None:
                break
            names[name] = TWIN.format(name)
            im.consts[names[name]] = c
            temps.append(names[name])
    else:
        shadow = onnx.helper.make_node(
            node.op_type, [names.get(n, n) for n in node.input], [TWIN.format(node.output[0])], name=node.name
        )
        shadow.attribute.extend(node.attribute)
        try:
            _LOWERINGS[node.op_type](im, shadow, _attrs(shadow))
            twin = im.vals.pop(shadow.output[0], None)
            if twin is not None and len(twin.shape) == 4:
                # the NCHW value is now the twin's transpose: the NCHW chain before it goes dead
                im.channels_last[node.output[0]] = twin
                im.vals[node.output[0]] = from_channels_last(im, twin, rank, node.output[0])
        except OnnxImportError:
            pass  # the twin is not needed: the NCHW value stands
    for t in temps:
        im.vals.pop(t, None)
        im.consts.pop(t, None)


AFTER_LOWERING.append(follow_channels_last)


@lowering("ConvTranspose")
def _conv_transpose(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """The transposed convolution as the convolution it is: the input dilated by the stride
    (zeros between its pixels, by a pad of a [.., H, 1, W, 1, C] view), padded by the kernel's
    span less the pads, and convolved at stride 1 with the filters flipped and their channel
    roles swapped (per group)."""
    allowed = ("auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides")
    _no_attrs(im, attrs, allowed)
    x = _val_input(im, node)
    wv = im.get(node.input[1])
    computed = isinstance(wv, Val)  # filters computed at run time: flipped by windows on the device
    w = np.zeros(wv.shape, np.float32) if computed else wv.astype(np.float32)
    rank = len(x.shape)
    if rank not in (3, 4) or w.ndim != rank:
        raise im.fail(f"only 1-D and 2-D transposed convolutions are supported (input {list(x.shape)})")
    sp = rank - 2
    groups = int(attrs.get("group", 1))  # type: ignore[call-overload]
    c, og = w.shape[:2]
    kernel = [int(k) for k in w.shape[2:]]
    if groups < 1 or x.shape[1] != c or c % groups:
        raise im.fail(
            f"{groups} groups: input channels {x.shape[1]} and filters {list(w.shape)} do not divide into them"
        )
    cg, o = c // groups, og * groups
    strides = _ints(attrs, "strides", [1] * sp)
    dil = _ints(attrs, "dilations", [1] * sp)
    outpad = _ints(attrs, "output_padding", [0] * sp)
    pads = _ints(attrs, "pads", [0] * 2 * sp)
    if len(strides) != sp or len(dil) != sp or len(outpad) != sp or len(pads) != 2 * sp:
        raise im.fail(
            f"strides {strides}, dilations {dil}, output_padding {outpad} or pads {pads} do not fit {sp} axes"
        )
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dil, strict=True)]
    ins = list(x.shape[2:])
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    want = _ints(attrs, "output_shape", [])
    if auto in ("SAME_UPPER", "SAME_LOWER") or want:
        out = want[-sp:] if want else [n * s for n, s in zip(ins, strides, strict=True)]
        total = [s * (n - 1) + op + k - t for s, n, op, k, t in zip(strides, ins, outpad, span, out, strict=True)]
        upper = auto != "SAME_LOWER"
        half = [int(t / 2) for t in total]  # halved toward zero, as ONNX's reference does (a negative total widens)
        pads = [h if upper else t - h for t, h in zip(total, half, strict=True)]
        pads += [t - h if upper else h for t, h in zip(total, half, strict=True)]
    if any(p > k - 1 for p, k in zip(pads, span * 2, strict=True)):  # (a negative pad widens the output)
        raise im.fail(f"pads {pads} beyond the kernel's span {span}: the output would crop the dilated input")
    xn = channels_last(im, node.input[0])
    n, h, wd, _ = xn.shape
    sh, sw = _as_2d(strides, sp, 1)
    # the input dilated: [N, H, 1, W, 1, C] placed at the origin of [N, H, sh, W, sw, C]
    v = im.raw_reshape(xn.ssa, (n, h, 1, wd, 1, c), x.dtype)
    if sh > 1 or sw > 1:
        v = im.emit(g.PadOp(v, (0, 0, 0, 0, 0, 0), _tt((n, h, sh, wd, sw, c), x.dtype)), None)
    dh, dw = (h - 1) * sh + 1, (wd - 1) * sw + 1
    v = im.raw_reshape(v, (n, h * sh, wd * sw, c), x.dtype)
    if (dh, dw) != (h * sh, wd * sw):
        v = im.emit(g.SliceOp(v, (0, 0, 0, 0), _tt((n, dh, dw, c), x.dtype)), None)
    kh, kw = _as_2d(kernel, sp, 1)
    sph, spw = _as_2d(span, sp, 1)
    begin, end = _as_2d(pads[:sp], sp, 0), _as_2d(pads[sp:], sp, 0)
    oph, opw = _as_2d(outpad, sp, 0)
    cpad = (sph - 1 - begin[0], spw - 1 - begin[1], sph - 1 - end[0] + oph, spw - 1 - end[1] + opw)
    oh, ow = dh + cpad[0] + cpad[2] - sph + 1, dw + cpad[1] + cpad[3] - spw + 1
    # HWIO filters of the equivalent convolution: [i, j, c', k og + o'] = W[k cg + c', o', flipped i, j]
    if computed:
        if groups != 1:
            raise im.fail("a grouped ConvTranspose with filters computed at run time is not supported")
        fv = _flipped_filters(im, Val(wv.ssa, (c, og, kh, kw), x.dtype))  # type: ignore[union-attr]
    else:
        w4 = w.reshape(c, og, kh, kw)[:, :, ::-1, ::-1]
        filt = np.zeros((kh, kw, cg, o), np.float32)
        for k in range(groups):
            filt[:, :, :, k * og : (k + 1) * og] = w4[k * cg : (k + 1) * cg].transpose(2, 3, 0, 1)
        fv = im.param(filt.astype(x.dtype), x.dtype, filt.shape, f"{node.output[0]}.filters")
    conv = g.ConvOp(v, fv, _tt((n, oh, ow, o), x.dtype), (1, 1), _as_2d(dil, sp, 1), cpad, groups)
    y = Val(im.raw_reshape(im.emit(conv, None), (n * oh * ow, o), x.dtype), (n, oh, ow, o), x.dtype)
    if len(node.input) > 2 and node.input[2]:
        b = im.const(node.input[2], "the bias").reshape(-1).astype(x.dtype)
        y = im.binary_values("add", y, b, "", f"{node.output[0]}.bias", None)
    im.channels_last[node.output[0]] = y
    im.out(node, from_channels_last(im, y, rank, node.output[0]))


def _flipped_filters(im: _Importer, w: Val) -> SSAValue:
    """Run-time [C, O, KH, KW] filters as [KH, KW, C, O] with both kernel axes reversed: one
    transpose, then the kernel positions' slices joined in mirrored order."""
    c, o, kh, kw = w.shape
    t = im.raw_reshape(transpose_value(im, w, [2, 3, 0, 1], None).ssa, (kh, kw, c, o), w.dtype)
    rows = []
    for i in range(kh):
        cols = [
            im.emit(g.SliceOp(t, (kh - 1 - i, kw - 1 - j, 0, 0), _tt((1, 1, c, o), w.dtype)), None) for j in range(kw)
        ]
        rows.append(cols[0] if kw == 1 else im.emit(g.ConcatOp(cols, 1, _tt((1, kw, c, o), w.dtype)), None))
    return rows[0] if kh == 1 else im.emit(g.ConcatOp(rows, 0, _tt((kh, kw, c, o), w.dtype)), None)


def _axis_matrix(
    im: _Importer, node: onnx.NodeProto, n_in: int, n_out: int, scale: float, roi: tuple[float, float] | None
) -> np.ndarray:
    """[n_out, n_in]: the Resize node's interpolation along one axis at `scale` (and `roi`, for
    tf_crop_and_resize), found by resizing the identity with ONNX's reference implementation
    (its modes are separable per axis)."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    drop = ("axes", "keep_aspect_ratio_policy")
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute if a.name not in drop}
    if float(attrs.get("extrapolation_value", 0.0)) != 0.0:
        raise im.fail("Resize with a non-zero extrapolation_value is affine, not linear, in its input; not supported")
    scales = np.array([1, 1, scale, 1], np.float32)
    roi_v = np.array([0, 0, roi[0], 0, 1, 1, roi[1], 1], np.float32) if roi else np.zeros(0, np.float32)
    inits = [onnx.numpy_helper.from_array(scales, "scales"), onnx.numpy_helper.from_array(roi_v, "roi")]
    r = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], **attrs)
    g_ = helper.make_graph(
        [r],
        "axis",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(g_, opset_imports=[helper.make_opsetid("", max(im.opset, 13))])
    try:
        (y,) = ReferenceEvaluator(model).run(None, {"x": np.eye(n_in, dtype=np.float32).reshape(1, 1, n_in, n_in)})
    except Exception as e:  # noqa: BLE001 -- the reference names what it cannot do
        raise im.fail(f"Resize along an axis of {n_in} to {n_out}: {type(e).__name__}: {e}") from None
    y = np.asarray(y, np.float32)
    if y.shape != (1, 1, n_out, n_in):
        raise im.fail(f"Resize at scale {scale} gives {y.shape[2]} of {n_in}, where the model's shape says {n_out}")
    return y.reshape(n_out, n_in)


def _resize_scales(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object], x: Val, shape) -> list[float]:
    """The scale each axis is resized by: the `scales` input's, or from `sizes` under the
    keep_aspect_ratio_policy (stretch: each axis its own; not_larger / not_smaller: one)."""
    rank = len(x.shape)
    axes = [int(a) % rank for a in _ints(attrs, "axes", list(range(rank)))]
    consts = [im.consts.get(n) if n else None for n in list(node.input[1:]) + [""] * 3]
    sc = consts[1] if len(node.input) > 2 else None
    sz = consts[2] if len(node.input) > 3 else None
    if node.op_type == "Upsample":
        sc = consts[0]
    out = [1.0] * rank
    if sc is not None and sc.size:
        for a, v in zip(axes if sc.size == len(axes) else range(rank), sc.reshape(-1), strict=True):
            out[a] = float(v)
        return out
    if sz is None or not sz.size:
        raise im.fail("Resize needs constant scales or sizes")
    ratios = {a: float(v) / x.shape[a] for a, v in zip(axes, sz.reshape(-1), strict=True)}
    policy = attrs.get("keep_aspect_ratio_policy", b"stretch")
    policy = policy.decode() if isinstance(policy, bytes) else str(policy)
    if policy != "stretch":
        one = min(ratios.values()) if policy == "not_larger" else max(ratios.values())
        ratios = dict.fromkeys(ratios, one)
    for a, v in ratios.items():
        out[a] = v
    return out


@lowering("Resize", "Upsample")
def _resize(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Nearest, linear or cubic resizing of the spatial axes, each a matmul by its constant
    interpolation matrix (from ONNX's reference on the identity): exact for nearest, the
    reference's weights for linear and cubic."""
    x = _val_input(im, node)
    rank = len(x.shape)
    shape = im.static_shapes.get(node.output[0])
    if shape is None:
        raise im.fail("the Resize output's shape is not known at compile time (constant scales or sizes needed)")
    if rank < 3 or tuple(shape[:2]) != tuple(x.shape[:2]) or len(shape) != rank:
        raise im.fail(f"Resize of {list(x.shape)} to {list(shape)}: only the spatial axes may change")
    if np.dtype(x.dtype).kind != "f":
        raise im.fail(f"Resize of {np.dtype(x.dtype)} values; floats only")
    if node.op_type == "Upsample":  # opset 7-9: scales only, nearest or linear, asymmetric
        mode = attrs.get("mode", b"nearest")
        node = onnx.helper.make_node(
            "Resize",
            [node.input[0]],
            list(node.output),
            mode=mode,
            coordinate_transformation_mode="asymmetric",
            nearest_mode="floor",
            name=node.name,
        )
    scales = _resize_scales(im, node, attrs, x, shape)
    mode = attrs.get("coordinate_transformation_mode", b"half_pixel")
    roi_c = im.consts.get(node.input[1]) if node.op_type == "Resize" and len(node.input) > 1 else None
    crop = (mode.decode() if isinstance(mode, bytes) else str(mode)) == "tf_crop_and_resize"
    if crop and (roi_c is None or not roi_c.size):
        raise im.fail("tf_crop_and_resize needs a constant roi")
    y = x
    for axis in range(2, rank):
        n_in, n_out = y.shape[axis], int(shape[axis])
        roi = None
        if crop:
            assert roi_c is not None
            ax = [int(a) % rank for a in _ints(attrs, "axes", list(range(rank)))]
            r = roi_c.reshape(-1)
            k = len(r) // 2
            roi = (
                (float(r[ax.index(axis)]), float(r[k + ax.index(axis)])) if axis in ax and k == len(ax) else (0.0, 1.0)
            )
            if k == rank:
                roi = (float(r[axis]), float(r[rank + axis]))
        a = _axis_matrix(im, node, n_in, n_out, scales[axis], roi)
        if n_in == n_out and np.array_equal(a, np.eye(n_in, dtype=np.float32)):
            continue
        last = axis == rank - 1
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        t = y if last else transpose_value(im, y, perm, None)
        m = im.val(np.ascontiguousarray(a.T).astype(x.dtype), t, f"{node.output[0]}.axis{axis}")
        r = _matmul_core(im, Val(t.ssa, (math.prod(t.shape[:-1]), n_in), t.dtype), m.ssa, n_out, None)
        r = Val(r.ssa, (*t.shape[:-1], n_out), t.dtype)
        y = r if last else transpose_value(im, r, perm, None)
    im.out(node, Val(im.raw_reshape(y.ssa, y.ssa.type.get_shape(), x.dtype, node.output[0]), y.shape, x.dtype))


@lowering("InstanceNormalization", "GroupNormalization")
def _instance_norm(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Each (batch, channel group)'s spatial extent normalized (a layer norm over rows of the
    NCHW row collapse), then the per-channel scale and bias as columns of one value per row."""
    group = node.op_type == "GroupNormalization"
    _no_attrs(im, attrs, ("epsilon", "num_groups", "stash_type") if group else ("epsilon",))
    x = _val_input(im, node)
    if len(x.shape) < 3:
        raise im.fail(f"{node.op_type} of {list(x.shape)}: (N, C, spatial...) expected")
    n, c = x.shape[:2]
    spatial = math.prod(x.shape[2:])
    groups = int(attrs.get("num_groups", c)) if group else c  # type: ignore[call-overload]
    if groups < 1 or c % groups:
        raise im.fail(f"{groups} groups do not divide {c} channels")
    scale = im.const(node.input[1], f"{node.op_type}'s scale").astype(np.float32).reshape(-1)
    bias = im.const(node.input[2], f"{node.op_type}'s bias").astype(np.float32).reshape(-1)
    if scale.size != c or bias.size != c:
        raise im.fail(f"scale and bias of {scale.size} and {bias.size} values for {c} channels")
    rows, cols = n * groups, c // groups * spatial
    flat = im.raw_reshape(x.ssa, (rows, cols), x.dtype)
    ones = im.param(np.array(1.0), x.dtype, (cols,), f"{node.output[0]}.ones")
    zeros = im.param(np.array(0.0), x.dtype, (cols,), f"{node.output[0]}.zeros")
    op = g.LayerNormOp.create(operands=[flat, ones, zeros], result_types=[flat.type])
    op.attributes["epsilon"] = FloatAttr(float(attrs.get("epsilon", 1e-5)), f64)  # type: ignore[arg-type]
    normed = Val(im.emit(op, None), (rows, cols), x.dtype)
    # per channel: rows of [N C, spatial], one scale and bias value a row
    per = Val(im.raw_reshape(normed.ssa, (n * c, spatial), x.dtype), (n * c, spatial), x.dtype)
    s_col, b_col = (np.tile(v, n).reshape(n * c, 1).astype(x.dtype) for v in (scale, bias))
    y = im.binary_values("mul", per, s_col, "", f"{node.output[0]}.scale", None)
    y = im.binary_values("add", y, b_col, "", f"{node.output[0]}.bias", None)
    im.out(node, Val(im.raw_reshape(y.ssa, collapsed(x.shape), x.dtype, node.output[0]), x.shape, x.dtype))


@lowering("LpPool", since=11)
def _lp_pool(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """(sum of |x|^p over each window)^(1/p), padding counting as 0: an `AveragePool` of |x|^p
    that counts the padding, times the window size (`Composer`)."""
    allowed = ("kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations", "p")
    _no_attrs(im, attrs, allowed)
    x = float_input(im, node)
    p = float(attrs.get("p", 2))  # type: ignore[arg-type]
    if p <= 0:
        raise im.fail(f"p = {p} must be positive")
    dt = np.dtype(x.dtype).type
    kernel = _ints(attrs, "kernel_shape", [])
    pool_attrs = {k: v for k, v in attrs.items() if k != "p"}
    c = Composer(node)
    a = c.node("Abs", [node.input[0]])
    powered = c.node("Mul", [a, a]) if p == 2 else c.node("Pow", [a, c.const(np.array(p, dt))])
    mean = c.node("AveragePool", [powered], count_include_pad=1, **pool_attrs)
    total = c.node("Mul", [mean, c.const(np.array(float(np.prod(kernel)), dt))])
    c.lower(im, c.node("Sqrt", [total]) if p == 2 else c.node("Pow", [total, c.const(np.array(1.0 / p, dt))]))
