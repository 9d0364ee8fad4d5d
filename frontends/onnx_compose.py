"""Operators spelled with operators the importer already lowers: a `Composer` collects the ONNX
nodes (and their constant inputs) that compute one node's output, under fresh names prefixed by
that output, and lowers them through `Importer.lower_nodes` (as a function body is). Einsum,
OneHot and the scatters are written this way (`onnx_einsum`, `onnx_onehot`, `onnx_scatter`).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from ipu.frontends.onnx_import import _Importer


class Composer:
    """The nodes computing `node`'s first output, built in order."""

    def __init__(self, node: onnx.NodeProto) -> None:
        self.output = node.output[0]
        self.nodes: list[onnx.NodeProto] = []
        self.consts: dict[str, np.ndarray] = {}
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"{self.output}.{self.count}"

    def const(self, value: np.ndarray) -> str:
        name = self.fresh()
        self.consts[name] = np.asarray(value)
        return name

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = self.fresh()
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{out}:{op}", **attrs))
        return out

    def lower(self, im: _Importer, result: str) -> None:
        """Lower the nodes with `result` as the composed node's output (the last node writes it
        when it computes it; otherwise an Identity does)."""
        if self.nodes and self.nodes[-1].output[0] == result:
            self.nodes[-1].output[0] = self.output
        else:
            self.nodes.append(helper.make_node("Identity", [result], [self.output], name=f"{self.output}:Identity"))
        for n in self.nodes:  # a refusal (and the ops' provenance) names the composed node first
            n.name = f"{im.node_label} > {n.op_type}"
        im.lower_nodes(self.nodes, self.consts)


__all__ = ["Composer"]
