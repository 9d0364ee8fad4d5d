"""The machine ABI shared by dialects, transforms, codegen and runtime (a leaf: imports no pass or dialect)."""
