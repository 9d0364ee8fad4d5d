"""ipu-compiler: graph -> plan -> tilemap -> exchange -> tasm -> .ipuexe -> emulator."""

from ipu.version import __version__

__all__ = ["__version__"]


def __getattr__(name: str):
    """`ipu.compile` / `ipu.run` / `ipu.check` load the compiler lazily (a bare `import ipu` stays light)."""
    if name in ("compile", "run", "check", "parse", "Compiled", "Report", "ApiError"):
        from ipu import api

        return getattr(api, name)
    raise AttributeError(f"module 'ipu' has no attribute {name!r}")
