"""The ABI every layer shares: table schemas, transfer-family expansion, the kernel table (a leaf)."""
