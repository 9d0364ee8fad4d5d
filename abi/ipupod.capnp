# The .ipupod system package: a model pipelined over the chips of a system. One Cap'n Proto
# message after an 8-byte magic ("IPUPOD01") and the SHA-256 of the message; each stage holds
# one chip's whole .ipuexe (its own content digest inside) and its SHA-256. Mirrors abi/pod.py.
@0xb3c1f0a5d2e47a91;

struct Route {
  # A stage's input or output binding, by name, and what feeds it or what it feeds.
  stage @0 :UInt32;
  binding @1 :Text;
}

struct Transfer {
  # A value one stage hands to another over the IPU-Links.
  src @0 :Route;
  dst @1 :Route;
  srcChip @2 :UInt32;
  dstChip @3 :UInt32;
  bytes @4 :UInt64;
  rows @5 :Data;                 # k x 5 little-endian int64 (abi/link_rows.LINK_ROW); empty within a chip
}

struct Stage {
  index @0 :UInt32;
  chip @1 :UInt32;
  function @2 :Text;
  package @3 :Data;              # the chip's .ipuexe bytes
  sha256 @4 :Data;               # of `package`
}

struct ModelIo {
  # A model input written by the host (to every stage reading it), or a model output read back.
  name @0 :Text;
  routes @1 :List(Route);
}

struct Collective {
  # An all-reduce: member i's partial is output `inputs[i]`; its sum feeds the stage inputs `outputs[i]`.
  kind @0 :Text;
  chips @1 :List(UInt32);
  inputs @2 :List(Route);
  outputs @3 :List(List(Route));
  bytes @4 :UInt64;                # of one member's value
}

struct Pod {
  schemaVersion @0 :UInt32;
  compilerVersion @1 :Text;
  system @2 :Text;
  microbatches @3 :UInt32;
  stages @4 :List(Stage);
  transfers @5 :List(Transfer);
  inputs @6 :List(ModelIo);
  outputs @7 :List(ModelIo);
  collectives @8 :List(Collective);
}
