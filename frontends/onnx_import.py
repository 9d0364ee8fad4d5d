"""ONNX -> `graph` import: a `ModelProto` becomes a module with one graph-level `func.func @main`.

Static shapes only. Every tensor of rank >= 3 is carried as its 2-D row collapse
`[prod(leading), last]` (what the backend plans); inputs and outputs keep their ONNX shapes and
names (`ipu.inputs` / `ipu.outputs`). Initializers become `graph.parameter`s carrying their
values; nodes whose inputs are all known (constants, `Shape` of a static tensor, ...) are folded
at import time. Each emitted op carries `onnx.node = "<node name>:<op type>"`, and its result is
named after the node's output. Anything the `graph` dialect (or the backend) cannot express
raises `OnnxImportError` naming the node: never a silently different computation. Erf-based
GeLU becomes the exact `graph.gelu {approximate = "none"}`, tanh-based GeLU the default form.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ipu.dialects import graph as g
from ipu.frontends.onnx_fold import evaluate_node
from ipu.frontends.onnx_functions import MAX_DEPTH, expand, function_body, tensor_type
from ipu.frontends.onnx_load import (
    OnnxImportError,
    Payloads,
    initializer_array,
    inline_external_data,
    load_onnx,
    read_onnx,
    shape_skeleton,
    skeleton_initializers,
    validate_model,
)
from ipu.frontends.value_builder import (
    NARROW_INTS,
    WIDE_INTS,
    Val,
    ValueBuilder,
    _emit1,
    _emit2,
    _hint,
    _matmul_core,
    _reduce_rows,
    _transpose2d,
    _tt,
    cast_value,
    collapsed,
    fits_i32,
    is_int,
    transpose_value,
    value_shape,
)
from ipu.log import log_event
from ipu.transforms.graph.raise_attention import mask_kind
from ipu.transforms.graph.raise_graph_ops import RaiseGraphOpsPass

MIN_OPSET = 7
"""Oldest default-domain opset accepted (older models predate today's broadcasting rules)."""

FLOAT_TYPES = {onnx.TensorProto.FLOAT: (np.float32, f32), onnx.TensorProto.FLOAT16: (np.float16, f16)}
# DOUBLE is computed in float32 on the device (it has no f64): a DOUBLE input is narrowed by the
# host (each value checked to fit), a DOUBLE output is read back as float32; the function lists
# those streams (`ipu.narrowed`) and the import logs a warning naming them
NARROWED_TYPES = {onnx.TensorProto.DOUBLE: (np.float32, f32)}
# integer and bool inputs and outputs: carried as i32 on the device (bool as an i32 word 0/1);
# the host narrows int64, uint32 and uint64 inputs to int32 when it loads them, each value checked
INT_TYPES = {
    onnx.TensorProto.INT8: np.int8,
    onnx.TensorProto.INT16: np.int16,
    onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.UINT8: np.uint8,
    onnx.TensorProto.UINT16: np.uint16,
    onnx.TensorProto.UINT32: np.uint32,
    onnx.TensorProto.UINT64: np.uint64,
    onnx.TensorProto.BOOL: np.bool_,
}


# ops folded at import time when every input is known; never folded: randomness
_NO_FOLD = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli", "Multinomial"}


def opset_of(model: onnx.ModelProto) -> int:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    raise OnnxImportError("model imports no default-domain (ai.onnx) opset")


def _attrs(node: onnx.NodeProto) -> dict[str, object]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


class _Importer(ValueBuilder):
    """The ONNX frontend: reads the model's nodes and lowers each through the value-level
    builder (`ValueBuilder`), by name (`vals`, `consts`)."""

    def __init__(self, model: onnx.ModelProto, constants: dict[str, np.ndarray], payloads: Payloads):
        super().__init__()
        self.opset = opset_of(model)
        if self.opset < MIN_OPSET:
            raise OnnxImportError(f"opset {self.opset} is older than the oldest supported ({MIN_OPSET})")
        if self.opset > onnx.defs.onnx_opset_version():
            raise OnnxImportError(
                f"opset {self.opset} is newer than this onnx package knows ({onnx.defs.onnx_opset_version()})"
            )
        inferred: list[onnx.ValueInfoProto] = []
        try:  # on the weights' types and shapes only (`shape_skeleton`): the values are not read
            inferred = list(onnx.shape_inference.infer_shapes(shape_skeleton(model), data_prop=True).graph.value_info)
        except Exception:  # noqa: BLE001 -- inference is a convenience; nodes still check their own shapes
            pass
        self.model = model
        self.graph = model.graph
        self.producer: dict[str, onnx.NodeProto] = {}  # by output name, set in run()
        self.consts = {i.name: initializer_array(i, payloads) for i in self.graph.initializer}
        self.initializers = set(self.consts)
        self.consts.update({k: np.asarray(v) for k, v in constants.items()})
        self.vals: dict[str, Val] = {}
        self.static_shapes: dict[str, tuple[int, ...]] = {}
        for vi in [*self.graph.input, *self.graph.value_info, *inferred, *self.graph.output]:
            s = _static_shape(vi)
            if s is not None:
                self.static_shapes[vi.name] = s
        # zero-size inputs and outputs: no bytes on the device, streamed by the host as empty arrays
        self.empty_inputs: dict[str, TensorType] = {}
        self.empty_outputs: dict[str, TensorType] = {}
        self.narrowed: dict[str, str] = {}  # DOUBLE inputs and outputs, computed in float32
        # checkpoint names come from result hints: keep them clear of the input and output names
        self.hints = {h for vi in [*self.graph.input, *self.graph.output] if (h := _hint(vi.name))}
        self.hints |= {vi.name for vi in [*self.graph.input, *self.graph.output]}
        self.node: onnx.NodeProto | None = None
        # onnx_cnn: batch norms folded into the convolution before them (the norm's output -> the convolution's)
        self.folded_norms: dict[str, str] = {}
        self.expansion_depth = 0  # function bodies being lowered (onnx_functions)

    # -- diagnostics ----------------------------------------------------------------------------

    def fail(self, msg: str) -> OnnxImportError:
        where = f"node '{self.node_label}' ({self.node.op_type})" if self.node is not None else "model"
        return OnnxImportError(f"onnx import: {where}: {msg}")

    def provenance(self) -> str | None:
        return f"{self.node_label}:{self.node.op_type}" if self.node is not None else None

    # -- values ---------------------------------------------------------------------------------

    def get(self, name: str) -> Val | np.ndarray:
        if name in self.consts:
            return self.consts[name]
        if name in self.vals:
            return self.vals[name]
        raise self.fail(f"value '{name}' is not available")

    def const(self, name: str, what: str) -> np.ndarray:
        if name not in self.consts:
            raise self.fail(f"{what} ('{name}') must be a constant (an initializer or a folded value)")
        return self.consts[name]

    # -- import ---------------------------------------------------------------------------------

    def run(self) -> ModuleOp:
        self.check_io()
        self.fold_constants()
        self.refine_shapes()
        self.producer = {o: n for n in self.graph.node for o in n.output if o}
        needed = self.needed_nodes()
        args = self.make_args()
        for i, node in enumerate(self.graph.node):
            if id(node) not in needed:
                continue
            self.node, self.node_label = node, node.name or f"{node.op_type}#{i}"
            self.lower(node)
        self.node = None
        return self.finish(args)

    def check_io(self) -> None:
        for vi in self.graph.input:
            if vi.name in self.initializers or vi.name in self.consts:
                continue
            shape, dt = self.io_type(vi, "input")
            if 0 in shape:  # no elements: a known (empty) value, whatever the host writes
                self.consts[vi.name] = np.zeros(shape, dt)
                self.empty_inputs[vi.name] = _tt(shape, dt)
        for vi in self.graph.output:
            self.io_type(vi, "output")
        for n in self.graph.node:
            if n.domain not in ("", "ai.onnx"):
                self.node, self.node_label = n, n.name or n.op_type
                raise self.fail(f"operator domain '{n.domain}' is not supported")
        self.node = None

    def io_type(self, vi: onnx.ValueInfoProto, kind: str) -> tuple[tuple[int, ...], type]:
        if not vi.type.HasField("tensor_type"):
            raise self.fail(f"{kind} '{vi.name}' is not a tensor")
        tt = vi.type.tensor_type
        if tt.elem_type not in FLOAT_TYPES and tt.elem_type not in INT_TYPES and tt.elem_type not in NARROWED_TYPES:
            name = onnx.TensorProto.DataType.Name(tt.elem_type)
            raise self.fail(
                f"{kind} '{vi.name}' has element type {name}; supported: FLOAT, FLOAT16, INT8/16/32/64, "
                "UINT8/16/32/64 and BOOL (DOUBLE is narrowed to FLOAT)"
            )
        shape = _static_shape(vi)
        if shape is None:
            raise self.fail(f"{kind} '{vi.name}' has a dynamic or unknown shape; only static shapes are supported")
        if tt.elem_type in NARROWED_TYPES:
            self.narrowed.setdefault(vi.name, onnx.TensorProto.DataType.Name(tt.elem_type))
            return shape, NARROWED_TYPES[tt.elem_type][0]
        if tt.elem_type in INT_TYPES:
            return shape, INT_TYPES[tt.elem_type]
        return shape, FLOAT_TYPES[tt.elem_type][0]

    @functools.cached_property
    def consumers(self) -> dict[str, list[onnx.NodeProto]]:
        """The nodes reading each value (of the graph as loaded: computed once)."""
        out: dict[str, list[onnx.NodeProto]] = {}
        for n in self.graph.node:
            for i in n.input:
                if i:
                    out.setdefault(i, []).append(n)
        return out

    def fold_constants(self) -> None:
        """Evaluate every node whose inputs are all known (or only its static shape is read)."""
        for i, node in enumerate(self.graph.node):
            if node.op_type in _NO_FOLD or node.domain not in ("", "ai.onnx"):
                continue
            self.node, self.node_label = node, node.name or f"{node.op_type}#{i}"
            if node.op_type in ("Shape", "Size") and node.input[0] in self.static_shapes:
                shape = np.array(self.static_shapes[node.input[0]], dtype=np.int64)
                a = _attrs(node)
                if node.op_type == "Size":
                    self.consts[node.output[0]] = np.array(shape.prod(), dtype=np.int64)
                else:
                    self.consts[node.output[0]] = shape[a.get("start", 0) : a.get("end", len(shape))]
                continue
            self.fold(node)
        self.node = None

    def fold(self, node: onnx.NodeProto) -> bool:
        """Evaluate `node` when all its inputs are known constants (and it has no subgraph), by
        onnxruntime where installed (`onnx_fold.evaluate_node`)."""
        if any(x and x not in self.consts for x in node.input) or any(
            a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute
        ):
            return False
        try:
            outs = evaluate_node(node, {x: self.consts[x] for x in node.input if x}, self.opset)
        except Exception as e:  # noqa: BLE001
            raise self.fail(f"cannot fold constant node: {type(e).__name__}: {e}") from None
        for name, v in zip(node.output, outs, strict=False):
            if name:
                self.consts[name] = np.asarray(v)
        return True

    def refine_shapes(self) -> None:
        """Infer shapes once more with the folded values known: exporters compute shapes (of
        `Expand`, `Reshape`, masks) at run time, which the first inference leaves dynamic."""
        folded = {o for n in self.graph.node for o in n.output if o in self.consts}
        if not folded:
            return
        inputs = [vi for vi in self.graph.input if vi.name not in self.consts]
        # the weights as inputs of their shapes: copying them into the model to infer shapes took
        # most of the pass (GPT-2 small: 500 MB, twice)
        weights, shapes = skeleton_initializers([t for t in self.graph.initializer if t.name not in folded], inputs)
        g = onnx.helper.make_graph(
            [n for n in self.graph.node if not all(o in self.consts for o in n.output if o)],
            "refine",
            inputs + shapes,
            list(self.graph.output),
            [
                numpy_helper.from_array(v, k)
                for k, v in self.consts.items()
                if (k in folded or k not in self.initializers) and v.size <= 1 << 16
            ]
            + weights,
        )
        m = onnx.helper.make_model(g, opset_imports=self.model.opset_import, ir_version=self.model.ir_version)
        m.functions.extend(self.model.functions)
        try:
            m = onnx.shape_inference.infer_shapes(shape_skeleton(m, folded), data_prop=True)
        except Exception:  # noqa: BLE001 -- a convenience, as the first inference
            return
        for vi in m.graph.value_info:
            s = _static_shape(vi)
            if s is not None:
                self.static_shapes.setdefault(vi.name, s)
        for k, v in self.consts.items():
            self.static_shapes.setdefault(k, tuple(v.shape))

    def needed_nodes(self) -> set[int]:
        """Nodes some output depends on."""
        needed: set[int] = set()
        stack = [o.name for o in self.graph.output]
        seen: set[str] = set()
        while stack:
            name = stack.pop()
            if name in seen or name in self.consts:
                continue
            seen.add(name)
            n = self.producer.get(name)
            if n is None:
                continue
            needed.add(id(n))
            stack.extend(i for i in n.input if i)
        return needed

    def make_args(self) -> list[tuple[str, SSAValue]]:
        args = []
        for vi in self.graph.input:
            if vi.name in self.consts:
                continue
            shape, dt = self.io_type(vi, "input")
            a, v = self.argument(vi.name, shape, dt)
            args.append((vi.name, a))
            self.vals[vi.name] = v
        return args

    def finish(self, args: list[tuple[str, SSAValue]]) -> ModuleOp:
        outs = []
        for vi in self.graph.output:
            shape, dt = self.io_type(vi, "output")
            if 0 in shape:  # no elements, whatever computes it: the host reads an empty array
                self.empty_outputs[vi.name] = _tt(shape, dt)
                continue
            x = self.consts.get(vi.name)
            if x is not None:
                outs.append((vi.name, self.constant_output(vi.name, x, shape, dt)))
                continue
            v = self.vals.get(vi.name)
            if v is None:
                raise self.fail(f"output '{vi.name}' is not computed by any node")
            outs.append((vi.name, self.output(v, shape, dt, vi.name)))
        f = self.function(args, outs)
        for key, streams in (("ipu.empty_inputs", self.empty_inputs), ("ipu.empty_outputs", self.empty_outputs)):
            if streams:
                f.attributes[key] = DictionaryAttr(dict(streams))
        if self.narrowed:
            f.attributes["ipu.narrowed"] = DictionaryAttr({k: StringAttr(v) for k, v in self.narrowed.items()})
            log_event(
                "onnx import: DOUBLE inputs and outputs are computed in float32 (narrowed by the host)",
                logging.WARNING,
                streams=",".join(self.narrowed),
            )
        f.attributes["onnx.opset"] = IntegerAttr(self.opset, 64)
        # (a DOUBLE output is widened back from float32; an empty output is listed too: the host
        # returns it empty at its own type)
        ins = [np.dtype(self.vals[n].dtype) for n, _ in args]
        out_dtypes = {
            o.name: np.dtype(np.float64 if o.name in self.narrowed else self.io_type(o, "output")[1])
            for o in self.graph.output
        }
        self.record_dtypes(f, ins, out_dtypes)
        return ModuleOp([f])

    # -- nodes ------------------------------------------------------------------------------------

    def lower(self, node: onnx.NodeProto) -> None:
        if node.output[0] in self.consts:
            return  # folded
        if node.op_type not in _NO_FOLD and self.fold(node):
            return  # its inputs became constants while lowering (CastLike of a constant)
        outs = [(o, self.static_shapes.get(o)) for o in node.output if o]
        if outs and all(s is not None and 0 in s for _, s in outs):  # only empty results: known
            like = next((x for x in (self.vals.get(i) for i in node.input if i) if x is not None), None)
            for o, s in outs:
                self.consts[o] = np.zeros(s, like.dtype if like is not None else np.float32)
            return
        fn = _LOWERINGS.get(node.op_type)
        if fn is None:
            ins = [i for i in node.input if i]
            if ins and all(i in self.consts for i in ins):
                raise self.fail("constant node could not be folded")
            if self.expand_function(node):
                return
            raise self.fail(f"operator {node.op_type} is not supported by the graph dialect")
        since = _SINCE.get(node.op_type, 1)
        if self.opset < since:
            raise self.fail(f"{node.op_type} needs opset >= {since}; the model imports opset {self.opset}")
        extra = [o for o in node.output[1:] if o]
        try:
            fn(self, node, _attrs(node))
            for o in extra:
                if o not in self.vals and o not in self.consts:
                    raise self.fail(f"optional output '{o}' is not supported")
        except OnnxImportError:
            self.node = node
            if not self.expand_function(node):
                raise
            return
        for hook in AFTER_LOWERING:
            hook(self, node)

    def expand_function(self, node: onnx.NodeProto) -> bool:
        """Lower `node` as its schema's function body, node by node (`onnx_functions`); False,
        with nothing kept, when it has none or a body node is refused too."""
        if self.expansion_depth >= MAX_DEPTH:
            return False
        types = []
        for i in node.input:
            v = self.consts.get(i) if i else None
            if v is not None:
                types.append(tensor_type(v.dtype.type, v.shape))
            elif i in self.vals:
                types.append(tensor_type(self.vals[i].dtype, self.vals[i].shape))
            else:
                types.append(None if i else tensor_type(np.float32, ()))
        body = function_body(node, self.opset, types)
        nodes = expand(node, body, f"{node.output[0] or node.name}.fn.") if body is not None else None
        if not nodes:
            return False
        try:
            self.lower_nodes(nodes)
        except OnnxImportError:
            return False
        log_event("onnx import: lowered as its function body", logging.INFO, node=node.name or node.op_type)
        return True

    def lower_nodes(self, nodes: list[onnx.NodeProto], consts: dict[str, np.ndarray] | None = None) -> None:
        """Lower `nodes` in turn, one level deeper (a function body, or the primitive nodes a
        lowering spells an operator with), `consts` bound first; when one is refused, the
        importer's values are as before and the refusal propagates."""
        saved = (dict(self.vals), dict(self.consts), dict(self.channels_last), self.node, self.node_label)
        self.consts.update(consts or {})
        self.expansion_depth += 1
        try:
            for n in nodes:
                self.node, self.node_label = n, n.name
                self.lower(n)
        except OnnxImportError:
            self.vals, self.consts, self.channels_last = saved[0], saved[1], saved[2]
            raise
        finally:
            self.expansion_depth -= 1
            self.node, self.node_label = saved[3], saved[4]

    def out(self, node: onnx.NodeProto, v: Val) -> None:
        self.vals[node.output[0]] = v

    # helpers shared by the lowerings

    def binary(self, kind: str, a_name: str, b_name: str, hint: str | None) -> Val:
        return self.binary_values(kind, self.get(a_name), self.get(b_name), a_name, b_name, hint)


def _static_shape(vi: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    dims = vi.type.tensor_type.shape.dim
    if any(not d.HasField("dim_value") for d in dims):
        return None
    return tuple(int(d.dim_value) for d in dims)


# -- per-op lowerings ---------------------------------------------------------------------------

Lowering = Callable[[_Importer, onnx.NodeProto, dict[str, object]], None]
_LOWERINGS: dict[str, Lowering] = {}
AFTER_LOWERING: list[Callable[[_Importer, onnx.NodeProto], None]] = []
"""Hooks run after each node's lowering (`onnx_cnn` keeps channels-last twins of its results)."""

REDUCE_HOOKS: list[Callable[[_Importer, onnx.NodeProto, Val, list[int], bool], Val | None]] = []
"""Lowerings a reduction node tries first, each returning its result or None (`onnx_cnn`: a
spatial mean read from a channels-last twin)."""
_SINCE: dict[str, int] = {}


def lowering(*op_types: str, since: int = 1) -> Callable[[Lowering], Lowering]:
    """Register `fn` as the lowering of each ONNX op type; an op type has exactly one lowering
    (a second registration is a programming error, whichever module imports first)."""

    def reg(fn: Lowering) -> Lowering:
        for t in op_types:
            if t in _LOWERINGS:
                prev = _LOWERINGS[t]
                raise RuntimeError(
                    f"ONNX op {t} is lowered twice: {prev.__module__}.{prev.__qualname__} and "
                    f"{fn.__module__}.{fn.__qualname__}"
                )
            _LOWERINGS[t] = fn
            _SINCE[t] = since
        return fn

    return reg


def _val_input(im: _Importer, node: onnx.NodeProto, i: int = 0) -> Val:
    x = im.get(node.input[i])
    if not isinstance(x, Val):
        raise im.fail(f"input '{node.input[i]}' is a constant where a computed tensor was expected")
    return x


def float_input(im: _Importer, node: onnx.NodeProto, i: int = 0) -> Val:
    """Input `i` of `node`, computed and of a float type (for lowerings of float-only operators)."""
    x = _val_input(im, node, i)
    if np.dtype(x.dtype).kind != "f":
        raise im.fail(f"{node.op_type} of {np.dtype(x.dtype)} values; floats only")
    return x


def _no_attrs(im: _Importer, attrs: dict[str, object], allowed: Sequence[str] = ()) -> None:
    bad = sorted(set(attrs) - set(allowed))
    if bad:
        raise im.fail(f"attribute(s) {', '.join(bad)} not supported")


@lowering("Add", "Sub", "Mul", "Max", "Min", "Sum", "Mean")
def _elementwise(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs)
    kind = {"Add": "add", "Sub": "sub", "Mul": "mul", "Max": "max", "Min": "min", "Sum": "add", "Mean": "add"}[
        node.op_type
    ]
    ins = list(node.input)
    if len(ins) == 1:
        raise im.fail(f"a one-input {node.op_type} is an identity; not lowered")
    acc = im.get(ins[0])
    hint = node.output[0] if len(ins) == 2 and node.op_type != "Mean" else None
    for k, name in enumerate(ins[1:], 1):
        acc = im.binary_values(kind, acc, im.get(name), ins[0] if k == 1 else node.output[0], name, hint)
    assert isinstance(acc, Val)
    if node.op_type == "Mean":
        acc = im.scale(acc, 1.0 / len(ins), node.output[0])
    elif len(ins) > 2:
        acc.ssa.name_hint = _hint(node.output[0])
    im.out(node, acc)


@lowering("Div")
def _div(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """`graph.div`; by a constant whose reciprocals are exact (powers of two) a `graph.mul`, the
    same values at the vector rate; 1 / x is `graph.reciprocal`."""
    _no_attrs(im, attrs)
    a, b = im.get(node.input[0]), im.get(node.input[1])
    if not isinstance(a, Val) and not isinstance(b, Val):
        raise im.fail("constant node could not be folded")
    im.out(node, div_values(im, a, b, node.input[0], node.input[1], node.output[0]))


def div_values(im: ValueBuilder, a: Val | np.ndarray, b: Val | np.ndarray, a_name: str, b_name: str, hint) -> Val:
    """a / b (NumPy broadcasting): by a constant whose reciprocals are exact a `graph.mul`, 1 / x a
    `graph.reciprocal`, else a `graph.div`."""
    if isinstance(b, Val) and not isinstance(a, Val) and a.size == 1 and float(a.reshape(-1)[0]) == 1.0:
        if math.prod(a.shape) == 1 and len(a.shape) <= len(b.shape):  # broadcasts to b's shape
            return im.unary(g.ReciprocalOp, b, hint)
    if isinstance(b, np.ndarray):
        if not np.issubdtype(b.dtype, np.floating):
            raise im.fail(f"divisor has element type {b.dtype}")
        dt = a.dtype if isinstance(a, Val) else b.dtype
        mant = np.frexp(b.astype(np.float64))[0]
        recip = (np.float64(1.0) / b.astype(np.float64)).astype(dt)
        # 1/b is exact in the model's type: a normal power of two whose reciprocal is normal too
        if np.all(np.abs(mant) == 0.5) and np.all(np.isfinite(recip)) and np.all(recip != 0):
            if np.all(np.abs(recip) >= np.finfo(dt).tiny) and np.all(np.abs(b) >= np.finfo(dt).tiny):
                return im.binary_values("mul", a, recip, a_name, b_name, hint)
    return im.binary_values("div", a, b, a_name, b_name, hint)


# ONNX op type -> graph op, for the attribute-free elementwise unary ops whose ONNX name is the
# op's capitalised mnemonic (Relu -> graph.relu); Gelu has attributes and its own lowering below.
UNARY_OPS: dict[str, type[g.ElementwiseUnaryOp]] = {
    op.name.removeprefix("graph.").capitalize(): op
    for op in g.ELEMENTWISE_UNARY_OPS
    # Gelu has attributes; Swish and Reciprocal(Sqrt) below; the integer ops with the integer lowerings
    if op not in (g.GeluOp, g.SiluOp, g.RsqrtOp, g.WrapOp, g.BitwiseNotOp)
}


@lowering(*UNARY_OPS)
def _unary(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs)
    im.out(node, unary_value(im, UNARY_OPS[node.op_type], _val_input(im, node), node.output[0]))


def unary_value(im: ValueBuilder, cls: type[g.ElementwiseUnaryOp], x: Val, hint: str | None) -> Val:
    """`cls` of x; -x and |x| of integers checked (and wrapped) like the binary ops."""
    if is_int(x.dtype) and cls in (g.NegOp, g.AbsOp):  # -x and |x| leave the range at its minimum
        im.check_int_op(cls.name.removeprefix("graph."), x.dtype)
        if np.dtype(x.dtype) in NARROW_INTS:
            return im.wrap(im.unary(cls, x, None), hint)
    return im.unary(cls, x, hint)


@lowering("Gelu", since=20)
def _gelu(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("approximate",))
    approx = attrs.get("approximate", b"none")
    approx = approx.decode() if isinstance(approx, bytes) else approx
    if approx not in ("none", "tanh"):
        raise im.fail(f"approximate = '{approx}' is not supported")
    y = im.unary(g.GeluOp, _val_input(im, node), node.output[0])
    y.ssa.owner.attributes["approximate"] = StringAttr(approx)
    im.out(node, y)


@lowering("Swish", since=24)
def _swish(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """x * sigmoid(alpha x): `graph.silu` for alpha = 1, else the product of a sigmoid."""
    _no_attrs(im, attrs, ("alpha",))
    alpha = float(attrs.get("alpha", 1.0))  # type: ignore[arg-type]
    x = _val_input(im, node)
    if alpha == 1.0:
        im.out(node, im.unary(g.SiluOp, x, node.output[0]))
        return
    s = im.unary(g.SigmoidOp, im.scale(x, alpha, None), None)
    im.out(node, Val(im.emit(g.MulOp(x.ssa, s.ssa, x.ssa.type), node.output[0]), x.shape, x.dtype))


def _hard_sigmoid(im: _Importer, x: Val, alpha: float, beta: float, hint: str | None) -> Val:
    """max(0, min(1, alpha x + beta)): a product, a sum and the two clamps, each rounded as
    onnxruntime rounds them."""
    t = im.scale(x, alpha, None)
    t = Val(im.emit(g.AddOp(t.ssa, im.splat(beta, x, f"{im.node_label}_beta"), x.ssa.type)), x.shape, x.dtype)
    t = Val(im.emit(g.MinOp(t.ssa, im.splat(1.0, x, f"{im.node_label}_one"), x.ssa.type)), x.shape, x.dtype)
    return Val(im.emit(g.MaxOp(t.ssa, im.splat(0.0, x, f"{im.node_label}_zero"), x.ssa.type), hint), x.shape, x.dtype)


@lowering("HardSigmoid", "HardSwish")
def _hard(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """HardSigmoid(alpha = 0.2, beta = 0.5); HardSwish is x * HardSigmoid(x) with alpha = 1/6."""
    x = _val_input(im, node)
    if node.op_type == "HardSigmoid":
        _no_attrs(im, attrs, ("alpha", "beta"))
        alpha, beta = float(attrs.get("alpha", 0.2)), float(attrs.get("beta", 0.5))  # type: ignore[arg-type]
        im.out(node, _hard_sigmoid(im, x, alpha, beta, node.output[0]))
        return
    _no_attrs(im, attrs)
    h = _hard_sigmoid(im, x, 1.0 / 6.0, 0.5, None)
    im.out(node, Val(im.emit(g.MulOp(x.ssa, h.ssa, x.ssa.type), node.output[0]), x.shape, x.dtype))


def _bound(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object], i: int, key: str) -> float | Val | None:
    """A Clip bound: the attribute (opset < 11), the constant input `i`, or a computed scalar
    (a run-time input, broadcast like any operand); None when absent."""
    if im.opset < 11:
        v = attrs.get(key)
        return None if v is None else float(v)  # type: ignore[arg-type]
    if len(node.input) <= i or not node.input[i]:
        return None
    c = im.get(node.input[i])
    if isinstance(c, Val):
        if math.prod(c.shape) != 1:
            raise im.fail(f"the {key} bound must be a scalar")
        return c
    if c.size != 1:
        raise im.fail(f"the {key} bound must be a scalar")
    return float(c.reshape(-1)[0])


@lowering("Clip")
def _clip(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """min(max(x, lo), hi) (`graph.max`, then `graph.min`): a constant bound by a splat, a
    computed one broadcast."""
    _no_attrs(im, attrs, ("min", "max") if im.opset < 11 else ())
    x = _val_input(im, node)
    lo, hi = _bound(im, node, attrs, 1, "min"), _bound(im, node, attrs, 2, "max")
    if lo is None and hi is None:
        raise im.fail("a Clip without bounds is an identity; not lowered")
    y = x
    for kind, v in (("max", lo), ("min", hi)):
        if v is None:
            continue
        last = kind == "min" or hi is None
        if isinstance(v, Val):  # a computed bound: broadcast over x
            name = node.input[1 if kind == "max" else 2]
            y = im.binary_values(kind, y, v, node.input[0], name, node.output[0] if last else None)
            continue
        s = im.splat(v, x, f"{im.node_label}_{'lo' if kind == 'max' else 'hi'}")
        op = (g.MaxOp if kind == "max" else g.MinOp)(y.ssa, s, x.ssa.type)
        y = Val(im.emit(op, node.output[0] if last else None), x.shape, x.dtype)
    im.out(node, y)


@lowering("LeakyRelu")
def _leaky_relu(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("alpha",))
    alpha = float(attrs.get("alpha", 0.01))  # type: ignore[arg-type]
    if not 0.0 <= alpha <= 1.0:
        raise im.fail(f"alpha = {alpha} outside [0, 1] (max(x, alpha*x) would not hold)")
    x = _val_input(im, node)
    im.out(node, im.binary_values("max", x, im.scale(x, alpha, None), "", "", node.output[0]))


_POW_UNARY: dict[float, type[g.ElementwiseUnaryOp]] = {0.5: g.SqrtOp, -0.5: g.RsqrtOp, -1.0: g.ReciprocalOp}


@lowering("PRelu")
def _prelu(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """max(x, 0) + slope * min(x, 0): x where x > 0 (x + slope * 0 is x), slope * x elsewhere,
    as onnxruntime's x > 0 ? x : slope * x."""
    _no_attrs(im, attrs)
    x = _val_input(im, node)
    zero = im.splat(0.0, x, f"{im.node_label}_zero")
    pos = Val(im.emit(g.MaxOp(x.ssa, zero, x.ssa.type)), x.shape, x.dtype)
    neg = Val(im.emit(g.MinOp(x.ssa, zero, x.ssa.type)), x.shape, x.dtype)
    scaled = im.binary_values("mul", neg, im.get(node.input[1]), "", node.input[1], None)
    im.out(node, im.binary_values("add", pos, scaled, "", "", node.output[0]))


@lowering("Pow")
def _pow(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """A constant exponent: 2 and 3 as products, 0.5 as `graph.sqrt`, -0.5 as `graph.rsqrt`,
    -1 as `graph.reciprocal`; any other exponent (a computed one, or a constant of another
    value) is a `graph.pow`."""
    _no_attrs(im, attrs)
    x = _val_input(im, node)
    im.out(node, pow_values(im, x, im.get(node.input[1]), node.input[0], node.input[1], node.output[0]))


def pow_values(im: ValueBuilder, x: Val, e: Val | np.ndarray, x_name: str, e_name: str, hint: str | None) -> Val:
    """x ** e: a constant exponent 2 or 3 as products, 0.5, -0.5 and -1 as `graph.sqrt`,
    `graph.rsqrt`, `graph.reciprocal`, any other a `graph.pow`."""
    if isinstance(e, np.ndarray) and not np.issubdtype(e.dtype, np.floating):
        e = e.astype(x.dtype)  # an integer exponent (Pow's T1 may differ from T)
    p = float(e.reshape(-1)[0]) if isinstance(e, np.ndarray) and e.size == 1 else None
    if p in _POW_UNARY:
        return im.unary(_POW_UNARY[p], x, hint)
    if p not in (1.0, 2.0, 3.0):
        if isinstance(e, Val) and e.dtype != x.dtype:
            raise im.fail("base and exponent element types differ")
        return im.binary_values("pow", x, e, x_name, e_name, hint)
    n = int(p)
    acc = x
    for k in range(1, n):
        acc = Val(im.emit(g.MulOp(acc.ssa, x.ssa, x.ssa.type), hint if k == n - 1 else None), x.shape, x.dtype)
    return acc


@lowering("Identity", "Dropout")
def _identity(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    if node.op_type == "Dropout":
        _no_attrs(im, attrs, ("seed",))
        if len(node.input) > 2 and node.input[2]:
            mode = im.const(node.input[2], "training_mode")
            if bool(mode.reshape(-1)[0]):
                raise im.fail("training_mode = true is not supported")
    im.out(node, _val_input(im, node))


@lowering("Cast")
def _cast(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("to", "saturate", "round_mode"))
    to = int(attrs["to"])  # type: ignore[arg-type]
    if to not in FLOAT_TYPES and to not in INT_TYPES and to not in NARROWED_TYPES:
        raise im.fail(
            f"cast to {onnx.TensorProto.DataType.Name(to)}; supported: FLOAT, FLOAT16, INT8/16/32/64, UINT8/16/32/64 "
            "and BOOL (DOUBLE is narrowed to FLOAT)"
        )
    if to in NARROWED_TYPES:  # a cast to DOUBLE stays in float32, as DOUBLE tensors do
        dt = NARROWED_TYPES[to][0]
    else:
        dt = FLOAT_TYPES[to][0] if to in FLOAT_TYPES else INT_TYPES[to]
    im.out(node, cast_value(im, _val_input(im, node), dt, node.output[0]))


@lowering("CastLike", since=15)
def _cast_like(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("saturate", "round_mode"))
    like = im.get(node.input[1])
    dt = like.dtype if isinstance(like, Val) else np.dtype(like.dtype).type
    c = im.get(node.input[0])
    if isinstance(c, np.ndarray):  # a constant cast to a computed tensor's type: still a constant
        im.consts[node.output[0]] = c.astype(dt)
        return
    x = _val_input(im, node)
    if dt == np.float64:  # DOUBLE is computed in float32
        dt = np.float32
    if np.dtype(dt).kind not in "fiub":
        raise im.fail(f"cast to {np.dtype(dt)}; supported: float32, float16, the integer types and bool")
    im.out(node, cast_value(im, x, dt, node.output[0]))


def _matmul(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs)
    a, b = im.get(node.input[0]), im.get(node.input[1])
    im.out(node, matmul2_values(im, a, b, node.input[0], node.input[1], node.output[0]))


def matmul2_values(
    im: ValueBuilder, a: Val | np.ndarray, b: Val | np.ndarray, a_name: str, b_name: str, hint: str | None
) -> Val:
    """`a @ b` for a right operand of rank 1 or 2: one `graph.matmul` of a's rows."""
    if not isinstance(a, Val):
        if len(np.shape(a)) != 2:
            raise im.fail("a constant left operand must be rank 2")
        a = im.val(a, b, a_name)  # type: ignore[arg-type]
    sb = value_shape(b)
    if len(sb) not in (1, 2):
        raise im.fail(f"right operand of rank {len(sb)}: only rank-2 right operands (no batched MatMul) are supported")
    if a.shape[-1] != sb[0]:
        raise im.fail(f"contraction sizes differ ({a.shape[-1]} vs {sb[0]})")
    if len(sb) == 1:  # a vector: the column [K, 1], its unit axis dropped from the result
        col = im.reshape(b, (sb[0], 1)) if isinstance(b, Val) else im.val(np.reshape(b, (sb[0], 1)), a, b_name)
        r = _matmul_core(im, a, col.ssa, 1, None)
        return im.reshape(r, a.shape[:-1], hint)
    bv = im.val(b, a, b_name).ssa
    return _matmul_core(im, a, bv, sb[1], hint)


@lowering("Gemm")
def _gemm(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("alpha", "beta", "transA", "transB", "broadcast"))
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))  # type: ignore[arg-type]
    a, b = im.get(node.input[0]), im.get(node.input[1])
    like = a if isinstance(a, Val) else b
    if not isinstance(like, Val):
        raise im.fail("both operands are constants")
    if isinstance(a, np.ndarray):
        a = im.val(a.T if attrs.get("transA") else a, like, node.input[0])
    elif attrs.get("transA"):
        a = Val(_transpose2d(im, a.ssa, a.dtype), a.shape[::-1], a.dtype)
    if isinstance(b, np.ndarray):
        b = b.T if attrs.get("transB") else b
        if alpha != 1.0:
            b, alpha = (b.astype(np.float64) * alpha).astype(b.dtype), 1.0
        bv = im.val(b, like, node.input[1])
    elif attrs.get("transB"):
        bv = Val(_transpose2d(im, b.ssa, b.dtype), b.shape[::-1], b.dtype)
    else:
        bv = b
    if len(a.shape) != 2 or len(bv.shape) != 2 or a.shape[1] != bv.shape[0]:
        raise im.fail(f"operand shapes {list(a.shape)} and {list(bv.shape)} do not multiply")
    has_c = len(node.input) > 2 and node.input[2] and beta != 0.0
    y = _matmul_core(im, a, bv.ssa, bv.shape[1], None if has_c or alpha != 1.0 else node.output[0])
    if alpha != 1.0:
        y = im.scale(y, alpha, None if has_c else node.output[0])
    if has_c:
        c = im.get(node.input[2])
        if isinstance(c, np.ndarray):
            c = (c.astype(np.float64) * beta).astype(c.dtype)
        elif beta != 1.0:
            c = im.scale(c, beta, None)
        y = im.binary_values("add", y, c, "", node.input[2], node.output[0])
    im.out(node, y)


def _axes(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object], rank: int) -> list[int] | None:
    """Axes from the attribute or the (constant) second input; None when absent."""
    axes = attrs.get("axes")
    if axes is None and len(node.input) > 1 and node.input[1]:
        axes = im.const(node.input[1], "axes").reshape(-1).tolist()
    if axes is None:
        return None
    out = []
    for a in axes:  # type: ignore[union-attr]
        if not -rank <= int(a) < rank:
            raise im.fail(f"axis {a} out of range for rank {rank}")
        out.append(int(a) % rank)
    return sorted(set(out))


# ONNX reduction -> the graph.reduce kind it sums, maxes or averages with (the others are spelled
# with elementwise ops around it: -max(-x), sum(x * x), sqrt(sum(x * x)), sum(|x|), log(sum(x)),
# and log(sum(exp(x - max x))) + max x, as onnxruntime computes them)
_REDUCE_KIND = {
    "ReduceSum": "sum",
    "ReduceMean": "mean",
    "ReduceMax": "max",
    "ReduceMin": "max",
    "ReduceSumSquare": "sum",
    "ReduceL1": "sum",
    "ReduceL2": "sum",
    "ReduceLogSum": "sum",
    "ReduceLogSumExp": "sum",
    "ReduceProd": "prod",
}


@lowering(*_REDUCE_KIND)
def _reduce(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("axes", "keepdims", "noop_with_empty_axes"))
    x = _val_input(im, node)
    rank = len(x.shape)
    axes = _axes(im, node, attrs, rank)
    if not axes:
        if attrs.get("noop_with_empty_axes"):
            im.out(node, x)
            return
        axes = list(range(rank))
    keep = bool(attrs.get("keepdims", 1))
    for hook in REDUCE_HOOKS:
        y = hook(im, node, x, axes, keep)
        if y is not None:
            im.out(node, y)
            return
    im.out(node, reduce_value(im, node.op_type, x, axes, keep, node.output[0]))


def reduce_value(im: ValueBuilder, t: str, x: Val, axes: list[int], keep: bool, hint: str | None) -> Val:
    """The ONNX reduction `t` (ReduceSum, ReduceMax, ...) of x over sorted `axes` (kept as 1
    when `keep`): the axes brought last as the rows' columns, one `graph.reduce` of the rows,
    with the elementwise ops around it that the other reductions are spelled with."""
    rank = len(x.shape)
    out_shape = (
        tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        if keep
        else tuple(d for i, d in enumerate(x.shape) if i not in axes)
    )
    kind = _REDUCE_KIND[t]
    if axes == list(range(axes[0], rank)):  # trailing axes: collapse them into one row
        rows, cols = math.prod(x.shape[: axes[0]]), math.prod(x.shape[axes[0] :])
        flat = im.raw_reshape(x.ssa, (rows, cols), x.dtype)
    elif axes == list(range(len(axes))):  # leading axes: the transpose of their collapse
        rows, cols = math.prod(x.shape[: len(axes)]), math.prod(x.shape[len(axes) :])
        flat = _transpose2d(im, im.raw_reshape(x.ssa, (rows, cols), x.dtype), x.dtype)
    else:  # any other axes: a transpose brings them last (kept axes in order), then trailing rows
        kept = [a for a in range(rank) if a not in axes]
        moved = transpose_value(im, x, [*kept, *axes], None)
        rows, cols = math.prod(x.shape[a] for a in kept), math.prod(x.shape[a] for a in axes)
        flat = im.raw_reshape(moved.ssa, (rows, cols), x.dtype)
    if t in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceProd"):
        r = _reduce_rows(im, flat, kind, x.dtype, collapsed(out_shape), hint)
        return Val(r, out_shape, x.dtype)
    col = (flat.type.get_shape()[0], 1)  # one value per row, broadcast back over the row where needed
    # the last op is named after the node's output when no reshape follows it
    last_hint, hint = hint, hint if collapsed(out_shape) == col else None
    m = None
    if t == "ReduceMin":
        flat = _emit1(im, g.NegOp, flat)
    elif t in ("ReduceSumSquare", "ReduceL2"):
        flat = _emit2(im, g.MulOp, flat, flat)
    elif t == "ReduceL1":
        flat = _emit1(im, g.AbsOp, flat)
    elif t == "ReduceLogSumExp":
        m = _reduce_rows(im, flat, "max", x.dtype, col, None)
        flat = _emit1(im, g.ExpOp, _emit2(im, g.SubOp, flat, m))
    last = t in ("ReduceSumSquare", "ReduceL1")
    r = _reduce_rows(im, flat, kind, x.dtype, col, hint if last else None)
    if t == "ReduceMin":
        r = _emit1(im, g.NegOp, r, hint)
    elif t == "ReduceL2":
        r = _emit1(im, g.SqrtOp, r, hint)
    elif t == "ReduceLogSum":
        r = _emit1(im, g.LogOp, r, hint)
    elif t == "ReduceLogSumExp":
        assert m is not None
        r = _emit2(im, g.AddOp, _emit1(im, g.LogOp, r), m, hint)
    return Val(im.raw_reshape(r, collapsed(out_shape), x.dtype, last_hint), out_shape, x.dtype)


@lowering("Softmax")
def _softmax(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("axis",))
    x = _val_input(im, node)
    rank = len(x.shape)
    if im.opset >= 13:
        axis = int(attrs.get("axis", -1))  # type: ignore[arg-type]
        if not -rank <= axis < rank:
            raise im.fail(f"axis {axis} out of range for rank {rank}")
        im.out(node, softmax_value(im, x, axis % rank, node.output[0]))
        return
    # opset < 13: softmax over the flattened trailing dims [prod(:axis), prod(axis:)]
    axis = int(attrs.get("axis", 1)) % max(rank, 1)  # type: ignore[arg-type]
    two = (math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))
    flat = im.raw_reshape(x.ssa, two, x.dtype)
    y = im.emit(g.SoftmaxOp(flat), node.output[0])
    im.out(node, Val(im.raw_reshape(y, collapsed(x.shape), x.dtype, node.output[0]), x.shape, x.dtype))


def softmax_value(im: ValueBuilder, x: Val, axis: int, hint: str | None) -> Val:
    """The softmax of x along `axis` (`graph.softmax` of the rows; another axis transposed last
    and back)."""
    rank = len(x.shape)
    if axis == rank - 1:
        return Val(im.emit(g.SoftmaxOp(x.ssa), hint), x.shape, x.dtype)
    if rank == 2:
        t = _transpose2d(im, x.ssa, x.dtype)
        return Val(_transpose2d(im, im.emit(g.SoftmaxOp(t)), x.dtype, hint), x.shape, x.dtype)
    perm = [*(a for a in range(rank) if a != axis), axis]  # transposed last, the softmax of the rows, back
    t = transpose_value(im, x, perm, None)
    sm = Val(im.emit(g.SoftmaxOp(t.ssa)), t.shape, x.dtype)
    return transpose_value(im, sm, [perm.index(a) for a in range(rank)], hint)


@lowering("LogSoftmax")
def _log_softmax(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """(x - max x) - log(sum(exp(x - max x))) over the last axis (opset >= 13) or the flattened
    trailing dims from `axis` (opset < 13), each step as onnxruntime computes it."""
    _no_attrs(im, attrs, ("axis",))
    x = _val_input(im, node)
    rank = len(x.shape)
    axis = int(attrs.get("axis", -1 if im.opset >= 13 else 1))  # type: ignore[arg-type]
    if not -rank <= axis < rank:
        raise im.fail(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    if im.opset >= 13 and axis != rank - 1:  # another axis: transposed last, then back
        perm = [*(a for a in range(rank) if a != axis), axis]
        t = transpose_value(im, x, perm, None)
        y = _log_softmax_rows(im, t, rank - 1, None)
        im.out(node, transpose_value(im, y, [perm.index(a) for a in range(rank)], node.output[0]))
        return
    im.out(node, _log_softmax_rows(im, x, axis, node.output[0]))


def _log_softmax_rows(im: _Importer, x: Val, axis: int, hint: str | None) -> Val:
    """Log-softmax of the rows of `x` flattened to [prod(:axis), prod(axis:)]."""
    rows, cols = math.prod(x.shape[:axis]), math.prod(x.shape[axis:])
    flat = im.raw_reshape(x.ssa, (rows, cols), x.dtype)
    m = _reduce_rows(im, flat, "max", x.dtype, (rows, 1), None)
    s = _emit2(im, g.SubOp, flat, m)
    t = _reduce_rows(im, _emit1(im, g.ExpOp, s), "sum", x.dtype, (rows, 1), None)
    y = _emit2(im, g.SubOp, s, _emit1(im, g.LogOp, t), hint)
    return Val(im.raw_reshape(y, collapsed(x.shape), x.dtype, hint), x.shape, x.dtype)


def _norm(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object], rms: bool) -> None:
    _no_attrs(im, attrs, ("axis", "epsilon", "stash_type"))
    if int(attrs.get("stash_type", 1)) != 1:  # type: ignore[arg-type]
        raise im.fail("stash_type other than FLOAT is not supported")
    x = _val_input(im, node)
    rank = len(x.shape)
    axis = int(attrs.get("axis", -1))  # type: ignore[arg-type]
    if not -rank <= axis < rank:
        raise im.fail(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    rows, cols = math.prod(x.shape[:axis]), math.prod(x.shape[axis:])
    flat = im.raw_reshape(x.ssa, (rows, cols), x.dtype)

    def vec(i: int, default: float, what: str) -> SSAValue:
        if len(node.input) <= i or not node.input[i]:
            return im.param(np.array(default), x.dtype, (cols,), f"{im.node_label}_{what}")
        v = im.get(node.input[i])
        s = value_shape(v)
        if math.prod(s) != cols and math.prod(s) != 1:
            raise im.fail(f"{what} of shape {list(s)} is not one value per normalized element (broadcast {what})")
        if isinstance(v, Val):
            if math.prod(s) != cols or s[: len(s) - (rank - axis)] not in ((), (1,) * (len(s) - (rank - axis))):
                raise im.fail(f"a computed {what} must cover exactly the normalized axes")
            return im.raw_reshape(v.ssa, (cols,), x.dtype)
        return im.param(
            np.broadcast_to(v, (cols,)) if v.size == 1 else v.reshape(cols), x.dtype, (cols,), node.input[i]
        )

    gamma = vec(1, 1.0, "scale")
    operands = [flat, gamma] if rms else [flat, gamma, vec(2, 0.0, "bias")]
    cls = g.RmsNormOp if rms else g.LayerNormOp
    op = cls.create(operands=operands, result_types=[flat.type])
    eps = float(attrs.get("epsilon", 1e-5))  # type: ignore[arg-type]
    op.attributes["epsilon"] = FloatAttr(eps, f64)
    y = im.emit(op, node.output[0])
    im.out(node, Val(im.raw_reshape(y, collapsed(x.shape), x.dtype, node.output[0]), x.shape, x.dtype))
    if not rms and any(o for o in node.output[1:]):
        _norm_statistics(im, node, flat, x, axis, eps)


def _norm_statistics(im: _Importer, node: onnx.NodeProto, flat: SSAValue, x: Val, axis: int, eps: float) -> None:
    """LayerNormalization's optional outputs, in float32 (the stash type): the mean and
    1 / sqrt(variance + epsilon) of each normalized row, at the input's shape with the
    normalized axes kept as 1."""
    rows = flat.type.get_shape()[0]
    if x.dtype != np.float32:
        flat = im.emit(g.CastOp(flat, _tt(flat.type.get_shape(), np.float32)))
    shape = (*x.shape[:axis], *(1,) * (len(x.shape) - axis))
    like = Val(flat, (rows, 1), np.float32)
    mean = _reduce_rows(im, flat, "mean", np.float32, (rows, 1), None)
    if len(node.output) > 2 and node.output[2]:
        d = _emit2(im, g.SubOp, flat, mean)
        var = _reduce_rows(im, _emit2(im, g.MulOp, d, d), "mean", np.float32, (rows, 1), None)
        ve = _emit2(im, g.AddOp, var, im.splat(eps, like, f"{im.node_label}_epsilon"))
        inv = _emit1(im, g.RsqrtOp, ve, node.output[2])
        inv = im.raw_reshape(inv, collapsed(shape), np.float32, node.output[2])
        im.vals[node.output[2]] = Val(inv, shape, np.float32)
    if node.output[1]:
        mean.name_hint = None
        m = im.emit(g.ReshapeOp(mean, _tt(collapsed(shape), np.float32)), node.output[1])
        im.vals[node.output[1]] = Val(m, shape, np.float32)


@lowering("LayerNormalization", since=17)
def _layer_norm(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _norm(im, node, attrs, rms=False)


@lowering("RMSNormalization", since=23)
def _rms_norm(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _norm(im, node, attrs, rms=True)


@lowering("Transpose")
def _transpose(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("perm",))
    x = _val_input(im, node)
    rank = len(x.shape)
    perm = [int(p) for p in attrs.get("perm", list(range(rank))[::-1])]  # type: ignore[union-attr]
    if sorted(perm) != list(range(rank)):
        raise im.fail(f"perm {perm} is not a permutation of rank {rank}")
    im.out(node, transpose_value(im, x, perm, node.output[0]))


def _target_shape(im: _Importer, x: Val, spec: Sequence[int], allowzero: bool) -> tuple[int, ...]:
    out = [x.shape[i] if (d == 0 and not allowzero and i < len(x.shape)) else int(d) for i, d in enumerate(spec)]
    if out.count(-1) > 1:
        raise im.fail("more than one -1 in the target shape")
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        out[out.index(-1)] = math.prod(x.shape) // known if known else 0
    if math.prod(out) != math.prod(x.shape) or any(d <= 0 for d in out):
        raise im.fail(f"cannot reshape {list(x.shape)} to {list(spec)}")
    return tuple(out)


@lowering("Reshape", since=5)
def _reshape(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("allowzero",))
    x = _val_input(im, node)
    spec = im.const(node.input[1], "the target shape").reshape(-1).tolist()
    shape = _target_shape(im, x, spec, bool(attrs.get("allowzero", 0)))
    im.out(node, im.reshape(x, shape, node.output[0]))


@lowering("Flatten")
def _flatten(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("axis",))
    x = _val_input(im, node)
    rank = len(x.shape)
    axis = int(attrs.get("axis", 1))  # type: ignore[arg-type]
    if not -rank <= axis <= rank:
        raise im.fail(f"axis {axis} out of range for rank {rank}")
    axis = axis + rank if axis < 0 else axis  # -1 flattens all but the last axis
    im.out(node, im.reshape(x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])), node.output[0]))


@lowering("Squeeze", "Unsqueeze")
def _squeeze(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("axes",))
    x = _val_input(im, node)
    if node.op_type == "Squeeze":
        axes = _axes(im, node, attrs, len(x.shape))
        axes = [i for i, d in enumerate(x.shape) if d == 1] if axes is None else axes
        if any(x.shape[a] != 1 for a in axes):
            raise im.fail(f"cannot squeeze axes {axes} of {list(x.shape)}")
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    else:
        n = (
            len(attrs["axes"])
            if "axes" in attrs
            else im.const(node.input[1], "axes").size
            if len(node.input) > 1
            else 0
        )
        axes = _axes(im, node, attrs, len(x.shape) + n)
        if not axes:
            raise im.fail("Unsqueeze needs axes")
        shape_l = list(x.shape)
        for a in axes:
            shape_l.insert(a, 1)
        shape = tuple(shape_l)
    im.out(node, im.reshape(x, shape, node.output[0]))


def _split_sizes(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object], d: int) -> list[int]:
    if "split" in attrs:
        sizes = [int(x) for x in attrs["split"]]  # type: ignore[union-attr]
    elif len(node.input) > 1 and node.input[1]:
        sizes = [int(x) for x in im.const(node.input[1], "the split sizes").reshape(-1)]
    else:
        n = int(attrs.get("num_outputs", len(node.output)))  # type: ignore[arg-type]
        per = -(-d // n)
        sizes = [min(per, d - i * per) for i in range(n)]
    if sum(sizes) != d or len(sizes) != len(node.output) or any(z <= 0 for z in sizes):
        raise im.fail(f"split sizes {sizes} do not cut {d} into {len(node.output)} parts")
    return sizes


def _matmul_source(im: _Importer, name: str) -> tuple[Val, np.ndarray, np.ndarray | None] | None:
    """A value computed as `lhs @ W (+ bias)` with W (and bias) constant, seen through reshapes
    that keep its last axis: (lhs, W, bias)."""
    producer = im.producer
    last = im.static_shapes.get(name, (None,))[-1]
    bias = None
    while True:
        n = producer.get(name)
        if n is None:
            return None
        if n.op_type == "Reshape" and im.static_shapes.get(n.input[0], (None,))[-1] == last:
            name = n.input[0]
            continue
        if n.op_type == "Add" and bias is None:
            for x, c in (n.input, n.input[::-1]):
                if c in im.consts and im.consts[c].reshape(-1).size == last:
                    name, bias = x, im.consts[c].reshape(-1)
                    break
            else:
                return None
            continue
        break
    a = _attrs(n)
    if n.op_type == "Gemm":
        if a.get("transA") or float(a.get("alpha", 1.0)) != 1.0 or float(a.get("beta", 1.0)) != 1.0:  # type: ignore[arg-type]
            return None
        if len(n.input) > 2 and n.input[2]:
            if bias is not None or n.input[2] not in im.consts:
                return None
            bias = np.broadcast_to(im.consts[n.input[2]], (last,))
    elif n.op_type != "MatMul":
        return None
    lhs, w = im.vals.get(n.input[0]), im.consts.get(n.input[1])
    if lhs is None or w is None or w.ndim != 2:
        return None
    return lhs, (w.T if a.get("transB") else w), bias


_VIEW_OPS = ("Reshape", "Transpose", "Squeeze", "Unsqueeze", "Gather", "Split", "Slice", "Flatten", "Identity")


def _column_window(im: _Importer, name: str) -> tuple[Val, np.ndarray, np.ndarray | None, int, int] | None:
    """`name` as a window of columns [lo, hi) of a matmul's output `lhs @ W (+ bias)`, seen
    through view nodes (reshapes, transposes, squeezes, constant-index gathers, splits, slices):
    (lhs, W, bias, lo, hi). Found by replaying the view chain on the source's element indices,
    so any chain that picks whole rows' column ranges is recognised, and nothing else."""
    producer = im.producer
    chain, cur = [], name
    while True:
        src = _matmul_source(im, cur) if cur != name else None
        if src is not None:
            break
        n = producer.get(cur)
        if n is None or n.op_type not in _VIEW_OPS or not all(i in im.consts for i in n.input[1:] if i):
            return None
        chain.append((n, cur))
        cur = n.input[0]
    shape = im.static_shapes.get(cur)
    if shape is None:
        return None
    env = {cur: np.arange(math.prod(shape), dtype=np.int64).reshape(shape)}
    for n, _out in reversed(chain):
        res = evaluate_node(n, {x: env[x] if x in env else im.consts[x] for x in n.input if x}, im.opset)
        env.update({o: np.asarray(r) for o, r in zip(n.output, res, strict=False) if o})
    idx = env[name]
    lhs, w, bias = src
    cols = shape[-1]
    rows = math.prod(shape[:-1])
    width = idx.size // rows if idx.size % rows == 0 else 0
    if width == 0:
        return None
    lo = int(idx.reshape(-1)[0])
    want = (np.arange(rows)[:, None] * cols + lo + np.arange(width)[None, :]).reshape(idx.shape)
    if lo >= cols or lo + width > cols or not (idx == want).all():
        return None
    return lhs, w, bias, lo, lo + width


def _lower_window(im: _Importer, out: str, shape: tuple[int, ...], window: tuple) -> Val:
    """The columns [lo, hi) of `lhs @ W (+ bias)` computed directly: `lhs @ W[:, lo:hi]`."""
    lhs, w, bias, lo, hi = window
    wv = im.val(np.ascontiguousarray(w[:, lo:hi]), lhs, f"{out}.weight")
    y = _matmul_core(im, lhs, wv.ssa, hi - lo, None if bias is not None else out)
    if bias is not None:
        y = im.binary_values("add", y, np.ascontiguousarray(bias[lo:hi]), "", f"{out}.bias", out)
    return im.reshape(y, shape, out)


def _gather_view(im: _Importer, node: onnx.NodeProto, data: Val, idx: np.ndarray, axis: int) -> bool:
    """Constant indices that need no data movement, lowered if so: a pick of a column range of a
    matmul's output (the fused in-projection's q, k or v: a matmul by those weight columns), or
    an index into a unit axis (a reshape)."""
    window = _column_window(im, node.output[0])
    if window is not None and node.output[0] in im.static_shapes:
        im.out(node, _lower_window(im, node.output[0], im.static_shapes[node.output[0]], window))
        return True
    axis %= len(data.shape)
    if idx.size == 1 and data.shape[axis] == 1 and int(idx.reshape(-1)[0]) in (0, -1):
        shape = data.shape[:axis] + (1,) * idx.ndim + data.shape[axis + 1 :]
        im.out(node, im.reshape(data, shape, node.output[0]))
        return True
    return False


@lowering("Expand", since=8)
def _expand(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Broadcast to a shape (`_Importer.broadcast`: `ones * x` per run of broadcast axes, which
    NumPy-broadcasts x exactly, signed zeros, infinities and NaNs kept)."""
    _no_attrs(im, attrs)
    x = _val_input(im, node)
    spec = tuple(int(d) for d in im.const(node.input[1], "the target shape").reshape(-1))
    im.out(node, expand_value(im, x, spec, node.input[0], node.output[0]))


def expand_value(im: ValueBuilder, x: Val, spec: tuple[int, ...], name: str, hint: str | None) -> Val:
    """x NumPy-broadcast with the shape `spec` (a reshape when only unit axes are added)."""
    try:
        shape = tuple(np.broadcast_shapes(x.shape, spec))
    except ValueError:
        raise im.fail(f"{list(x.shape)} does not broadcast to {list(spec)}") from None
    if shape == x.shape or collapsed(shape) == collapsed(x.shape):
        return im.reshape(x, shape, hint)
    return im.broadcast(x, shape, name, hint)


def _attention_mask(
    im: _Importer,
    name: str,
    causal: bool,
    s: int,
    sk: int,
    consts: list[tuple[str, np.ndarray, float]],
    runtime: list[tuple[Val | np.ndarray, float]],
) -> bool:
    """The Attention op's `attn_mask` as a term of the additive bias (appended to `consts` or
    `runtime`); returns whether the attention is causal. A bool mask keeps the keys where it is
    true (the others -inf), a float mask is added to the scaled scores; a mask shorter than the
    keys hides the rest. A constant all-visible mask adds nothing, a constant causal one makes
    the attention causal; a float mask may also be computed at run time. (Rows with every key
    hidden give 0, as onnxruntime's Attention does.)"""
    m = im.get(name)
    if isinstance(m, Val):
        runtime.append((m, 1.0))
        return causal
    if m.dtype != np.bool_ and not np.issubdtype(m.dtype, np.floating):
        raise im.fail(f"attn_mask '{name}' has element type {m.dtype}; bool or float expected")
    if m.ndim < 2 or m.ndim > 4:
        raise im.fail(f"attn_mask '{name}' of rank {m.ndim}; rank 2 to 4 expected")
    if m.shape[-1] > sk:
        raise im.fail(f"attn_mask '{name}' has {m.shape[-1]} keys, more than the {sk} keys")
    pad = [(0, 0)] * (m.ndim - 1) + [(0, sk - m.shape[-1])]
    if m.dtype == np.bool_:
        m = np.pad(m, pad, constant_values=False)
        add = np.where(m, np.float32(0), np.float32(-np.inf))
    else:
        add = np.pad(m.astype(np.float32), pad, constant_values=-np.inf)
    try:
        add = np.broadcast_to(add, (*add.shape[:-2], s, sk))
    except ValueError:
        raise im.fail(f"attn_mask '{name}' of shape {list(m.shape)} does not broadcast to [{s}, {sk}]") from None
    kind = mask_kind(add, s, sk, None)
    if kind == "causal":
        return True
    if kind != "none":
        consts.append((name, add, 1.0))
    return causal


@lowering("Attention", since=23)
def _attention(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Batch-1 attention, 3-D ([1, S, H*D], with q/kv_num_heads) or 4-D ([1, H, S, D]) inputs."""
    _no_attrs(im, attrs, ("is_causal", "kv_num_heads", "q_num_heads", "scale", "softcap", "qk_matmul_output_mode"))
    if float(attrs.get("softcap", 0.0)) != 0.0:  # type: ignore[arg-type]
        raise im.fail("softcap is not supported")
    if int(attrs.get("qk_matmul_output_mode", 0)) != 0:  # type: ignore[arg-type]
        raise im.fail("qk_matmul_output_mode is not supported")
    if any(i for i in node.input[4:6]):
        raise im.fail("past key/values (a KV cache) are not supported")
    if any(i for i in node.input[6:]):
        raise im.fail("padding lengths (nonpad_kv_seqlen) are not supported")
    if any(o for o in node.output[1:]):
        raise im.fail("present key/value and qk outputs are not supported")
    q, k, v = (_val_input(im, node, i) for i in range(3))
    if len({q.dtype, k.dtype, v.dtype}) != 1:
        raise im.fail("q, k and v element types differ")
    if k.shape != v.shape:
        raise im.fail(f"k {list(k.shape)} and v {list(v.shape)} differ (distinct value head size not supported)")
    batch = q.shape[0]
    if batch != 1 and (len(q.shape) != 4 or k.shape[0] != batch):
        raise im.fail(
            f"batch size {batch} of 3-D inputs; only batch 1 is supported (4-D inputs fold the batch into the heads)"
        )

    def heads3(x: Val, h: int, tag: str) -> SSAValue:
        if len(x.shape) == 3:
            _, s, hd = x.shape
            if h <= 0 or hd % h:
                raise im.fail(f"{h} heads do not divide {hd}")
            return im.split_heads(x.ssa, h, x.dtype, f"{tag}.heads")
        b, hh, s, d = x.shape  # a batch folds into the heads (KV head groups stay within a batch)
        return im.raw_reshape(x.ssa, (b * hh, s, d), x.dtype, f"{tag}.heads")

    if len(q.shape) == 3:
        hq, hkv = int(attrs.get("q_num_heads", 0)), int(attrs.get("kv_num_heads", 0))  # type: ignore[arg-type]
    elif len(q.shape) == 4:
        hq, hkv = q.shape[1], k.shape[1]
    else:
        raise im.fail(f"q of rank {len(q.shape)}; 3-D or 4-D inputs expected")
    qh, kh, vh = heads3(q, hq, node.input[0]), heads3(k, hkv, node.input[1]), heads3(v, hkv, node.input[2])
    (nq, s, d), (nk, sk, dk) = qh.type.get_shape(), kh.type.get_shape()
    if nq % nk or d != dk:
        raise im.fail(f"{nq} query heads of size {d} do not group over {nk} KV heads of size {dk}")
    causal = bool(attrs.get("is_causal", 0))
    consts: list[tuple[str, np.ndarray, float]] = []
    runtime: list[tuple[Val | np.ndarray, float]] = []
    if len(node.input) > 3 and node.input[3]:
        causal = _attention_mask(im, node.input[3], causal, s, sk, consts, runtime)
    if causal and s != sk:  # ONNX aligns the causal mask top-left: query i sees keys 0 .. i
        consts.append((f"{im.node_label}_top_left_mask", np.triu(np.full((s, sk), -np.inf, np.float32), 1), 1.0))
        causal = False
    bias = im.attention_bias(consts, runtime, qh, kh, batch, q.dtype)
    at: dict[str, Attribute] = {"form": StringAttr("materialized")}
    if causal:
        at["causal"] = UnitAttr()
    if "scale" in attrs:
        at["scale"] = FloatAttr(float(attrs["scale"]), f64)  # type: ignore[arg-type]
    a = im.emit(
        g.AttentionOp.create(
            operands=[qh, kh, vh] if bias is None else [qh, kh, vh, bias], result_types=[qh.type], attributes=at
        ),
        node.output[0] if len(q.shape) == 4 else None,
    )
    if len(q.shape) == 3:
        y = im.emit(g.MergeHeadsOp(a, _tt((s, nq * d), q.dtype)), node.output[0])
        im.out(node, Val(y, (1, s, nq * d), q.dtype))
    else:
        shape = (batch, nq // batch, s, d)
        im.out(node, Val(im.raw_reshape(a, (nq * s, d), q.dtype, node.output[0]), shape, q.dtype))


@lowering("Gather")
def _gather(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """An embedding lookup (rows of a constant table [V, D] by a runtime index input, axis 0) is a
    `graph.gather`; constant indices into a computed tensor (picking tokens, or columns) are a
    one-hot selection matmul; a constant table with constant indices was folded at import."""
    _no_attrs(im, attrs, ("axis",))
    data, idx = im.get(node.input[0]), im.get(node.input[1])
    axis = int(attrs.get("axis", 0))  # type: ignore[call-overload]
    if isinstance(idx, Val):
        _embedding_lookup(im, node, data, idx, axis)
    elif isinstance(data, Val):
        if not _gather_view(im, node, data, np.asarray(idx), axis):
            _pick_rows(im, node, data, np.asarray(idx), axis)
    else:
        raise im.fail("constant Gather could not be folded")


def _embedding_lookup(im: _Importer, node: onnx.NodeProto, data: Val | np.ndarray, idx: Val, axis: int) -> None:
    im.out(node, embedding_lookup(im, data, idx, axis, node.input[0], node.input[1], node.output[0]))


def embedding_lookup(
    im: ValueBuilder, data: Val | np.ndarray, idx: Val, axis: int, table_name: str, ids_name: str, hint: str | None
) -> Val:
    """Rows of a constant table by run-time token ids ([S] or [1, S]): a `graph.gather`."""
    if isinstance(data, Val):
        raise im.fail("runtime indices into a computed tensor are not supported (the table must be an initializer)")
    if not is_int(idx.dtype):
        raise im.fail(f"indices '{ids_name}' must be an integer input")
    if len(idx.shape) not in (1, 2) or len(idx.shape) == 2 and idx.shape[0] != 1:
        raise im.fail(
            f"runtime indices '{ids_name}' have shape {list(idx.shape)}; the embedding lookup takes token ids of "
            "shape [S] or [1, S]"
        )
    if data.ndim < 2 or axis not in (0, -data.ndim):
        raise im.fail(
            f"only the lookup along axis 0 of a table of rank 2 or more is supported with runtime indices; got axis "
            f"{axis} of a rank-{data.ndim} tensor"
        )
    if not np.issubdtype(data.dtype, np.floating):
        raise im.fail(f"table '{table_name}' has element type {data.dtype}; only float tables are supported")
    dt = np.float16 if data.dtype == np.float16 else np.float32
    rest = data.shape[1:]
    flat = np.reshape(data, (data.shape[0], math.prod(rest)))  # a stacked table (experts' weights): rows of [F, D]
    table = im.val(flat, Val(idx.ssa, flat.shape, dt), table_name)
    s = idx.shape[-1]
    if len(rest) == 1:
        r = im.emit(g.GatherOp(table.ssa, idx.ssa, _tt((s, rest[0]), dt)), hint)
        return Val(r, (*idx.shape, *rest), dt)
    r = im.emit(g.GatherOp(table.ssa, idx.ssa, _tt((s, flat.shape[1]), dt)), None)
    return im.reshape(Val(r, (s, flat.shape[1]), dt), (*idx.shape, *rest), hint)


@lowering("GatherND", since=11)
def _gather_nd(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Slices of a constant table picked by runtime indices of last axis 1 (`batch_dims` 0): the
    lookup along axis 0 (the dynamo exporter's spelling of `experts[ids]`); constant index
    tuples into a computed tensor pick rows of its first axes' collapse, like Gather."""
    _no_attrs(im, attrs, ("batch_dims",))
    if int(attrs.get("batch_dims", 0)):  # type: ignore[call-overload]
        raise im.fail("batch_dims other than 0 is not supported")
    data, idx = im.get(node.input[0]), im.get(node.input[1])
    ishape, dshape = value_shape(idx), value_shape(data)
    if isinstance(data, Val) and not isinstance(idx, Val) and ishape and 1 <= ishape[-1] <= len(dshape):
        q = ishape[-1]  # constant index tuples: their row-major positions in the first q axes, picked
        lead = dshape[:q]
        tuples = checked_indices(im, np.asarray(idx, np.int64).reshape(-1, q), lead, range(q))
        flat = np.ravel_multi_index(tuple(tuples.T), lead).reshape(ishape[:-1])
        _pick_rows(im, node, im.reshape(data, (math.prod(lead), *dshape[q:])), flat, 0)
        return
    if not ishape or ishape[-1] != 1:
        raise im.fail(
            f"indices '{node.input[1]}' of shape {list(ishape)}: only index tuples of one axis (last axis 1) are "
            "supported"
        )
    if isinstance(idx, Val):
        _embedding_lookup(im, node, data, im.reshape(idx, ishape[:-1]), 0)
    elif isinstance(data, Val):
        _pick_rows(im, node, data, np.reshape(idx, ishape[:-1]), 0)
    else:
        raise im.fail("constant GatherND could not be folded")


def checked_indices(
    im: _Importer, idx: np.ndarray, sizes: Sequence[int], axes: Sequence[int], what: str = ""
) -> np.ndarray:
    """Constant indices `idx` [..., k] into axes `axes` of sizes `sizes`, each within [-size, size)
    (else refused, naming the index and the axis), negatives counted back from the end."""
    bound = np.asarray(sizes, np.int64)
    bad = (idx < -bound) | (idx >= bound)
    if bad.any():
        at = tuple(np.argwhere(bad)[0])
        k = at[-1]
        raise im.fail(f"{what}index {int(idx[at])} out of range for axis {axes[k]} of size {int(bound[k])}")
    return idx % bound


def _pick_rows(im: _Importer, node: onnx.NodeProto, data: Val, idx: np.ndarray, axis: int) -> None:
    im.out(node, pick_rows(im, data, idx, axis, node.input[1], node.output[0]))


def pick_rows(im: ValueBuilder, data: Val, idx: np.ndarray, axis: int, idx_name: str, hint: str | None) -> Val:
    """Constant indices along a non-last axis of a computed tensor: the picked rows of its row
    collapse, as a one-hot [picked, rows] matrix times the collapse (exact: one 1 per row); along
    the last axis the row collapse times a one-hot [columns, picked]."""
    rank = len(data.shape)
    if not -rank <= axis < rank:
        raise im.fail(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    if not np.issubdtype(idx.dtype, np.integer):
        raise im.fail(f"indices '{idx_name}' have element type {idx.dtype}; expected integers")
    n = data.shape[axis]
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise im.fail(f"index {int(idx[bad].reshape(-1)[0])} out of range [{-n}, {n}) of axis {axis}")
    if axis == rank - 1:
        return _pick_columns(im, data, np.where(idx < 0, idx + n, idx), hint)
    lead = data.shape[:-1]
    rows = np.take(np.arange(math.prod(lead)).reshape(lead), np.where(idx < 0, idx + n, idx), axis=axis)
    out_shape = (*data.shape[:axis], *idx.shape, *data.shape[axis + 1 :])
    picked = rows.reshape(-1)
    onehot = np.zeros((picked.size, math.prod(lead)), np.float32)
    onehot[np.arange(picked.size), picked] = 1
    sel = im.param(onehot, data.dtype, onehot.shape, f"{im.node_label}_pick")
    x = data.ssa if len(data.ssa.type.get_shape()) == 2 else im.raw_reshape(data.ssa, (1, data.shape[-1]), data.dtype)
    mm_t = _tt((picked.size, data.shape[-1]), data.dtype)
    want = collapsed(out_shape)
    r = im.emit(g.MatmulOp(sel, x, mm_t), hint if tuple(want) == (picked.size, data.shape[-1]) else None)
    return Val(im.raw_reshape(r, want, data.dtype, hint), out_shape, data.dtype)


def _pick_columns(im: ValueBuilder, data: Val, idx: np.ndarray, hint: str | None) -> Val:
    """Constant indices along the last axis: the row collapse times a one-hot [columns, picked]."""
    c = data.shape[-1]
    picked = idx.reshape(-1)
    onehot = np.zeros((c, picked.size), np.float32)
    onehot[picked, np.arange(picked.size)] = 1
    sel = im.param(onehot, data.dtype, onehot.shape, f"{im.node_label}_pick")
    rows = math.prod(data.shape[:-1])
    x = im.raw_reshape(data.ssa, (rows, c), data.dtype)
    out_shape = (*data.shape[:-1], *idx.shape)
    want = collapsed(out_shape)
    named = hint if tuple(want) == (rows, picked.size) else None
    r = im.emit(g.MatmulOp(x, sel, _tt((rows, picked.size), data.dtype)), named)
    return Val(im.raw_reshape(r, want, data.dtype, hint), out_shape, data.dtype)


# -- integers and bools -----------------------------------------------------------------------------

_COMPARE_KINDS = {
    "Equal": "equal",
    "Less": "less",
    "LessOrEqual": "less_equal",
    "Greater": "greater",
    "GreaterOrEqual": "greater_equal",
}
_LOGIC_KINDS = {"And": "and", "Or": "or", "Xor": "xor", "BitwiseAnd": "and", "BitwiseOr": "or", "BitwiseXor": "xor"}


def _int_operands(im: _Importer, node: onnx.NodeProto, bools: bool) -> None:
    """Refuse operands that are not bool (`bools`) or not integers."""
    for name in node.input:
        x = im.get(name)
        dt = np.dtype(x.dtype)
        if bools and dt.kind != "b" or not bools and dt.kind not in "iu":
            raise im.fail(
                f"operand '{name}' has element type {dt}; {node.op_type} takes {'bool' if bools else 'integers'}"
            )


@lowering(*_COMPARE_KINDS)
def _compare(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """A comparison -> bool (`graph.less`, ...); NaN compares false."""
    _no_attrs(im, attrs)
    im.out(node, im.binary(_COMPARE_KINDS[node.op_type], node.input[0], node.input[1], node.output[0]))


@lowering("IsNaN", since=9)
def _is_nan(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """`not (x == x)`: only NaN differs from itself (the dynamo exporter's guard after a softmax
    whose row is fully masked)."""
    _no_attrs(im, attrs)
    x = _val_input(im, node)
    if is_int(x.dtype):
        raise im.fail(f"operand '{node.input[0]}' has element type {np.dtype(x.dtype)}; IsNaN takes floats")
    same = im.binary_values("equal", x, x, node.input[0], node.input[0], None)
    im.out(node, im.unary(g.NotOp, same, node.output[0]))


@lowering("IsInf", since=10)
def _is_inf(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """Beyond the element type's largest finite value (|x| for both signs): a comparison with a
    finite bound, so no infinity has to be written into the package's tables."""
    _no_attrs(im, attrs, ("detect_negative", "detect_positive"))
    x = _val_input(im, node)
    if is_int(x.dtype):
        raise im.fail(f"operand '{node.input[0]}' has element type {np.dtype(x.dtype)}; IsInf takes floats")
    neg, pos = int(attrs.get("detect_negative", 1)), int(attrs.get("detect_positive", 1))  # type: ignore[arg-type]
    big = float(np.finfo(x.dtype).max)
    hint = node.output[0]
    if neg and pos:
        im.out(node, im.binary_values("greater", im.unary(g.AbsOp, x, None), np.array(big, x.dtype), "", "", hint))
    elif pos:
        im.out(node, im.binary_values("greater", x, np.array(big, x.dtype), node.input[0], "", hint))
    elif neg:
        im.out(node, im.binary_values("less", x, np.array(-big, x.dtype), node.input[0], "", hint))
    else:  # neither sign: false everywhere (x > x holds for no value, NaN included)
        im.out(node, im.binary_values("greater", x, x, node.input[0], node.input[0], hint))


@lowering(*_LOGIC_KINDS)
def _logic(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """And/Or/Xor of bools, BitwiseAnd/Or/Xor of integers: one kernel each (on the i32 word)."""
    _no_attrs(im, attrs)
    _int_operands(im, node, bools=not node.op_type.startswith("Bitwise"))
    im.out(node, im.binary(_LOGIC_KINDS[node.op_type], node.input[0], node.input[1], node.output[0]))


@lowering("BitwiseNot", since=18)
def _bitwise_not(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs)
    x = _val_input(im, node)
    _int_operands(im, node, bools=False)
    if np.dtype(x.dtype).kind == "u":
        im.check_int_op("bitwise_not", x.dtype)  # ~x of an unsigned value lies above int32 for uint32/64
        im.out(node, im.wrap(im.unary(g.BitwiseNotOp, x, None), node.output[0]))
        return
    im.out(node, im.unary(g.BitwiseNotOp, x, node.output[0]))


@lowering("BitShift", since=11)
def _bit_shift(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    _no_attrs(im, attrs, ("direction",))
    d = attrs.get("direction", b"")
    direction = d.decode() if isinstance(d, bytes) else str(d)
    if direction not in ("LEFT", "RIGHT"):
        raise im.fail(f"direction must be LEFT or RIGHT, not {direction!r}")
    _int_operands(im, node, bools=False)
    kind = "shift_left" if direction == "LEFT" else "shift_right"
    im.out(node, im.binary(kind, node.input[0], node.input[1], node.output[0]))


@lowering("Mod", since=10)
def _mod(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """fmod = 0: the divisor's sign (integers only, as ONNX says); fmod = 1: the dividend's."""
    _no_attrs(im, attrs, ("fmod",))
    fmod = int(attrs.get("fmod", 0))  # type: ignore[call-overload]
    a = im.get(node.input[0])
    if not fmod and np.dtype(a.dtype).kind == "f":
        raise im.fail("Mod with fmod = 0 of floats is not defined by ONNX (use fmod = 1)")
    im.out(node, im.binary("fmod" if fmod else "mod", node.input[0], node.input[1], node.output[0]))


@lowering("Where", since=9)
def _where(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """`graph.where` with a runtime condition: constants are materialized at the result's shape;
    a computed operand must already have it."""
    _no_attrs(im, attrs)
    c, a, b = (im.get(n) for n in node.input)
    im.out(node, where_values(im, c, a, b, list(node.input), node.output[0]))


def where_values(
    im: ValueBuilder, c: Val | np.ndarray, a: Val | np.ndarray, b: Val | np.ndarray, names: list[str], hint
) -> Val:
    """`graph.where(c, a, b)` at the broadcast shape: constants materialized at it, computed
    operands broadcast to it."""
    if not any(isinstance(v, Val) for v in (c, a, b)):
        raise im.fail("constant node could not be folded")
    shapes = [value_shape(v) for v in (c, a, b)]
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise im.fail(f"shapes {[list(s) for s in shapes]} do not broadcast") from None
    if np.dtype(c.dtype).kind != "b":
        raise im.fail(f"condition '{names[0]}' has element type {np.dtype(c.dtype)}; expected bool")
    vals = [v for v in (a, b) if isinstance(v, Val)]
    like_dt = vals[0].dtype if vals else np.asarray(a).dtype.type
    if len(vals) == 2 and np.dtype(vals[0].dtype) != np.dtype(vals[1].dtype):
        raise im.fail("value element types differ")

    def full(v: Val | np.ndarray, name: str, dt: type) -> Val:
        if isinstance(v, Val):
            return im.full(v, v, shape, name)
        like = Val(vals[0].ssa if vals else c.ssa, shape, dt)  # type: ignore[union-attr]
        return im.val(np.asarray(v), like, name, shape)

    cv = full(c, names[0], np.bool_)
    av, bv = full(a, names[1], like_dt), full(b, names[2], like_dt)
    return Val(im.emit(g.WhereOp(cv.ssa, av.ssa, bv.ssa), hint), shape, av.dtype)


@lowering("ArgMax", "ArgMin")
def _arg_reduce(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """The index (int64 in ONNX, i32 on the device) of each row's largest or smallest value
    along the last axis (`graph.arg_reduce`); another axis is first transposed to the last."""
    _no_attrs(im, attrs, ("axis", "keepdims", "select_last_index"))
    x = _val_input(im, node)
    rank = len(x.shape)
    axis = int(attrs.get("axis", 0))  # type: ignore[call-overload]
    if not -rank <= axis < rank:
        raise im.fail(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    keep = bool(attrs.get("keepdims", 1))
    kind = "max" if node.op_type == "ArgMax" else "min"
    last = bool(int(attrs.get("select_last_index", 0)))  # type: ignore[call-overload]
    im.out(node, arg_reduce_value(im, x, axis, keep, kind, last, node.output[0]))


def arg_reduce_value(im: ValueBuilder, x: Val, axis: int, keep: bool, kind: str, last: bool, hint) -> Val:
    """The int64 index of the first (`last`: the last) largest or smallest (`kind` max, min)
    value along `axis` (`graph.arg_reduce` of the rows; another axis transposed last)."""
    rank = len(x.shape)
    kept = tuple(d for i, d in enumerate(x.shape) if i != axis)
    out_shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape)) if keep else kept
    if axis != rank - 1:
        x = transpose_value(im, x, [i for i in range(rank) if i != axis] + [axis], None)
    if not out_shape:
        what = f"Arg{kind.capitalize()}"
        raise im.fail(f"{what} of a rank-1 tensor without keepdims gives a rank-0 output; not supported")
    flat = x.ssa if len(x.ssa.type.get_shape()) == 2 else im.raw_reshape(x.ssa, (1, x.shape[-1]), x.dtype)
    rows = flat.type.get_shape()[0]
    op = g.ArgReduceOp.create(
        operands=[flat], result_types=[_tt((rows,), np.int32)], attributes={"kind": StringAttr(kind)}
    )
    if last:
        op.attributes["select_last_index"] = UnitAttr()
    want = collapsed(out_shape)
    r = im.emit(op, hint if tuple(want) == (rows,) else None)
    n = x.shape[-1]
    return Val(im.raw_reshape(r, want, np.int64, hint), out_shape, np.int64, (0, n - 1))


@lowering("CumSum", since=11)
def _cumsum(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
    """The running sum along a constant axis (`graph.cumsum`, another axis transposed to the last
    and back). An int64 (uint32, uint64) sum is carried in i32, so it is accepted only where its
    range is known to fit: a sum of booleans (a mask's position ids) is at most the axis length."""
    _no_attrs(im, attrs, ("exclusive", "reverse"))
    x = _val_input(im, node)
    axis_c = im.const(node.input[1], "CumSum's axis")
    if axis_c.size != 1 or axis_c.dtype.kind not in "iu":
        raise im.fail(f"axis '{node.input[1]}' must be one integer; got {axis_c.dtype} {list(axis_c.shape)}")
    rank = len(x.shape)
    axis = int(axis_c.reshape(-1)[0])
    if rank == 0 or not -rank <= axis < rank:
        raise im.fail(f"axis {axis} out of range for rank {rank}")
    axis %= rank
    dt = np.dtype(x.dtype)
    n, src = x.shape[axis], x.bounds
    proven = None if src is None else (n * min(src[0], 0), n * max(src[1], 0))
    if dt in WIDE_INTS and not fits_i32(proven):
        raise im.fail(
            f"CumSum of {dt} values ('{node.input[0]}'): the device sums in int32, and no proven range of these "
            "values keeps the running sum inside it (a sum of booleans or of bounded values would be); not supported"
        )
    if dt.kind not in "fiu":
        raise im.fail(f"CumSum of {dt} values; supported: floats and integers")
    perm = [i for i in range(rank) if i != axis] + [axis]
    moved = axis != rank - 1
    if moved:
        x = transpose_value(im, x, perm, None)
    op = g.CumSumOp.create(operands=[x.ssa], result_types=[x.ssa.type])
    for flag in ("exclusive", "reverse"):
        if int(attrs.get(flag, 0)):  # type: ignore[call-overload]
            op.attributes[flag] = UnitAttr()
    r = Val(im.emit(op, None if moved else node.output[0]), x.shape, x.dtype, proven if fits_i32(proven) else None)
    if moved:
        r = transpose_value(im, r, [perm.index(i) for i in range(rank)], node.output[0])
        r.bounds = proven if fits_i32(proven) else None
    im.out(node, im.wrap(r, node.output[0]) if NARROW_INTS.get(dt) is not None else r)


# reshapes an index input may take on its way to a Gather: between [S] and [1, S] they are the
# same ids (graph.gather takes either), so they are free aliases
INDEX_VIEWS = ("Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity")


def index_view(x: Val | np.ndarray, shape: tuple[int, ...] | None) -> Val | None:
    """Token ids x ([S] or [1, S]) seen at `shape` ([S] or [1, S] again): the same ids (a
    `graph.gather` takes either), so an alias, no reshape; None when x is not such ids."""
    ids = (
        isinstance(x, Val)
        and is_int(x.dtype)
        and len(x.shape) in (1, 2)
        and math.prod(x.shape) == x.shape[-1]  # [S] or [1, S]
        and shape is not None
        and (len(shape) == 1 or len(shape) == 2 and shape[0] == 1)
        and shape[-1] == x.shape[-1]
    )
    if not ids:
        return None
    assert isinstance(x, Val) and shape is not None
    return Val(x.ssa, tuple(shape), x.dtype, x.bounds)


def _index_view(fn: Lowering) -> Lowering:
    """`fn`, except on an index input: an alias of the same ids at the node's output shape."""

    def lower(im: _Importer, node: onnx.NodeProto, attrs: dict[str, object]) -> None:
        alias = index_view(im.get(node.input[0]), im.static_shapes.get(node.output[0]))
        if alias is None:
            fn(im, node, attrs)
            return
        im.out(node, alias)

    return lower


for _view in INDEX_VIEWS:
    _LOWERINGS[_view] = _index_view(_LOWERINGS[_view])


# -- entry points ---------------------------------------------------------------------------------


def import_model(
    model: onnx.ModelProto,
    constants: dict[str, np.ndarray] | None = None,
    *,
    validated: bool = False,
    payloads: Payloads | None = None,
) -> ModuleOp:
    """The graph-level module of `model`; `constants` binds graph inputs to compile-time values
    (e.g. integer shape or axes inputs of a static-shape model). A proto not read by `load_onnx`
    (`validated` False) is validated here, and may hold no external data (it has no directory).
    `payloads`: the initializers' raw data as `read_onnx` checked them (read again otherwise)."""
    if not isinstance(model, onnx.ModelProto):
        raise OnnxImportError("onnx import: not an ONNX ModelProto")
    if not validated:
        inline_external_data(model, None)
        payloads = validate_model(model, "model")
    module = _Importer(model, dict(constants or {}), payloads or {}).run()
    try:
        module.verify()
    except DiagnosticException as e:
        raise OnnxImportError(f"onnx import: the imported module does not verify:\n{e}") from None
    RaiseGraphOpsPass().apply(Context(), module)  # GeLU, SiLU, rsqrt: raised on graph IR
    return module


def import_file(path: str | Path) -> ModuleOp:
    """`import_model` of the ONNX file at `path`."""
    model, payloads = read_onnx(path)
    return import_model(model, validated=True, payloads=payloads)


__all__ = ["OnnxImportError", "collapsed", "import_file", "import_model", "load_onnx", "opset_of"]
