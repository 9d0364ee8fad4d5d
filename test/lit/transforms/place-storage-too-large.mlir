// RUN: not ipu-opt %s -p 'place-storage{target=sim16}' --target sim16 2>&1 | filecheck %s

// Two 400 KB inputs per tile, both live when %y is written: the second cannot be placed. The
// diagnostic names the value, its op and tiles, the largest free range, what is live and the
// capacity (data memory between the code and exchange-row reservation and the loader's limit).
func.func @main() attributes {ipu.inputs = ["x", "y"], ipu.outputs = [], tilemap.mapping = #tilemap.mapping<identity>} {
  %x = tilemap.host_write "x" : tensor<16x200000xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x200000xf16, tiles = [0, 16], memory = standard>
  %y = tilemap.host_write "y" : tensor<16x200000xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x200000xf16, tiles = [0, 16], memory = standard>
  %s = tilemap.run "add"(%x, %y) {m = 1 : i64, n = 200000 : i64, b_rows = 1 : i64, b_cols = 200000 : i64} : (!tilemap.buffer<1x200000xf16, tiles = [0, 16], memory = standard>, !tilemap.buffer<1x200000xf16, tiles = [0, 16], memory = standard>) -> !tilemap.buffer<1x200000xf16, tiles = [0, 16], memory = standard>
  func.return
}

// CHECK-NOT: Traceback
// CHECK: error: model does not fit target sim16: value %y (tilemap.host_write) needs 400000 bytes of standard memory on tiles [0, 16) (tile 0 first); the largest free range is 221488 bytes, 400000 bytes are live on tile 0 (largest: %x 400000); standard capacity is 621488 bytes per tile
