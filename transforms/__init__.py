"""The passes of the ladder, grouped by the level they work on (`graph/`, `plan/`, `tilemap/`,
`exchange/`, `tasm/`), and what every level uses (`levels`, `target_of`, `pipeline`). The
registry of every pass by name is `ipu.passes`."""
