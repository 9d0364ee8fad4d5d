"""Reading an ONNX model: every byte it refers to comes from inside the model's directory, and
every invalidity `onnx.checker` or a size check can see is refused before anything runs.

A tensor may keep its data in an external file (`data_location = EXTERNAL`), whichever node or
attribute carries it: a graph initializer, a sparse initializer, a `Constant` or
`ConstantOfShape` value, a tensor inside a subgraph or a function. `load_onnx` reads each one
itself, resolved against the model's own directory: an absolute location, one that leaves the
directory (`..`, a symbolic link pointing out), a missing or non-regular file, or an offset and
length outside the file is refused, naming the tensor. The bytes are then held inline, so
neither the importer nor the oracle (onnxruntime) opens any file the model names. A model given
as a proto has no directory: external data there is refused.

`validate_model` refuses what onnxruntime would (so its `Fail` never surfaces as ours): the
checker's findings (SSA form, duplicate initializers, an `ir_version` or opset this onnx does
not know, a missing graph), strict shape inference's (an attribute out of range, types or shapes
that do not agree, as onnxruntime's loader checks them), tensors whose data does not match
their dims, negative or oversized dims, and an initializer contradicting the shape its graph
input declares.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.utils.exceptions import DiagnosticException

MAX_TENSOR_BYTES = 1 << 31
"""Largest tensor a model may hold (protobuf's own limit on a serialized model: 2 GiB)."""


class OnnxImportError(DiagnosticException):
    """An ONNX model (or one node of it) the importer cannot express in the `graph` dialect."""


def _graph_tensors(graph: onnx.GraphProto) -> Iterator[tuple[str, onnx.TensorProto]]:
    """(where, tensor) for every tensor a graph holds, its subgraphs' included."""
    for t in graph.initializer:
        yield f"initializer '{t.name}'", t
    for s in graph.sparse_initializer:
        yield f"sparse initializer '{s.values.name}'", s.values
        yield f"sparse initializer '{s.values.name}' (indices)", s.indices
    for node in graph.node:
        yield from _node_tensors(node)


def _node_tensors(node: onnx.NodeProto) -> Iterator[tuple[str, onnx.TensorProto]]:
    label = f"node '{node.name or node.op_type}' ({node.op_type})"
    for a in node.attribute:
        where = f"{label} attribute '{a.name}'"
        if a.HasField("t"):
            yield where, a.t
        for t in a.tensors:
            yield where, t
        if a.HasField("sparse_tensor"):
            yield where, a.sparse_tensor.values
            yield where, a.sparse_tensor.indices
        for s in a.sparse_tensors:
            yield where, s.values
            yield where, s.indices
        if a.HasField("g"):
            yield from _graph_tensors(a.g)
        for sub in a.graphs:
            yield from _graph_tensors(sub)


def model_tensors(model: onnx.ModelProto) -> Iterator[tuple[str, onnx.TensorProto]]:
    """(where, tensor) for every tensor in `model`: its graph's and its functions' nodes'."""
    yield from _graph_tensors(model.graph)
    for f in model.functions:
        for node in f.node:
            yield from _node_tensors(node)


def _element_size(t: onnx.TensorProto) -> int | None:
    """Bytes per element of a fixed-size element type (None: strings, unknown types)."""
    if t.data_type in (onnx.TensorProto.STRING, onnx.TensorProto.UNDEFINED):
        return None
    try:
        dt = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
    except (KeyError, ValueError, TypeError):
        return None
    bits = {onnx.TensorProto.INT4: 4, onnx.TensorProto.UINT4: 4}.get(t.data_type)
    return dt.itemsize if bits is None else -bits  # negative: bits per element (packed)


def _payload_bytes(t: onnx.TensorProto, n: int, where: str) -> int | None:
    """The bytes `t`'s `n` elements need (None when the type has no fixed size)."""
    size = _element_size(t)
    if size is None:
        return None
    return n * size if size > 0 else (n * -size + 7) // 8


def _check_dims(t: onnx.TensorProto, where: str) -> int:
    """The element count of `t`'s dims, refusing negative ones and sizes over MAX_TENSOR_BYTES."""
    if any(d < 0 for d in t.dims):
        raise OnnxImportError(f"onnx import: {where}: negative dimension in {list(t.dims)}")
    n = math.prod(t.dims)
    need = _payload_bytes(t, n, where)
    if need is not None and need > MAX_TENSOR_BYTES:
        raise OnnxImportError(
            f"onnx import: {where}: dims {list(t.dims)} hold {need} bytes, more than {MAX_TENSOR_BYTES}"
        )
    return n


def _external_fields(t: onnx.TensorProto, where: str) -> tuple[str, int, int | None]:
    info = {e.key: e.value for e in t.external_data}
    location = info.get("location", "")
    if not location:
        raise OnnxImportError(f"onnx import: {where}: external data without a location")
    try:
        offset = int(info.get("offset", "0"))
        length = int(info["length"]) if "length" in info else None
    except ValueError:
        raise OnnxImportError(f"onnx import: {where}: external data offset or length is not an integer") from None
    if offset < 0 or (length is not None and length < 0):
        raise OnnxImportError(f"onnx import: {where}: negative external data offset or length")
    return location, offset, length


def _resolve(base: Path, location: str, where: str) -> Path:
    """`location` inside `base` (a regular file there), else a refusal naming both."""
    if os.path.isabs(location) or "\0" in location:
        raise OnnxImportError(f"onnx import: {where}: external data location '{location}' is not a relative path")
    root = base.resolve()
    path = (root / location).resolve()
    if path != root and root not in path.parents:
        raise OnnxImportError(
            f"onnx import: {where}: external data '{location}' lies outside the model's directory {base}"
        )
    try:
        st = os.stat(path)
    except OSError:
        raise OnnxImportError(f"onnx import: {where}: external data file '{location}' does not exist") from None
    if not stat.S_ISREG(st.st_mode):
        raise OnnxImportError(f"onnx import: {where}: external data '{location}' is not a regular file")
    return path


def inline_external_data(model: onnx.ModelProto, base: Path | None) -> None:
    """Read every external tensor of `model` from inside `base` and hold its bytes inline."""
    for where, t in model_tensors(model):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        if base is None:
            raise OnnxImportError(
                f"onnx import: {where} keeps its data in an external file; give the model as a file "
                "(its directory holds the data) rather than as a loaded proto"
            )
        n = _check_dims(t, where)
        location, offset, length = _external_fields(t, where)
        path = _resolve(base, location, where)
        size = path.stat().st_size
        need = _payload_bytes(t, n, where)
        if length is None:
            length = need if need is not None else size - offset
        if need is not None and length != need:
            raise OnnxImportError(
                f"onnx import: {where}: external data length {length} bytes, its dims {list(t.dims)} need {need}"
            )
        if offset + length > size:
            raise OnnxImportError(
                f"onnx import: {where}: external data '{location}' has {size} bytes, "
                f"the tensor reads {length} at offset {offset}"
            )
        with open(path, "rb") as f:
            f.seek(offset)
            t.raw_data = f.read(length)
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT


_TYPED_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


_DATA_TYPES = frozenset(onnx.TensorProto.DataType.values()) - {onnx.TensorProto.UNDEFINED}


def _check_payload(t: onnx.TensorProto, where: str) -> bytes | None:
    """A tensor's element type must be one ONNX defines, and its data hold what its dims say.
    Returns its raw data as read for the check (None: it has none)."""
    if t.data_type not in _DATA_TYPES:
        raise OnnxImportError(f"onnx import: {where}: unknown element type {t.data_type}")
    n = _check_dims(t, where)
    if t.HasField("raw_data"):
        raw = t.raw_data
        need = _payload_bytes(t, n, where)
        if need is not None and len(raw) != need:
            raise OnnxImportError(
                f"onnx import: {where}: raw data of {len(raw)} bytes, its dims {list(t.dims)} need {need}"
            )
        return raw
    held = [len(getattr(t, f)) for f in _TYPED_FIELDS if len(getattr(t, f))]
    if not held:
        return  # no data: an empty tensor, or a segment the checker speaks for
    per = 2 if t.data_type in (onnx.TensorProto.COMPLEX64, onnx.TensorProto.COMPLEX128) else 1
    packed = t.data_type in (onnx.TensorProto.INT4, onnx.TensorProto.UINT4)
    want = (n + 1) // 2 if packed else n * per
    if held[0] != want:
        raise OnnxImportError(f"onnx import: {where}: holds {held[0]} values, its dims {list(t.dims)} need {want}")
    return None


Payloads = dict[str, bytes]
"""The raw data of a model's graph initializers, by name, as `validate_model` read them to check
them. Each read of a proto's bytes field is a copy (GPT-2 small: 500 MB a read), so the importer
takes these (`initializer_array`) rather than reading every weight again."""

_NATIVE_DTYPES = {
    onnx.TensorProto.FLOAT: "<f4",
    onnx.TensorProto.DOUBLE: "<f8",
    onnx.TensorProto.FLOAT16: "<f2",
    onnx.TensorProto.INT8: "i1",
    onnx.TensorProto.UINT8: "u1",
    onnx.TensorProto.INT16: "<i2",
    onnx.TensorProto.UINT16: "<u2",
    onnx.TensorProto.INT32: "<i4",
    onnx.TensorProto.UINT32: "<u4",
    onnx.TensorProto.INT64: "<i8",
    onnx.TensorProto.UINT64: "<u8",
    onnx.TensorProto.BOOL: "?",
}
"""Element types whose raw data (little-endian, as ONNX stores it) NumPy reads as it is."""


def initializer_array(t: onnx.TensorProto, payloads: Payloads) -> np.ndarray:
    """The values of graph initializer `t`: a read-only view of its checked raw data where
    `payloads` holds it and NumPy has its element type (no copy: the bytes stay the weight's
    one copy, up to the package), else `numpy_helper.to_array`'s."""
    raw, dt = payloads.get(t.name), _NATIVE_DTYPES.get(t.data_type)
    if raw is None or dt is None:
        return numpy_helper.to_array(t)
    return np.frombuffer(raw, dt).reshape(tuple(t.dims))


def _declared_shape(vi: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    dims = vi.type.tensor_type.shape.dim
    if not all(d.HasField("dim_value") for d in dims):
        return None
    return tuple(d.dim_value for d in dims)


SHAPE_TENSOR_LIMIT = 1 << 16
"""Initializers of more elements are weights, never the shape or index tensors shape inference
reads the values of."""


def skeleton_initializers(
    initializers: Sequence[onnx.TensorProto], inputs: Sequence[onnx.ValueInfoProto], keep: set[str] | None = None
) -> tuple[list[onnx.TensorProto], list[onnx.ValueInfoProto]]:
    """`initializers` for shape inference: (those of at most `SHAPE_TENSOR_LIMIT` elements or named
    in `keep`, a graph input of its type and shape for each other one not among `inputs`)."""
    small, shapes = [], []
    declared = {vi.name for vi in inputs}
    for t in initializers:
        if math.prod(t.dims) <= SHAPE_TENSOR_LIMIT or t.name in (keep or set()):
            small.append(t)
        elif t.name not in declared:
            shapes.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return small, shapes


def shape_skeleton(model: onnx.ModelProto, keep: set[str] | None = None) -> onnx.ModelProto:
    """`model` for shape inference: every initializer of more than `SHAPE_TENSOR_LIMIT` elements
    (but those named in `keep`) becomes a graph input of its type and shape. Inference reads only
    their types and shapes, and serializing the weights for it dominated a large model's import
    (GPT-2 small: 500 MB serialized for each of three inferences)."""
    g = model.graph
    small, shapes = skeleton_initializers(g.initializer, g.input, keep)
    if len(small) == len(g.initializer):
        return model
    graph = onnx.helper.make_graph(
        list(g.node), g.name, list(g.input) + shapes, list(g.output), small, value_info=list(g.value_info)
    )
    m = onnx.helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    m.functions.extend(model.functions)
    return m


def validate_model(model: onnx.ModelProto, name: str) -> Payloads:
    """Refuse what onnx.checker finds and what onnxruntime would refuse, naming the tensor or
    node; returns the graph initializers' raw data as read for the checks."""
    if not model.HasField("graph"):
        raise OnnxImportError(f"onnx import: {name}: the model has no graph")
    try:  # on the skeleton: the checker serializes what it checks (a copy of every weight, and
        # a refusal past 2 GiB), and the weights' payloads are checked below, tensor by tensor
        onnx.checker.check_model(shape_skeleton(model))
    except onnx.checker.ValidationError as e:
        text = " ".join(str(e).split())[:400] or type(e).__name__
        raise OnnxImportError(f"onnx import: {name}: invalid model: {text}") from None
    except ValueError as e:  # a model over 2 GiB
        raise OnnxImportError(f"onnx import: {name}: {e}") from None
    payloads: Payloads = {}
    for t in model.graph.initializer:
        raw = _check_payload(t, f"initializer '{t.name}'")
        if raw is not None:
            payloads[t.name] = raw
    for where, t in islice(model_tensors(model), len(model.graph.initializer), None):  # the rest: they come first
        _check_payload(t, where)
    inputs = {vi.name: vi for vi in model.graph.input}
    for t in model.graph.initializer:
        vi = inputs.get(t.name)
        want = _declared_shape(vi) if vi is not None else None
        if want is not None and tuple(t.dims) != want:
            raise OnnxImportError(
                f"onnx import: {name}: initializer '{t.name}' has shape {list(t.dims)}, its graph input "
                f"declares {list(want)}"
            )
        if vi is not None and vi.type.tensor_type.elem_type not in (0, t.data_type):
            raise OnnxImportError(
                f"onnx import: {name}: initializer '{t.name}' has element type "
                f"{onnx.TensorProto.DataType.Name(t.data_type)}, its graph input declares "
                f"{onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type)}"
            )
    try:  # what onnxruntime's loader checks too: attribute ranges, types and shapes per node
        onnx.shape_inference.infer_shapes(shape_skeleton(model), check_type=True, strict_mode=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, ValueError) as e:
        text = " ".join(str(e).split())[:400] or type(e).__name__
        raise OnnxImportError(f"onnx import: {name}: invalid model: {text}") from None
    return payloads


def load_onnx(path: str | Path) -> onnx.ModelProto:
    """The model in the file `path`, its external data read from inside its directory, validated."""
    return read_onnx(path)[0]


def read_onnx(path: str | Path) -> tuple[onnx.ModelProto, Payloads]:
    """`load_onnx`'s model with its initializers' raw data as validation read them (for
    `import_model`)."""
    p = Path(path)
    if not p.is_file():
        raise OnnxImportError(f"no such file: {p}")
    try:
        # the loader would open the files the model names: they are read by inline_external_data
        model = onnx.load(str(p), load_external_data=False)
    except Exception as e:  # noqa: BLE001 -- protobuf raises several kinds
        raise OnnxImportError(f"cannot read ONNX model {p}: {e}") from None
    inline_external_data(model, p.parent)
    return model, validate_model(model, str(p))


__all__ = [
    "MAX_TENSOR_BYTES",
    "OnnxImportError",
    "Payloads",
    "initializer_array",
    "inline_external_data",
    "load_onnx",
    "model_tensors",
    "read_onnx",
    "validate_model",
]
