"""Exchange -> tasm: `lower-to-tasm`, the tile programs and tables the package encodes."""
