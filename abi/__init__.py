"""The ABI every layer shares: instruction encoding, the kernel table, table schemas and
transfer-family expansion (a leaf: imports no dialect, pass or runtime module)."""
