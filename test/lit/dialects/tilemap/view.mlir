// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// A view: the input buffer's bytes seen as another block shape (from map-tiles on a reshape whose
// copy would rewrite them).

// CHECK-LABEL: func.func @main
func.func @main(%t: !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard>) {
  // CHECK: %r = tilemap.view %t : !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x32xf32, tiles = [0, 16], memory = standard>
  %r = tilemap.view %t : !tilemap.buffer<2x16xf32, tiles = [0, 16], memory = standard> -> !tilemap.buffer<1x32xf32, tiles = [0, 16], memory = standard>
  // CHECK-NEXT: func.return
  func.return
}
