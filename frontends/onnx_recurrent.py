"""Recurrent layers from ONNX: LSTM, GRU and RNN (forward, reverse and bidirectional, batch-first
layout, initial states, LSTM peepholes, GRU's linear_before_reset).

Each direction of a layer is one `graph.repeat` over its time steps: the input projections of
every step are one matmul per gate hoisted out of the loop ([T B, I] x [I, H]) and stacked
[T, B, H]; each trip takes its slice (`graph.iteration_slice`), adds the recurrent projection of
the carried hidden state (a [B, H] x [H, H] matmul per gate), applies the gate nonlinearities and
stores its state into a carried [T, B, H] stack for Y (`graph.iteration_store`). A reverse
direction runs on the projections in reverse step order and reverses its Y (exact one-hot
products). The IR is one cell's size whatever the sequence length. This is PopLibs' own LSTM
program: `Repeat(steps, {dynamicSlice x_t; cell; dynamicUpdate y_t})`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.ir import Block, Region, SSAValue

from ipu.dialects import graph as g
from ipu.frontends.onnx_import import (
    _Importer,
    _no_attrs,
    _val_input,
    lowering,
    pick_rows,
)
from ipu.frontends.value_builder import (
    Val,
    _tt,
    collapsed,
    transpose_value,
)

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
    want_y = bool(node.output and node.output[0])
    ys: list[SSAValue] = []  # per direction [T, B H], in time order
    last_h, last_c = [], []
    for d in range(directions):
        cell = _Cell(im, dt, f"{node.output[0] or node.name}.d{d}")
        f_act, g_act = acts[d][0], acts[d][1] if len(acts[d]) > 1 else acts[d][0]
        h_act = acts[d][2] if len(acts[d]) > 2 else g_act
        wk = {k: w[d, i * hidden : (i + 1) * hidden].T for i, k in enumerate(gates)}  # [I, H]
        rk = {k: r[d, i * hidden : (i + 1) * hidden].T for i, k in enumerate(gates)}  # [H, H]
        wb = {k: b[d, i * hidden : (i + 1) * hidden] for i, k in enumerate(gates)}
        rb = {k: b[d, (ng + i) * hidden : (ng + i + 1) * hidden] for i, k in enumerate(gates)}
        # a reverse direction of one step is its forward one
        backward = steps > 1 and (direction == "reverse" or (direction == "bidirectional" and d == 1))
        # the input projections of every step, hoisted: [T B, H] per gate (with both biases, except
        # GRU's recurrent h bias under linear_before_reset, which the reset gate scales)
        xg = {}
        for k in gates:
            bias = wb[k] + (rb[k] if not (op == "GRU" and k == "h") else 0)
            xg[k] = cell.add_row(cell.matmul(xs, wk[k], f"w{k}"), bias, f"b{k}")
            if backward:  # trip i reads step T-1-i
                xg[k] = _time_reversed(im, xg[k], steps, batch * hidden, dt)
        h = _state(im, node, 5, d, batch, hidden, dt, layout)
        c = _state(im, node, 6, d, batch, hidden, dt, layout) if op == "LSTM" else None
        spec = _Spec(op, (f_act, g_act, h_act), rk, rb, peep[d] if peep is not None else None, bool(lbr))
        h, c, y = _loop(im, cell, spec, xg, h, c, steps, batch, hidden, want_y)
        if y is not None:
            ys.append(_time_reversed(im, y, steps, batch * hidden, dt) if backward else y)
        last_h.append(h)
        last_c.append(c)
    _outputs(im, node, ys, last_h, last_c, steps, batch, hidden, directions, layout, dt)


@dataclass(frozen=True)
class _Spec:
    """One direction's cell: the operator, its activations (f, g, h), recurrent weights and
    biases per gate, LSTM peepholes [3, H] (i, o, f) and GRU's linear_before_reset."""

    op: str
    acts: tuple[type, type, type]
    rk: dict[str, np.ndarray]
    rb: dict[str, np.ndarray]
    peep: np.ndarray | None
    lbr: bool


def _step(
    cell: _Cell, s: _Spec, xt: dict[str, SSAValue], h: SSAValue, c: SSAValue | None
) -> tuple[SSAValue, SSAValue | None]:
    """One time step from this step's input projections `xt` (per gate [B, H]) and the state."""
    f_act, g_act, h_act = s.acts

    def pre(k: str, state: SSAValue) -> SSAValue:
        return cell.op(g.AddOp, xt[k], cell.matmul(state, s.rk[k], f"r{k}"))

    if s.op == "RNN":
        return cell.op(f_act, pre("i", h)), None
    if s.op == "GRU":
        z = cell.op(f_act, pre("z", h))
        rg = cell.op(f_act, pre("r", h))
        if s.lbr:
            rec = cell.add_row(cell.matmul(h, s.rk["h"], "rh"), s.rb["h"], "rbh")
            cand = cell.op(g_act, cell.op(g.AddOp, xt["h"], cell.op(g.MulOp, rg, rec)))
        else:
            rec = cell.add_row(cell.matmul(cell.op(g.MulOp, rg, h), s.rk["h"], "rh"), s.rb["h"], "rbh")
            cand = cell.op(g_act, cell.op(g.AddOp, xt["h"], rec))
        # h' = (1 - z) cand + z h = cand + z (h - cand)
        return cell.op(g.AddOp, cand, cell.op(g.MulOp, z, cell.op(g.SubOp, h, cand))), None
    assert c is not None
    pi, pf, pc, po = (pre(k, h) for k in "ifco")
    if s.peep is not None:
        pi = cell.op(g.AddOp, pi, cell.op(g.MulOp, c, cell.row(s.peep[0], "pi")))
        pf = cell.op(g.AddOp, pf, cell.op(g.MulOp, c, cell.row(s.peep[2], "pf")))
    kept = cell.op(g.MulOp, cell.op(f_act, pf), c)
    c = cell.op(g.AddOp, kept, cell.op(g.MulOp, cell.op(f_act, pi), cell.op(g_act, pc)))
    if s.peep is not None:
        po = cell.op(g.AddOp, po, cell.op(g.MulOp, c, cell.row(s.peep[1], "po")))
    return cell.op(g.MulOp, cell.op(f_act, po), cell.op(h_act, c)), c


def _loop(
    im: _Importer,
    cell: _Cell,
    s: _Spec,
    xg: dict[str, SSAValue],
    h: SSAValue,
    c: SSAValue | None,
    steps: int,
    batch: int,
    hidden: int,
    want_y: bool,
) -> tuple[SSAValue, SSAValue | None, SSAValue | None]:
    """The steps as one `graph.repeat` of `steps` trips: each trip slices its input projections
    out of the stacked [T, B, H] (`graph.iteration_slice`), runs the cell and, when Y is wanted,
    stores its state into a carried [T, B, H] (`graph.iteration_store`). The last h and c, and
    Y as [T, B H]. A single step is emitted as it is."""
    dt = cell.dtype
    one = _tt((batch, hidden), dt)
    if steps == 1:
        h, c = _step(cell, s, xg, h, c)
        return h, c, im.raw_reshape(h, (1, batch * hidden), dt) if want_y else None
    stacked = {k: im.raw_reshape(v, (steps, batch, hidden), dt) for k, v in xg.items()}
    inits = [h, *([c] if c is not None else [])]
    if want_y:  # the stack the trips fill: a splat of zeros, as a zero state is
        inits.append(im.param(np.array(0.0), dt, (steps, batch, hidden), f"{cell.name}.y0"))
    body = Block(arg_types=[v.type for v in inits])
    args = list(body.args)
    saved = im.block, im.param_of, im.views
    im.block, im.param_of, im.views = body, {}, {}  # nothing made in the body is shared with what follows
    try:
        # added, not emitted: these verify against their repeat, which exists once the body does
        xt = {k: body.add_op(sl := g.IterationSliceOp(v, one)) or sl.result for k, v in stacked.items()}
        h2, c2 = _step(cell, s, xt, args[0], args[1] if c is not None else None)
        outs = [h2, *([c2] if c2 is not None else [])]
        if want_y:
            store = g.IterationStoreOp(args[-1], h2)
            body.add_op(store)
            outs.append(store.result)
        body.add_op(g.YieldOp.create(operands=outs))
    finally:
        im.block, im.param_of, im.views = saved
    rep = g.RepeatOp(steps, inits, Region(body))
    im.emit(rep, f"{cell.name}.steps")
    res = list(rep.results)
    y = im.raw_reshape(res[-1], (steps, batch * hidden), dt) if want_y else None
    return res[0], res[1] if c is not None else None, y


def _time_reversed(im: _Importer, v: SSAValue, steps: int, width: int, dt: type) -> SSAValue:
    """`v` [T B, H] (or [T, B H]) with its steps in reverse order, as [T, B H]: an exact one-hot
    [T, T] product (`pick_rows`)."""
    flat = Val(im.raw_reshape(v, (steps, width), dt), (steps, width), dt)
    return pick_rows(im, flat, np.arange(steps)[::-1].copy(), 0, f"{im.node_label}_reverse", None).ssa


def _outputs(
    im: _Importer,
    node: onnx.NodeProto,
    ys: list[SSAValue],
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

    def stack(parts: list[SSAValue], axis: int = 0) -> SSAValue:
        if len(parts) == 1:
            return parts[0]
        rows, cols = parts[0].type.get_shape()
        shape = (len(parts) * rows, cols) if axis == 0 else (rows, len(parts) * cols)
        return im.emit(g.ConcatOp(parts, axis, _tt(shape, dt)))

    def emit(name: str, flat: SSAValue, shape: tuple[int, ...], perm: list[int] | None) -> None:
        v = Val(im.raw_reshape(flat, collapsed(shape), dt), shape, dt)
        if perm is not None and layout == 1:
            v = transpose_value(im, v, perm, None)
        im.vals[name] = Val(im.raw_reshape(v.ssa, collapsed(v.shape), dt, name), v.shape, dt)

    if ys:  # per step, the directions' states side by side: [T, D B H]
        emit(node.output[0], stack(ys, axis=1), (steps, directions, batch, hidden), [2, 0, 1, 3])
    if len(node.output) > 1 and node.output[1]:
        emit(node.output[1], stack(last_h), (directions, batch, hidden), [1, 0, 2])
    if len(node.output) > 2 and node.output[2]:
        if last_c[0] is None:
            raise im.fail("output Y_c of a cell without one")
        emit(node.output[2], stack([c for c in last_c if c is not None]), (directions, batch, hidden), [1, 0, 2])
