"""ONNX function bodies: an operator the importer has no lowering for (or whose lowering refuses
a case: an Attention with a softcap, a KV cache or a distinct value head size) but whose schema
defines it as a function of other operators is expanded into that body, node by node, and each
node is lowered in turn. A pattern the importer does not recognise then costs speed (the
operator's primitive ops), never an import error.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import FunctionProto, NodeProto, TypeProto, helper

MAX_DEPTH = 4  # functions whose bodies use functions, expanded at most this deep


def function_body(node: NodeProto, opset: int, input_types: list[TypeProto | None]) -> FunctionProto | None:
    """The schema's function for `node` at `opset` (context-dependent ones given the inputs'
    types), or None when the operator has none."""
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, domain=node.domain)
    except Exception:  # noqa: BLE001 -- an unknown operator has no body
        return None
    versions = [v for v in schema.function_opset_versions if v <= opset]
    if versions:
        fp = FunctionProto()
        fp.ParseFromString(schema.get_function_with_opset_version(max(versions)))
        return fp
    versions = [v for v in schema.context_dependent_function_opset_versions if v <= opset]
    if versions and all(t is not None for t in input_types):
        try:
            raw = schema.get_context_dependent_function_with_opset_version(
                max(versions), node.SerializeToString(), [t.SerializeToString() for t in input_types]
            )
        except Exception:  # noqa: BLE001 -- the schema could not build a body for these inputs
            return None
        fp = FunctionProto()
        fp.ParseFromString(raw)
        return fp if fp.node else None
    return None


def tensor_type(dtype: type, shape: tuple[int, ...]) -> TypeProto:
    return helper.make_tensor_type_proto(helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(shape))


def expand(node: NodeProto, body: FunctionProto, prefix: str) -> list[NodeProto] | None:
    """`body`'s nodes with the function's inputs and outputs renamed to the node's, its other
    values prefixed, and attribute references resolved from the node (None when a body node
    carries a subgraph, which is not expanded)."""
    names = {f: (node.input[i] if i < len(node.input) else "") for i, f in enumerate(body.input)}
    names.update({f: node.output[i] for i, f in enumerate(body.output) if i < len(node.output) and node.output[i]})
    given = {a.name: a for a in node.attribute}
    defaults = {a.name: a for a in body.attribute_proto}

    def rename(n: str) -> str:
        return names.get(n, prefix + n if n else "")

    out = []
    for inner in body.node:
        n = NodeProto()
        n.op_type, n.domain = inner.op_type, inner.domain
        n.name = prefix + (inner.name or inner.op_type)
        n.input.extend(rename(i) for i in inner.input)
        n.output.extend(rename(o) for o in inner.output)
        for a in inner.attribute:
            if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                return None
            if a.ref_attr_name:
                src = given.get(a.ref_attr_name) or defaults.get(a.ref_attr_name)
                if src is None:
                    continue  # an optional attribute the node leaves to its default
                c = onnx.AttributeProto()
                c.CopyFrom(src)
                c.name = a.name
                n.attribute.append(c)
            else:
                n.attribute.append(a)
        out.append(n)
    return out


__all__ = ["MAX_DEPTH", "expand", "function_body", "tensor_type"]
