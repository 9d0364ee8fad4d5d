"""Record the framework releases an export script ran with, beside the fixtures it wrote
(`versions.json`), so a fixture says which torch / transformers / jax produced it."""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path


def record(out: Path, packages: tuple[str, ...]) -> None:
    """Write `out/versions.json`: each installed package's version (absent ones omitted)."""
    found = {}
    for p in packages:
        try:
            found[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            continue
    found["python"] = platform.python_version()
    (out / "versions.json").write_text(json.dumps(found, indent=2, sort_keys=True) + "\n")
