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
  perm @6 :List(UInt8);          # an input rearranged on the host: slices index array.transpose(perm)
  pads @7 :List(UInt32);         # ... padded with zeros: each axis's low pads, then the high ones
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
  tripStride @5 :UInt32;         # source bytes added each trip of the enclosing loop (0: none)
  trips @6 :UInt32;              # that loop's trips (0 without a trip stride)
  tripBegin @7 :UInt32;          # the transfer families read by the trip: [tripBegin, tripEnd)
  tripEnd @8 :UInt32;
}

struct Checkpoint {
  index @0 :UInt32;
  name @1 :Text;
  value @2 :Text;                # the graph value's stable name (its SSA name)
  binding @3 :Binding;
  aspect @4 :Text;               # "value" (the op's result) or e.g. "scores" (attention)
}

struct Metric {
  name @0 :Text;
  value @1 :Int64;
}

struct HostStep {
  # One host-exchange phase of a host call (a host/device rendezvous), or the programs' run.
  kind @0 :Text;                 # "write" (host -> tiles), "read" (tiles -> host) or "execute"
  binding @1 :Text;              # the weight, input or output moved; "" for execute
  bytes @2 :UInt64;              # over the host link: the binding's logical bytes (0 for execute)
  cycles @3 :UInt64;             # host cycles: target host_transfer_cycles(bytes) (0 for execute:
                                 # the programs' cycles are device cycles, measured by the emulator)
}

struct HostCall {
  # A host entry point, its steps in order. "initialize": a write per weight (package order);
  # "run": a write per input (HOST_IN order), one execute, a read per output (HOST_OUT order).
  name @0 :Text;
  steps @1 :List(HostStep);
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
  hostCalls @14 :List(HostCall); # "initialize", then "run"
  tileMapping @15 :TileMapping;  # which physical tile runs each logical tile (route delays)
}

struct TileMapping {
  # target.mapping.TileMapping: within each whole block of `block` logical tiles, interleave by
  # `width`; block 1 is the identity.
  block @0 :UInt32;
  width @1 :UInt32;
}
