"""ipu-compiler: graph -> plan -> tilemap -> exchange -> tasm -> .ipuexe -> emulator."""

__version__ = "0.1.0"
