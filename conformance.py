"""Run the ONNX backend node tests (`onnx/backend/test/data/node`) through import, compile and
emulation, comparing with the outputs each test ships. Shared by the conformance test suite and
`bench/onnx_conformance.py`.

Integer inputs (shapes, axes) of a node test are bound as compile-time constants where the
importer needs them so: the compiler is static-shape, and those tensors only parameterize the
operator. Float inputs stay inputs, unless the importer needs one as a constant too (Resize's
scales and roi): then every input but the first is bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.utils.exceptions import DiagnosticException

from ipu.frontends.onnx_import import OnnxImportError, import_model

EXPECTED_FAILURES = Path(__file__).resolve().parent / "test" / "onnx_expected_failures.txt"


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str  # "pass" | "unsupported" (a diagnostic) | "mismatch" (a wrong result) | "error" (a crash)
    detail: str = ""

    @property
    def supported(self) -> bool:
        return self.status != "unsupported"

    def line(self) -> str:
        """One line of the expected-failure file: the test name and why it fails."""
        return f"{self.name}  {self.status}: {self.detail}"


def node_test_root() -> Path:
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"


def node_tests() -> list[str]:
    return sorted(p.name for p in node_test_root().iterdir() if (p / "model.onnx").is_file())


def read_expected_failures(path: Path = EXPECTED_FAILURES) -> dict[str, str]:
    """Test name -> recorded reason (blank lines and `#` comments skipped)."""
    out = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            out[name] = reason.strip()
    return out


def _load_data(test: Path, model: onnx.ModelProto) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    data = test / "test_data_set_0"
    init = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    inputs: dict[str, np.ndarray] = {}
    for k, name in enumerate(names):
        f = data / f"input_{k}.pb"
        if f.is_file():
            inputs[name] = numpy_helper.to_array(onnx.load_tensor(str(f)))
    outputs = [numpy_helper.to_array(onnx.load_tensor(str(f))) for f in sorted(data.glob("output_*.pb"))]
    return inputs, outputs


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    msg = next((t for t in text if t.strip() and not t.startswith("onnx import:")), text[0] if text else "")
    if text and text[0].startswith("onnx import:"):
        msg = text[0].removeprefix("onnx import: ")
    return " ".join(msg.split())[:200]


def run_node_test(name: str, target: str = "sim16") -> Outcome:
    """Import, compile and emulate one node test; compare every output with the shipped one."""
    from ipu import api
    from ipu.golden.compare import compare, tolerance

    test = node_test_root() / name
    model = onnx.load(str(test / "model.onnx"))
    try:
        inputs, expected = _load_data(test, model)
    except Exception as e:  # noqa: BLE001 -- e.g. sequence or optional test data
        return Outcome(name, "unsupported", f"test data not readable as tensors ({type(e).__name__})")
    # integer and bool inputs are runtime inputs like the floats; where the importer needs one as
    # a constant (a shape, axes, a Gather's indices into a computed tensor) the integer inputs are
    # bound as compile-time constants instead, and failing that every input but the data
    consts = {k: v for k, v in inputs.items() if not np.issubdtype(v.dtype, np.floating)}
    try:
        try:
            module, feeds = import_model(model), inputs
        except OnnxImportError as first:
            # the integer inputs bound, then (a float operand the importer needs as a constant:
            # Resize's scales and roi) every input but the first, the data
            data = model.graph.input[0].name
            bindings = [consts, {k: v for k, v in inputs.items() if k != data}]
            for bound in (b for b in bindings if b):
                try:
                    module = import_model(model, bound)
                except OnnxImportError:
                    continue
                feeds = {k: v for k, v in inputs.items() if k not in bound}
                break
            else:
                raise first from None  # the runtime-input diagnostic says what is missing
        compiled = api.compile(module, target)
    except (OnnxImportError, api.ApiError, DiagnosticException) as e:
        return Outcome(name, "unsupported", _first_line(e))
    except Exception as e:  # noqa: BLE001 -- an internal error is recorded, not hidden
        return Outcome(name, "error", f"compile: {type(e).__name__}: {_first_line(e)}")
    try:
        report = api.run(compiled.package, feeds, target=compiled.target)
    except Exception as e:  # noqa: BLE001
        return Outcome(name, "error", f"run: {type(e).__name__}: {_first_line(e)}")
    out_names = [o.name for o in model.graph.output]
    outputs = api.host_outputs(compiled.reference, report.outputs)
    for oname, want in zip(out_names, expected, strict=True):
        got = outputs[oname]
        if got.dtype != want.dtype:
            return Outcome(name, "mismatch", f"output {oname}: dtype {got.dtype}, expected {want.dtype}")
        if got.shape != want.shape:
            return Outcome(name, "mismatch", f"output {oname}: shape {got.shape}, expected {want.shape}")
        # special values must match exactly (same NaN and infinity positions); the rest within tolerance
        g64, w64 = got.astype(np.float64), want.astype(np.float64)
        special = ~np.isfinite(w64)
        if not np.array_equal(g64[special], w64[special], equal_nan=True):
            return Outcome(name, "mismatch", f"output {oname}: NaN/infinity entries differ")
        narrowed = compiled.reference.attributes.get("ipu.narrowed") if compiled.reference is not None else None
        computed = np.float32 if narrowed is not None and oname in narrowed.data else got.dtype  # type: ignore[union-attr]
        atol, rtol = tolerance(computed)
        c = compare(g64[~special], w64[~special], int((~special).sum()), atol, rtol)
        if not c.passed:
            return Outcome(name, "mismatch", f"output {oname}: {c.reason}")
    return Outcome(name, "pass")


__all__ = ["EXPECTED_FAILURES", "Outcome", "node_test_root", "node_tests", "read_expected_failures", "run_node_test"]
