"""Package reading and validation, the emulator, checkpoints (imports only target + format)."""
