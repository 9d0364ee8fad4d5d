"""Sweep specifications: a TOML file naming models, a grid and/or list of pipeline options, and what
to record, expanded into one JSON-able configuration per (model, target, options).

    [sweep]                      # all optional
    name = "attention_layouts"
    target = "sim16"             # default target when the grid names none
    timeout = 300                # seconds per configuration
    seed = 0
    record = ["cycles", "memory", "time", "numerics"]   # groups or single metric names

    [[models]]
    example = "attention"        # a generator in ipu.sweep.models; lists in params are ranged over
    params = { heads = [4, 8], kv_heads = 2, seq = [64, 128] }

    [[models]]
    file = "../attention_small.mlir"   # relative to the spec file

    [grid]                       # each key a value or a list: the Cartesian product
    target = ["sim16"]
    finalists = [1, 2, 4]

    [[variants]]                 # optional explicit option sets, each merged over every grid point
    beam = 8

Option names are checked when a configuration compiles, so a bad option fails that configuration only.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ipu.sweep.metrics import resolve_record
from ipu.target import DEFAULT_TARGET


class SpecError(ValueError):
    """A sweep specification that cannot be read or expanded."""


@dataclass
class Spec:
    """A parsed specification: its settings and the configurations it expands to, in order."""

    name: str
    path: Path
    timeout: float | None
    record: list[str]
    configs: list[dict[str, Any]] = field(default_factory=list)


def config_key(model: dict[str, Any], target: str, options: dict[str, Any], seed: int) -> str:
    """A stable hash of what a configuration computes, so a resumed sweep can recognise it."""
    ident = {"model": model, "target": target, "options": options, "seed": seed}
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]


def _product(table: dict[str, Any]) -> list[dict[str, Any]]:
    """Every combination of a table whose list values are axes (scalars are fixed)."""
    keys = list(table)
    axes = [v if isinstance(v, list) else [v] for v in table.values()]
    for k, a in zip(keys, axes, strict=True):
        if not a:
            raise SpecError(f"empty list for {k!r}")
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*axes)]


def _models(entries: Any, base: Path) -> list[dict[str, Any]]:
    """Each `[[models]]` entry as one or more model identities: a file, or an example with params."""
    if not isinstance(entries, list) or not entries:
        raise SpecError("the spec names no models (add [[models]] with file = ... or example = ...)")
    out = []
    for i, m in enumerate(entries):
        if not isinstance(m, dict) or ("file" in m) == ("example" in m):
            raise SpecError(f"models[{i}] needs exactly one of file = ... or example = ...")
        extra = set(m) - {"file", "example", "params", "name"}
        if extra:
            raise SpecError(f"models[{i}]: unknown key(s) {', '.join(sorted(extra))}")
        if "file" in m:
            if "params" in m:
                raise SpecError(f"models[{i}]: params apply to examples only")
            path = (base / m["file"]).resolve()
            src = Path(m["file"]).as_posix()
            out.append(
                {"model": m.get("name", path.stem), "kind": "file", "source": src, "path": str(path), "params": {}}
            )
            continue
        params = m.get("params", {})
        if not isinstance(params, dict):
            raise SpecError(f"models[{i}]: params must be a table")
        for p in _product(params):
            name = m.get("name", m["example"])
            out.append({"model": name, "kind": "example", "source": m["example"], "path": None, "params": p})
    return out


def _option_sets(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The grid's product, each merged with every variant (or alone when there are none)."""
    grid = doc.get("grid", {})
    variants = doc.get("variants", [{}])
    if not isinstance(grid, dict):
        raise SpecError("[grid] must be a table")
    if not isinstance(variants, list) or not all(isinstance(v, dict) for v in variants):
        raise SpecError("variants must be an array of tables ([[variants]])")
    return [{**g, **v} for g in _product(grid) for v in variants or [{}]]


def load_spec(path: str | Path) -> Spec:
    """Read and expand a spec; SpecError names what is wrong."""
    p = Path(path)
    if not p.is_file():
        raise SpecError(f"no such spec: {p}")
    try:
        doc = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"cannot parse {p}: {e}") from None
    unknown = set(doc) - {"sweep", "models", "grid", "variants"}
    if unknown:
        raise SpecError(f"unknown section(s) {', '.join(sorted(unknown))} in {p}")
    settings = doc.get("sweep", {})
    unknown = set(settings) - {"name", "target", "timeout", "seed", "record"}
    if unknown:
        raise SpecError(f"[sweep]: unknown key(s) {', '.join(sorted(unknown))}")
    timeout = settings.get("timeout")
    if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
        raise SpecError(f"[sweep] timeout must be a positive number of seconds, got {timeout!r}")
    seed = settings.get("seed", 0)
    try:
        record = resolve_record(settings.get("record"))
    except ValueError as e:
        raise SpecError(str(e)) from None
    default_target = settings.get("target", DEFAULT_TARGET)
    spec = Spec(settings.get("name", p.stem), p, timeout, record)
    seen: set[str] = set()
    for model in _models(doc.get("models"), p.parent):
        for opts in _option_sets(doc):
            options = dict(opts)
            target = options.pop("target", default_target)
            key = config_key({k: model[k] for k in ("kind", "source", "params")}, target, options, seed)
            if key in seen:
                continue
            seen.add(key)
            spec.configs.append(
                {"key": key, **model, "target": target, "options": options, "seed": seed, "record": record}
            )
    return spec


__all__ = ["Spec", "SpecError", "config_key", "load_spec"]
