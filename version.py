"""The compiler's version, recorded in every package (a leaf module: imports nothing)."""

__version__ = "0.1.0"
