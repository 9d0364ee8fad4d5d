"""The emulator's run budget, apart from the emulator so `ipu.api` names it without importing the
emulator (and numba) until a run needs it."""

DEFAULT_MAX_CYCLES = 1 << 30
"""The run's default budget of device cycles (0.8 s of device time on mk2 at 1.33 GHz; the
largest example, attention_long, runs 12M)."""

__all__ = ["DEFAULT_MAX_CYCLES"]
