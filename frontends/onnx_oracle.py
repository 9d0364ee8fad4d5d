"""The numerical oracle for imported ONNX models: the ONNX file itself, run by onnxruntime (what
users trust) when it is installed, else by `onnx.reference.ReferenceEvaluator`. It never sees the
importer's graph IR or the compiled package."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import onnx

Oracle = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
Backend = Literal["auto", "onnxruntime", "reference"]
BACKENDS: tuple[str, ...] = ("auto", "onnxruntime", "reference")


def onnxruntime_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


class OracleError(ValueError):
    """The oracle's runtime refused the model or its inputs (a model our checks let through)."""


def _refusal(backend: str, what: str, e: Exception) -> OracleError:
    text = " ".join(str(e).split())[:400] or type(e).__name__
    return OracleError(f"{backend}, the oracle, refuses the {what}: {text}")


@dataclass
class OnnxOracle:
    """Inputs (keyed by ONNX input name) -> outputs (keyed by ONNX output name); `backend` says
    which runtime computes them."""

    backend: str
    _run: Callable[[dict[str, np.ndarray]], list[np.ndarray]]
    dtypes: dict[str, np.dtype]
    names: list[str]

    def __call__(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        feed = {n: np.asarray(inputs[n]).astype(dt) for n, dt in self.dtypes.items()}
        try:
            values = self._run(feed)
        except Exception as e:  # noqa: BLE001 -- onnxruntime raises its own kinds
            raise _refusal(self.backend, "inputs", e) from None
        return dict(zip(self.names, (np.asarray(v) for v in values), strict=True))


def onnx_oracle(model: str | Path | onnx.ModelProto, backend: Backend = "auto") -> OnnxOracle:
    """The oracle of `model`: onnxruntime for `auto` when it is installed, else onnx.reference."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown ONNX oracle backend {backend!r} (known: {', '.join(BACKENDS)})")
    if isinstance(model, onnx.ModelProto):
        proto = model
    else:
        from ipu.frontends.onnx_load import load_onnx

        proto = load_onnx(model)  # its external data read from inside its directory only
    init = {i.name for i in proto.graph.initializer}
    feeds = [i for i in proto.graph.input if i.name not in init]
    dtypes = {i.name: np.dtype(onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)) for i in feeds}
    names = [o.name for o in proto.graph.output]
    if backend == "onnxruntime" or (backend == "auto" and onnxruntime_available()):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1  # deterministic and polite on a shared machine
        opts.log_severity_level = 3
        # from the file when there is one (its external data were checked to lie beside it): the
        # serialized proto would be a second copy of every weight, and is refused past 2 GiB
        source = str(model) if not isinstance(model, onnx.ModelProto) else proto.SerializeToString()
        try:
            session = ort.InferenceSession(source, opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 -- onnxruntime raises its own kinds
            raise _refusal("onnxruntime", "model", e) from None
        return OnnxOracle("onnxruntime", lambda feed: session.run(names, feed), dtypes, names)
    from onnx.reference import ReferenceEvaluator

    try:
        ref = ReferenceEvaluator(proto)
    except Exception as e:  # noqa: BLE001 -- the reference evaluator raises many kinds
        raise _refusal("onnx.reference", "model", e) from None
    return OnnxOracle("onnx.reference", lambda feed: ref.run(None, feed), dtypes, names)


__all__ = ["BACKENDS", "OnnxOracle", "Oracle", "OracleError", "onnx_oracle", "onnxruntime_available"]
