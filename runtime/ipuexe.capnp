# The .ipuexe package format: one Cap'n Proto message (unpacked, one file).
# Mirrors runtime/package.py (the in-memory model); bump SCHEMA_VERSION there on any change.
@0xf494e5f9c70f5e15;

struct Table {
  # An int64 table: `rows` x `columns` little-endian int64 values, row-major, in `data`.
  rows @0 :UInt64;
  columns @1 :UInt32;
  data @2 :Data;
}

struct Binding {
  name @0 :Text;
  dtype @1 :UInt8;               # runtime.isa.DType
  shape @2 :List(Int64);
  slices @3 :Table;              # package.SLICE_COLUMNS
  hasData @4 :Bool;
  data @5 :Data;                 # logical row-major bytes (weights only)
}

struct Program {
  firstTile @0 :UInt32;
  tileCount @1 :UInt32;
  codeAddress @2 :UInt64;
  code @3 :Data;                 # runtime.isa instructions
}

struct Phase {
  index @0 :UInt32;
  lowerBound @1 :Int64;
  horizon @2 :Int64;
  scheduler @3 :Text;
  transfers @4 :Table;           # package.TRANSFER_COLUMNS
}

struct Checkpoint {
  index @0 :UInt32;
  name @1 :Text;
  operation @2 :Int64;
  binding @3 :Binding;
  aspect @4 :Text;               # "value" (the op's result) or e.g. "scores" (attention)
}

struct Metric {
  name @0 :Text;
  value @1 :Int64;
}

struct Package {
  schemaVersion @0 :UInt32;
  compilerVersion @1 :Text;
  target @2 :Text;
  tiles @3 :UInt32;
  memoryBase @4 :UInt64;
  memorySize @5 :UInt64;
  programs @6 :List(Program);
  phases @7 :List(Phase);
  weights @8 :List(Binding);
  inputs @9 :List(Binding);
  outputs @10 :List(Binding);
  checkpoints @11 :List(Checkpoint);
  metrics @12 :List(Metric);
  contentDigest @13 :UInt64;     # SHA-256 (first 8 bytes, little-endian) of the whole message
                                 # with this field's 8 bytes zeroed: any damaged byte is caught
}
