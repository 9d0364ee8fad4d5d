"""Plan -> tilemap, and the passes on mapped functions: `map-tiles`, `drop-checkpoints`,
`screen-tiles` (tile mappings screened by exchange load), `select-finalist`."""
