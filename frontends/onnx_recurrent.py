"""Recurrent layers from ONNX: LSTM, GRU and RNN (forward, reverse and bidirectional, batch-first
layout, initial states, LSTM peepholes, GRU's linear_before_reset).

Each layer unrolls over its time steps in graph ops: the input projections of every step are one
matmul per gate hoisted out of the loop ([T B, I] x [I, H]), and each step adds its slice of them
to the recurrent projection of the previous hidden state (a [B, H] x [H, H] matmul per gate), then
applies the gate nonlinearities. The steps are identical but for their slice, so roll-layers can
fold a long sequence into a loop; the unrolled form is always correct.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from ipu.dialects import graph as g
from ipu.frontends.onnx_import import (
    _Importer,
    _no_attrs,
    _val_input,
    lowering,
)
from ipu.frontends.value_builder import (
    Val,
    _tt,
    collapsed,
    transpose_value,
)

MAX_STEPS = 4096  # time steps unrolled at most

ACTIVATIONS: dict[str, type[g.ElementwiseUnaryOp]] = {"Sigmoid": g.SigmoidOp, "Tanh": g.TanhOp, "Relu": g.ReluOp}

# gate order within W, R and B, per operator (ONNX's): the letters name the gates below
GATES = {"LSTM": "iofc", "GRU": "zrh", "RNN": "i"}


class _Cell:
    """Emission helpers for one direction of one layer: all values [rows, H] in one dtype."""

    def __init__(self, im: _Importer, dtype: type, name: str):
        self.im, self.dtype, self.name = im, dtype, name

    def op(self, cls: type, *args: SSAValue) -> SSAValue:
        a = args[0]
        return self.im.emit(cls(*args, a.type) if len(args) == 2 else cls(a))

    def matmul(self, a: SSAValue, w: np.ndarray, what: str) -> SSAValue:
        """a @ w for a constant w [K, N]."""
        p = self.im.param(np.ascontiguousarray(w).astype(self.dtype), self.dtype, w.shape, f"{self.name}.{what}")
        rows = a.type.get_shape()[0]
        return self.im.emit(g.MatmulOp(a, p, _tt((rows, w.shape[1]), self.dtype)))

    def row(self, v: np.ndarray, what: str) -> SSAValue:
        return self.im.param(np.asarray(v).astype(self.dtype), self.dtype, v.shape, f"{self.name}.{what}")

    def add_row(self, a: SSAValue, v: np.ndarray, what: str) -> SSAValue:
        return a if not np.any(v) else self.op(g.AddOp, a, self.row(v, what))


def _activations(im: _Importer, attrs: dict[str, object], count: int, directions: int) -> list[list[type]]:
    """The activation classes of each direction (ONNX's defaults: sigmoid then tanh)."""
    names = attrs.get("activations")
    if "activation_alpha" in attrs or "activation_beta" in attrs:
        raise im.fail("activations with alpha or beta parameters are not supported")
    default = ["Sigmoid", "Tanh", "Tanh"][:count] if count > 1 else ["Tanh"]
    got = [n.decode() if isinstance(n, bytes) else str(n) for n in names] if names else default * directions  # type: ignore[union-attr]
    if len(got) != count * directions:
        raise im.fail(f"{len(got)} activations for {directions} direction(s) of {count}")
    bad = [n for n in got if n not in ACTIVATIONS]
    if bad:
        raise im.fail(f"activation {bad[0]} is not supported (supported: {', '.join(ACTIVATIONS)})")
    return [[ACTIVATIONS[n] for n in got[d * count : (d + 1) * count]] for d in range(directions)]


def _state(im: _Importer, node: onnx.NodeProto, i: int, d: int, batch: int, hidden: int, dtype: type, layout: int):
    """Direction d's initial state [B, H] from input i (zeros when absent)."""
    if len(node.input) <= i or not node.input[i]:
        return im.param(np.array(0.0), dtype, (batch, hidden), f"{node.output[0] or node.name}.zero_state")
    v = im.get(node.input[i])
    if isinstance(v, np.ndarray):
        s = v if layout == 0 else np.swapaxes(v, 0, 1)
        return im.param(np.ascontiguousarray(s[d]).astype(dtype), dtype, (batch, hidden), f"{node.input[i]}.{d}")
    t = v if layout == 0 else transpose_value(im, v, [1, 0, 2], None)
    flat = im.raw_reshape(t.ssa, (t.shape[0] * batch, hidden), dtype)
    return im.emit(g.SliceOp(flat, (d * batch, 0), _tt((batch, hidden), dtype)))


@lowering("LSTM", "GRU", "RNN", since=7)
def _recurrent(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    op = node.op_type
    allowed = ["activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout"]
    allowed += {"LSTM": ["input_forget"], "GRU": ["linear_before_reset"], "RNN": []}[op]
    _no_attrs(im, attrs, allowed)
    if "clip" in attrs:
        raise im.fail("cell clipping is not supported")
    if int(attrs.get("input_forget", 0)):  # type: ignore[call-overload]
        raise im.fail("input_forget (coupled input and forget gates) is not supported")
    x = _val_input(im, node)
    if np.dtype(x.dtype).kind != "f" or len(x.shape) != 3:
        raise im.fail(f"input of {np.dtype(x.dtype)} {list(x.shape)}: a float [T, B, I] (or [B, T, I]) expected")
    layout = int(attrs.get("layout", 0))  # type: ignore[call-overload]
    xt = x if layout == 0 else transpose_value(im, x, [1, 0, 2], None)
    steps, batch, inp = xt.shape
    if steps > MAX_STEPS:
        raise im.fail(f"{steps} time steps: at most {MAX_STEPS} are unrolled")
    w = im.const(node.input[1], f"{op}'s W").astype(np.float64)
    r = im.const(node.input[2], f"{op}'s R").astype(np.float64)
    gates = GATES[op]
    ng = len(gates)
    directions = w.shape[0]
    hidden = int(attrs.get("hidden_size", r.shape[-1]))  # type: ignore[call-overload]
    if w.shape != (directions, ng * hidden, inp) or r.shape != (directions, ng * hidden, hidden):
        raise im.fail(f"W {list(w.shape)} and R {list(r.shape)} do not match {ng} gates of {hidden} over {inp} inputs")
    direction = attrs.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else str(direction)
    if (direction == "bidirectional") != (directions == 2) or direction not in ("forward", "reverse", "bidirectional"):
        raise im.fail(f"direction {direction!r} with {directions} direction(s) of weights")
    b = np.zeros((directions, 2 * ng * hidden))
    if len(node.input) > 3 and node.input[3]:
        b = im.const(node.input[3], f"{op}'s B").astype(np.float64)
    if len(node.input) > 4 and node.input[4]:
        lens = im.get(node.input[4])
        if not isinstance(lens, np.ndarray) or not np.all(lens == steps):
            raise im.fail("sequence_lens shorter than the sequence (padded batches) is not supported")
    peep = None
    if op == "LSTM" and len(node.input) > 7 and node.input[7]:
        peep = im.const(node.input[7], "LSTM's peepholes P").astype(np.float64).reshape(directions, 3, hidden)
    acts = _activations(im, attrs, {"LSTM": 3, "GRU": 2, "RNN": 1}[op], directions)
    dt = x.dtype
    xs = im.raw_reshape(xt.ssa, (steps * batch, inp), dt)
    lbr = int(attrs.get("linear_before_reset", 0))  # type: ignore[call-overload]
    outs_h: list[list[SSAValue]] = []
    last_h, last_c = [], []
    for d in range(directions):
        cell = _Cell(im, dt, f"{node.output[0] or node.name}.d{d}")
        f_act, g_act = acts[d][0], acts[d][1] if len(acts[d]) > 1 else acts[d][0]
        h_act = acts[d][2] if len(acts[d]) > 2 else g_act
        wk = {k: w[d, i * hidden : (i + 1) * hidden].T for i, k in enumerate(gates)}  # [I, H]
        rk = {k: r[d, i * hidden : (i + 1) * hidden].T for i, k in enumerate(gates)}  # [H, H]
        wb = {k: b[d, i * hidden : (i + 1) * hidden] for i, k in enumerate(gates)}
        rb = {k: b[d, (ng + i) * hidden : (ng + i + 1) * hidden] for i, k in enumerate(gates)}
        # the input projections of every step, hoisted: [T B, H] per gate (with both biases, except
        # GRU's recurrent h bias under linear_before_reset, which the reset gate scales)
        xg = {}
        for k in gates:
            bias = wb[k] + (rb[k] if not (op == "GRU" and k == "h") else 0)
            xg[k] = cell.add_row(cell.matmul(xs, wk[k], f"w{k}"), bias, f"b{k}")
        h = _state(im, node, 5, d, batch, hidden, dt, layout)
        c = _state(im, node, 6, d, batch, hidden, dt, layout) if op == "LSTM" else None
        backward = direction == "reverse" or (direction == "bidirectional" and d == 1)
        order = range(steps - 1, -1, -1) if backward else range(steps)
        hs: list[SSAValue | None] = [None] * steps
        for t in order:
            xt_k = {k: im.emit(g.SliceOp(xg[k], (t * batch, 0), _tt((batch, hidden), dt))) for k in gates}

            def pre(k: str, state: SSAValue, cell: _Cell = cell, xt_k: dict = xt_k, rk: dict = rk) -> SSAValue:
                return cell.op(g.AddOp, xt_k[k], cell.matmul(state, rk[k], f"r{k}"))

            def act(cls: type, v: SSAValue, cell: _Cell = cell) -> SSAValue:
                return cell.op(cls, v)

            if op == "RNN":
                h = act(f_act, pre("i", h))
            elif op == "GRU":
                z = act(f_act, pre("z", h))
                rg = act(f_act, pre("r", h))
                if lbr:
                    rec = cell.add_row(cell.matmul(h, rk["h"], "rh"), rb["h"], "rbh")
                    cand = act(g_act, cell.op(g.AddOp, xt_k["h"], cell.op(g.MulOp, rg, rec)))
                else:
                    rec = cell.add_row(cell.matmul(cell.op(g.MulOp, rg, h), rk["h"], "rh"), rb["h"], "rbh")
                    cand = act(g_act, cell.op(g.AddOp, xt_k["h"], rec))
                # h' = (1 - z) cand + z h = cand + z (h - cand)
                h = cell.op(g.AddOp, cand, cell.op(g.MulOp, z, cell.op(g.SubOp, h, cand)))
            else:
                assert c is not None
                pi, pf, pc, po = (pre(k, h) for k in "ifco")
                if peep is not None:
                    pi = cell.op(g.AddOp, pi, cell.op(g.MulOp, c, cell.row(peep[d, 0], "pi")))
                    pf = cell.op(g.AddOp, pf, cell.op(g.MulOp, c, cell.row(peep[d, 2], "pf")))
                c = cell.op(
                    g.AddOp, cell.op(g.MulOp, act(f_act, pf), c), cell.op(g.MulOp, act(f_act, pi), act(g_act, pc))
                )
                if peep is not None:
                    po = cell.op(g.AddOp, po, cell.op(g.MulOp, c, cell.row(peep[d, 1], "po")))
                h = cell.op(g.MulOp, act(f_act, po), act(h_act, c))
            hs[t] = h
        outs_h.append([v for v in hs if v is not None])
        last_h.append(h)
        last_c.append(c)
    _outputs(im, node, outs_h, last_h, last_c, steps, batch, hidden, directions, layout, dt)


def _outputs(
    im: _Importer,
    node: onnx.NodeProto,
    outs_h: list[list[SSAValue]],
    last_h: list[SSAValue],
    last_c: list[SSAValue | None],
    steps: int,
    batch: int,
    hidden: int,
    directions: int,
    layout: int,
    dt: type,
) -> None:
    """Y [T, D, B, H] (layout 1: [B, T, D, H]), Y_h and Y_c [D, B, H] (layout 1: [B, D, H])."""

    def stack(parts: list[SSAValue]) -> SSAValue:
        return parts[0] if len(parts) == 1 else im.emit(g.ConcatOp(parts, 0, _tt((len(parts) * batch, hidden), dt)))

    def emit(name: str, flat: SSAValue, shape: tuple[int, ...], perm: list[int] | None) -> None:
        v = Val(im.raw_reshape(flat, collapsed(shape), dt), shape, dt)
        if perm is not None and layout == 1:
            v = transpose_value(im, v, perm, None)
        im.vals[name] = Val(im.raw_reshape(v.ssa, collapsed(v.shape), dt, name), v.shape, dt)

    if node.output and node.output[0]:  # per step, the directions' states in turn
        # a reverse direction's states were produced last step first: outs_h lists them in time order
        y = stack([outs_h[d][t] for t in range(steps) for d in range(directions)])
        emit(node.output[0], y, (steps, directions, batch, hidden), [2, 0, 1, 3])
    if len(node.output) > 1 and node.output[1]:
        emit(node.output[1], stack(last_h), (directions, batch, hidden), [1, 0, 2])
    if len(node.output) > 2 and node.output[2]:
        if last_c[0] is None:
            raise im.fail("output Y_c of a cell without one")
        emit(node.output[2], stack([c for c in last_c if c is not None]), (directions, batch, hidden), [1, 0, 2])
