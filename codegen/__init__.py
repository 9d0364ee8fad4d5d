"""tasm -> tile images -> `.ipuexe` packages, and disassembly back to tasm."""
