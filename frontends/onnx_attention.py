"""The attention chain exporters emit, matched into one `graph.attention`.

Both torch exporters spell eager attention as primitive nodes over rank-4 `[1, H, S, D]`
tensors:

    MatMul(Softmax(mask(MatMul(Q, Transpose(K)) * scale)), V)

with the scale on the scores (Mul or Div by a constant) or split over Q and K, the mask an
additive constant or a `Where` on a constant condition, casts and a NaN guard around the
softmax, and grouped KV heads repeated by `Unsqueeze` + `Expand` + `Reshape`. `match_attention`
recognises that chain at its root (the second MatMul) and returns a `Fused("attention", q,
more=(k, v, runtime biases...))`: q, k, v are the head tensors before any repeat. A constant
all-visible mask becomes no mask, a constant causal one `causal`; every other additive term
between the scores and the softmax (a learned position bias such as T5's, a padding mask, a
tensor computed at run time) and every other constant `Where` mask becomes the additive bias of
`graph.attention`, scaled by whatever scale follows it. Anything else in the chain we cannot
express is matched as `Fused("refused", ...)` so the diagnostic names what is wrong instead of
failing later on a batched MatMul.
"""

from __future__ import annotations

import numpy as np
import onnx

from ipu.frontends.onnx_patterns import Fused, GraphView

MASKED = -1e4
"""A mask value at or below this (after the scale) removes the key (float16's and float32's most
negative finite values and -inf all qualify)."""


def _skip(v: GraphView, name: str, *op_types: str) -> str:
    """Walk back through private single-input no-op nodes (casts to the same type, identities)."""
    while True:
        n = v.sole(name, *op_types)
        if n is None:
            return name
        name = n.input[0]


def _nan_guard(v: GraphView, name: str) -> str:
    """`Where(IsNaN(p), 0, p)` (the dynamo exporter's guard for fully masked rows): p."""
    w = v.sole(name, "Where")
    if w is None:
        return name
    cond = v.node(w.input[0], "IsNaN")
    if cond is not None and w.input[2] == cond.input[0] and v.scalar(w.input[1]) == 0.0:
        return w.input[2]
    return name


def _scalar_factor(v: GraphView, n: onnx.NodeProto) -> tuple[str, float] | None:
    """For `Mul(x, c)`, `Mul(c, x)` or `Div(x, c)` with a scalar constant c: (x, factor)."""
    if n.op_type == "Mul":
        for x, c in (n.input, n.input[::-1]):
            s = v.scalar(c)
            if s is not None and x not in v.consts:
                return x, s
    if n.op_type == "Div":
        s = v.scalar(n.input[1])
        if s is not None and s != 0.0:
            return n.input[0], 1.0 / s
    return None


def _strip_scale(v: GraphView, name: str) -> tuple[str, float]:
    scale = 1.0
    while True:
        n = v.node(name, "Mul", "Div")
        f = _scalar_factor(v, n) if n is not None and v.private(name) else None
        if f is None:
            return name, scale
        name, scale = f[0], scale * f[1]


def mask_kind(m: np.ndarray, s: int, sk: int, visible_is_true: bool | None) -> str | None:
    """ "none" | "causal" for a constant mask broadcast over [.., s, sk]; None when neither.

    `visible_is_true` None: an additive mask (0 visible, <= MASKED hidden); True/False: a bool
    condition whose true entries are the visible (True) or the hidden (False) keys."""
    try:
        full = np.broadcast_to(m, (*m.shape[:-2], s, sk)).reshape(-1, s, sk)
    except ValueError:
        return None
    if not (full == full[:1]).all():
        return None  # differs between heads or batches
    m2 = full[0]
    if visible_is_true is None:
        visible = m2 == 0
        if not (visible | (m2 <= MASKED)).all():
            return None  # a bias, not a mask
    else:
        visible = m2.astype(bool) if visible_is_true else ~m2.astype(bool)
    if visible.all():
        return "none"
    if s == sk and (visible == np.tri(s, sk, dtype=bool)).all():
        return "causal"
    return None


def _repeat_source(v: GraphView, name: str) -> str:
    """Grouped KV heads repeated for the query heads (`Reshape(Expand(Unsqueeze(x, 2)))`, x
    `[1, Hkv, S, D]` to `[1, Hkv * r, S, D]` or its batch-folded `[Hkv * r, S, D]`): x, which
    `graph.attention` groups natively."""
    r = v.sole(name, "Reshape")
    if r is None:
        return name
    e = v.sole(r.input[0], "Expand")
    if e is None:
        return name
    u = v.sole(e.input[0], "Unsqueeze")
    if u is None:
        return name
    x, out = u.input[0], v.shapes.get(name)
    xs = v.shapes.get(x)
    if out is not None and len(out) == 3 and xs is not None and len(xs) == 4 and xs[0] == 1:
        out = (1, *out)  # folded to [Hkv * r, S, D] (the dynamo exporter's SDPA decomposition)
    if xs is None or out is None or len(xs) != 4 or len(out) != 4:
        return name
    axes = next((list(a.ints) for a in u.attribute if a.name == "axes"), None)
    if axes is None and len(u.input) > 1:
        c = v.consts.get(u.input[1])
        axes = None if c is None else [int(a) for a in c.reshape(-1)]
    if axes != [2] or xs[0] != out[0] or xs[2:] != out[2:] or out[1] % xs[1]:
        return name
    return x


def _heads(v: GraphView, name: str) -> tuple[str, bool] | None:
    """K's source for `Transpose(K)` feeding the scores matmul: (K, seq_major). K is `[1, H, S,
    D]` for perm [0, 1, 3, 2] and `[1, S, H, D]` (seq_major) for perm [0, 2, 3, 1]."""
    r = v.node(name, "Reshape")  # [H, D, S] given a leading unit axis
    if r is not None and v.private(name) and len(v.shapes.get(r.input[0], ())) == 3:
        t = v.node(r.input[0], "Transpose")
        perm = next((list(a.ints) for a in t.attribute if a.name == "perm"), None) if t is not None else None
        if perm == [0, 2, 1] and v.private(r.input[0]) and v.shapes.get(name) == (1, *v.shapes[r.input[0]]):
            return t.input[0], False
        return None
    t = v.sole(name, "Transpose")
    if t is None:
        return None
    perm = next((list(a.ints) for a in t.attribute if a.name == "perm"), None)
    if perm == [0, 1, 3, 2]:
        return t.input[0], False
    if perm == [0, 2, 3, 1]:
        return t.input[0], True
    return None


def _scores_path(v: GraphView, name: str) -> bool:
    """Whether `name` leads back, through casts, scalar scales, additive terms and `Where`
    masks, to the Q K^T matmul (which operand of an Add is the scores, the other the bias)."""
    for _ in range(32):
        n = v.producer.get(name)
        if n is None or name in v.consts:
            return False
        if n.op_type == "MatMul":
            return _heads(v, n.input[1]) is not None or _heads(v, _strip_scale(v, n.input[1])[0]) is not None
        f = _scalar_factor(v, n)
        if f is not None:
            name = f[0]
        elif n.op_type in ("Cast", "Identity"):
            name = n.input[0]
        elif n.op_type == "Add":
            a, b = n.input
            name = a if b in v.consts or not _scores_path(v, b) else b
        elif n.op_type == "Where":
            name = n.input[2] if n.input[1] in v.consts else n.input[1]
        else:
            return False
    return False


def match_attention(v: GraphView, root: onnx.NodeProto) -> Fused | None:
    """`MatMul(softmax(scores), V)` of rank-4 batch-1 heads (see the module docstring)."""
    if root.op_type != "MatMul":
        return None
    out = v.shapes.get(root.output[0])
    p_name, v_name = root.input
    p_name = _skip(v, p_name, "Cast", "Identity")
    guarded = _nan_guard(v, p_name) != p_name  # fully masked rows (NaN) become 0
    p_name = _skip(v, _nan_guard(v, p_name), "Cast", "Identity")
    sm = v.node(p_name, "Softmax")
    only_guard = guarded and len(v.consumers.get(p_name, [])) == 2 and p_name not in v.outputs  # IsNaN, Where
    if sm is None or not (v.private(p_name) or only_guard) or out is None or len(out) != 4:
        return None
    ps = v.shapes.get(p_name)
    axis = next((a.i for a in sm.attribute if a.name == "axis"), -1 if v.opset >= 13 else 1)
    if ps is None or len(ps) != 4 or axis % 4 != 3:
        return None

    def refuse(why: str, fallback: bool = True) -> Fused:
        """Not one graph.attention; with `fallback` the chain is lowered node by node instead
        (batched matmuls, softmax), the reason kept for the diagnostic if that fails too."""
        reason = f"attention chain ending at '{root.output[0]}': {why}"
        return Fused("refused", p_name, {"reason": reason, "fallback": fallback})

    s, sk = ps[2], ps[3]
    name, scale, mask = _skip(v, sm.input[0], "Cast", "Identity"), 1.0, "none"
    consts: list[tuple[str, np.ndarray, float]] = []  # (name, additive constant, scale after it)
    runtime: list[tuple[str, float]] = []  # (value, scale after it)
    while True:  # scores: scale, mask and casts in any order, back to the Q K^T matmul
        n = v.producer.get(name)
        if n is None or name in v.consts or not v.private(name):
            return None
        if n.op_type == "MatMul":
            break
        if n.op_type in ("Cast", "Identity"):
            name = n.input[0]
            continue
        f = _scalar_factor(v, n)
        if f is not None:
            name, scale = f[0], scale * f[1]
            continue
        if n.op_type == "Add":
            a, b = n.input
            x, m = (a, b) if b in v.consts or (a not in v.consts and _scores_path(v, a)) else (b, a)
            if m not in v.consts:
                if not _scores_path(v, x):  # walk on along the scores' own (private) operand to name
                    x = a if v.private(a) else b  # what stands between them and the softmax
                    name = x
                    continue
                runtime.append((m, scale))
                name = x
                continue
            kind = mask_kind(v.consts[m], s, sk, None)
            if kind is None:
                consts.append((m, v.consts[m], scale))
        elif n.op_type == "Where":
            cond, a, b = n.input
            if cond not in v.consts:
                return refuse("a Where mask on a condition computed at run time is not supported")
            fill_a, fill_b = v.scalar(a), v.scalar(b)
            if fill_b is not None and fill_b <= MASKED and a not in v.consts:
                x, visible, fill = a, v.consts[cond].astype(bool), fill_b
                kind = mask_kind(v.consts[cond], s, sk, True)
            elif fill_a is not None and fill_a <= MASKED and b not in v.consts:
                x, visible, fill = b, ~v.consts[cond].astype(bool), fill_a
                kind = mask_kind(v.consts[cond], s, sk, False)
            else:
                return refuse("a Where that is not a constant mask")
            if kind is None:  # the replaced scores as an additive mask: 0 visible, the fill hidden
                consts.append((f"{n.output[0]}.mask", np.where(visible, np.float32(0), np.float32(fill)), scale))
        else:
            return refuse(f"{n.op_type} between the scores matmul and the softmax is not supported")
        if kind == "causal":
            mask = "causal"
        name = x
    q_name, k_t = v.producer[name].input
    q_name, q_scale = _strip_scale(v, q_name)
    k_t, k_scale = _strip_scale(v, k_t)
    kt = _heads(v, k_t)
    if kt is None:
        return None
    k_name, k_seq_major = kt
    scale *= q_scale * k_scale
    if scale <= 0:
        return refuse(f"scale {scale} is not positive")
    k_name, v_src = (k_name if k_seq_major else _repeat_source(v, k_name)), _repeat_source(v, v_name)
    shapes = [v.shapes.get(x) for x in (q_name, k_name, v_src)]
    shapes = [(1, *sh) if sh is not None and len(sh) == 3 else sh for sh in shapes]  # [H, S, D]
    if any(sh is None or len(sh) != 4 for sh in shapes):
        return None
    if len({sh[0] for sh in shapes}) != 1 or (k_seq_major and shapes[1][0] != 1):
        return refuse(f"batches of q, k and v differ ({[sh[0] for sh in shapes]}), or keys of batch > 1 are seq-major")
    qs, ks, vs = shapes
    if k_seq_major:
        ks = (ks[0], ks[2], ks[1], ks[3])
    # a batch folds into the heads: query head b*Hq + h reads KV head (b*Hq + h) // r = b*Hkv + h // r
    if ks != vs or qs[1] % ks[1] or qs[3] != ks[3] or qs[2] != s or ks[2] != sk:
        return refuse(f"q {list(qs)}, k {list(ks)} and v {list(vs)} do not form grouped-query attention")
    attrs: dict[str, object] = {"scale": scale, "k_seq_major": k_seq_major}
    if mask == "causal":
        attrs["causal"] = True
    # graph.attention adds its bias to the fully scaled scores: a term met with scale c between
    # it and the softmax adds c * term (a scale on q or k scales the scores alone)
    total = np.zeros((1, 1, s, sk), np.float32)
    for m_name, m, after in consts:
        try:
            total = total + np.float32(after) * m.astype(np.float32)
        except ValueError:
            return refuse(f"additive term '{m_name}' of shape {list(m.shape)} does not broadcast to the scores")
    if total.ndim != 4 or total.shape[0] not in (1, qs[0]) or total.shape[1] not in (1, qs[1]):
        return refuse(f"additive terms of shape {list(total.shape)} do not broadcast to the scores")
    hidden = np.isneginf(total) | (np.triu(np.ones((s, sk), bool), 1) if mask == "causal" else False)
    if consts and not guarded and hidden.all(axis=-1).any():
        return refuse("the mask hides every key of some query row (its softmax is NaN) and nothing replaces it", False)
    if consts:
        attrs["bias_consts"] = consts
    if runtime:
        attrs["bias_runtime"] = [w for _, w in runtime]
    return Fused("attention", q_name, attrs, (k_name, v_src, *(r for r, _ in runtime)))


__all__ = ["mask_kind", "match_attention"]
