"""Structured key=value events on stderr (`--log-level info`): one line per event, machine-readable,
as a run on hardware logs its phases."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

LOGGER = logging.getLogger("ipu")


def _fmt(v: object) -> str:
    s = str(v)
    return f'"{s}"' if isinstance(v, str) and (" " in s or not s) else s


def log_event(message: str, level: int = logging.INFO, **fields: object) -> None:
    if LOGGER.isEnabledFor(level):
        LOGGER.log(level, "%s %s", message, " ".join(f"{k}={_fmt(v)}" for k, v in fields.items()))


PHASE_HOOKS: list[Callable[[str], None]] = []  # called with each phase's name as it starts (progress displays)


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Log `package build phase finished phase=… elapsed_ms=…` around a build step."""
    for hook in PHASE_HOOKS:
        hook(name)
    t0 = time.perf_counter()
    ok = False
    try:
        yield
        ok = True
    finally:
        log_event(
            "package build phase finished",
            phase=name,
            elapsed_ms=int((time.perf_counter() - t0) * 1000),
            success=str(ok).lower(),
        )


@contextmanager
def quiet() -> Iterator[None]:
    """Silence events below WARNING (a pass run again on a scratch copy logs nothing twice)."""
    old = LOGGER.level
    LOGGER.setLevel(max(old, logging.WARNING))
    try:
        yield
    finally:
        LOGGER.setLevel(old)
