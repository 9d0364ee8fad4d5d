"""One configuration, end to end: build the model, compile it with the configuration's target and
options, emulate, check against the reference, and return a result row. Never raises: a failure is
a row with status "failed" and the error, so one bad configuration cannot stop a sweep."""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import Any


def failed_row(config: dict[str, Any], error: str, seconds: float | None = None) -> dict[str, Any]:
    """A failed configuration's row."""
    return row(config, "failed", {}, error, seconds)


def row(config: dict[str, Any], status: str, metrics: dict[str, Any], error: str | None, seconds: float | None):
    """A result row: the configuration's identity, its status, recorded metrics and error."""
    keep = ("key", "model", "kind", "source", "params", "target", "options", "seed")
    return {k: config[k] for k in keep} | {
        "status": status,
        "metrics": metrics,
        "error": error,
        "worker_seconds": None if seconds is None else round(seconds, 3),
    }


def _describe(stage: str, e: BaseException) -> str:
    """`stage: Type: message`, with an internal error's innermost frame (a compiler bug, not a user error)."""
    from xdsl.utils.exceptions import DiagnosticException

    from ipu.abi.package import PackageError
    from ipu.golden.evaluator import GoldenError
    from ipu.runtime.emulator import EmulatorError
    from ipu.target import TargetError

    msg = f"{stage}: {type(e).__name__}: {str(e).strip()}"
    if not isinstance(e, ValueError | TargetError | PackageError | DiagnosticException | EmulatorError | GoldenError):
        tb = traceback.extract_tb(e.__traceback__)
        if tb:
            msg += f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})"
    return msg


def run_config(config: dict[str, Any]) -> dict[str, Any]:
    """Compile and emulate one configuration; its row (status ok, or failed with the error)."""
    from ipu import api
    from ipu.sweep.metrics import compile_metrics, run_metrics, wants
    from ipu.sweep.models import generate

    t0 = time.perf_counter()
    record = config["record"]
    metrics: dict[str, Any] = {}
    stage = "model"
    try:
        source = generate(config["source"], config["params"]) if config["kind"] == "example" else Path(config["path"])
        stage = "compile"
        compiled = api.compile(source, config["target"], options=config["options"])
        metrics |= compile_metrics(compiled)
        stage = "emulate"
        t1 = time.perf_counter()
        ref = compiled.reference if wants(record, "numerical") else None
        inputs = api.default_inputs(compiled.package, compiled.reference, config["seed"])
        report = api.run(compiled.package, inputs, target=compiled.target)
        stage = "check"
        checks = api.check(compiled.package, report.result, ref, inputs) if ref is not None else None
        metrics |= run_metrics(report, checks)
        metrics["emulate_seconds"] = round(time.perf_counter() - t1, 4)
    except Exception as e:  # noqa: BLE001 - isolate every failure to its configuration
        return failed_row(config, _describe(stage, e), time.perf_counter() - t0)
    kept = {k: v for k, v in metrics.items() if wants(record, k)}
    return row(config, "ok", kept, None, time.perf_counter() - t0)


__all__ = ["failed_row", "row", "run_config"]
