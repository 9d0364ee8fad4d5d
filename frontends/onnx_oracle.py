"""The numerical oracle for imported ONNX models: `onnx.reference.ReferenceEvaluator` running
the ONNX file itself. It never sees the importer's graph IR or the compiled package."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx

Oracle = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]


def onnx_oracle(model: str | Path | onnx.ModelProto) -> Oracle:
    """A function from inputs (keyed by ONNX input name) to outputs (keyed by ONNX output name)."""
    from onnx.reference import ReferenceEvaluator

    proto = model if isinstance(model, onnx.ModelProto) else onnx.load(str(model))
    session = ReferenceEvaluator(proto)
    init = {i.name for i in proto.graph.initializer}
    feeds = [i for i in proto.graph.input if i.name not in init]
    dtypes = {i.name: onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type) for i in feeds}
    names = [o.name for o in proto.graph.output]

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        feed = {n: np.asarray(inputs[n]).astype(dt) for n, dt in dtypes.items()}
        return dict(zip(names, session.run(None, feed), strict=True))

    return run


__all__ = ["Oracle", "onnx_oracle"]
