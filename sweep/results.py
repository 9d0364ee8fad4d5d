"""The sweep's table: rows keyed by configuration, kept as JSON (the record a sweep resumes from)
and CSV (one flat line per configuration), both rewritten atomically after every result."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from ipu.atomic import write_text
from ipu.sweep.metrics import GROUPS

FINISHED = ("ok", "failed")
METRIC_ORDER = [m for g in GROUPS.values() for m in g if m != "seconds_*"]


def atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` via a temporary file in the same directory, so readers never see half a file."""
    write_text(path, text)


def _cell(v: Any) -> Any:
    return "" if v is None else json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else v


class Results:
    """The rows of one output directory: `results.json` and `results.csv`."""

    def __init__(self, out_dir: str | Path, name: str = "sweep"):
        self.dir = Path(out_dir)
        self.json_path = self.dir / "results.json"
        self.csv_path = self.dir / "results.csv"
        self.name = name
        self.rows: dict[str, dict[str, Any]] = {}

    def load(self) -> Results:
        """Read the rows an earlier run left (nothing when there is no results.json)."""
        if self.json_path.is_file():
            try:
                doc = json.loads(self.json_path.read_text())
                self.rows = {r["key"]: r for r in doc["results"]}
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"cannot resume from {self.json_path}: {e}") from None
        return self

    def finished(self, key: str, rerun_failed: bool = False) -> bool:
        """Whether a configuration already has a final row (a failed one counts unless `rerun_failed`)."""
        status = self.rows.get(key, {}).get("status")
        return status == "ok" or (status == "failed" and not rerun_failed)

    def add(self, row: dict[str, Any], order: list[str] | None = None) -> None:
        """Record a row and rewrite both files; `order` lists keys to put first (the spec's order)."""
        self.rows[row["key"]] = row
        if order:
            first = {k: self.rows[k] for k in order if k in self.rows}
            self.rows = first | {k: r for k, r in self.rows.items() if k not in first}
        self.save()

    def columns(self) -> list[str]:
        """CSV columns: identity, model parameters, options, metrics (fixed order, then per-phase seconds), error."""
        rows = list(self.rows.values())
        params = list(dict.fromkeys(k for r in rows for k in r["params"]))
        options = list(dict.fromkeys(k for r in rows for k in r["options"]))
        present = {k for r in rows for k in r["metrics"]}
        metrics = [m for m in METRIC_ORDER if m in present]
        metrics += list(dict.fromkeys(k for r in rows for k in r["metrics"] if k not in metrics))  # phases in order
        return [
            "key",
            "status",
            "model",
            "source",
            "target",
            *params,
            *options,
            "seed",
            *metrics,
            "worker_seconds",
            "error",
        ]

    def flat(self, row: dict[str, Any]) -> dict[str, Any]:
        """A row as one flat record (params, options and metrics as top-level columns)."""
        base = {k: v for k, v in row.items() if k not in ("params", "options", "metrics", "kind")}
        return row["params"] | row["options"] | row["metrics"] | base

    def save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)  # the sweep's output is this directory
        doc = {"sweep": self.name, "results": list(self.rows.values())}
        atomic_write(self.json_path, json.dumps(doc, indent=1, sort_keys=False) + "\n")
        buf = io.StringIO()
        w = csv.DictWriter(buf, self.columns(), extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in self.rows.values():
            w.writerow({k: _cell(v) for k, v in self.flat(r).items()})
        atomic_write(self.csv_path, buf.getvalue())


__all__ = ["FINISHED", "Results", "atomic_write"]
