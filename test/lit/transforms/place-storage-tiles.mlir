// RUN: ipu-opt %s -p 'place-storage{target=sim16}' --target sim16 | filecheck %s

// A buffer's address avoids only the live buffers that share one of its tiles. %x (tiles [0, 8))
// and %y (tiles [8, 16)) are 400000 bytes each and live together, yet both sit at the bottom of
// standard data (0x50000, above the 16 KiB code reserve; there is no exchange): no tile holds
// both. Placed at one address shared by all tiles, the pair would need 800000 bytes of the 621488
// a tile has (place-storage-too-large.mlir). %z (tiles [4, 12)) meets both and goes above them;
// %w (tiles [10, 16)) meets %y and %z and goes above %z. The interleaved %u (tiles [0, 4)) and %v
// (tiles [4, 8)) both take the top of the interleaved region. Peaks are the busiest tile's, not
// the sum over buffers: tiles 10-11 hold %y, %z and %w (404032 standard bytes), tiles 4-7 %x and
// %z (402016) plus the interleaved %v (2016).
func.func @main() attributes {ipu.inputs = ["x", "y", "z", "w", "u", "v"], ipu.outputs = ["ox", "oy", "oz", "ow", "ou", "ov"], tilemap.mapping = #tilemap.mapping<identity>} {
  %x = tilemap.host_write "x" : tensor<8x200000xf16> layout #plan.layout<grid = [8, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x200000xf16, tiles = [0, 8], memory = standard>
  %y = tilemap.host_write "y" : tensor<8x200000xf16> layout #plan.layout<grid = [8, 1], split = [[0], [1]], first = 8, memory = standard> -> !tilemap.buffer<1x200000xf16, tiles = [8, 8], memory = standard>
  %z = tilemap.host_write "z" : tensor<8x1000xf16> layout #plan.layout<grid = [8, 1], split = [[0], [1]], first = 4, memory = standard> -> !tilemap.buffer<1x1000xf16, tiles = [4, 8], memory = standard>
  %w = tilemap.host_write "w" : tensor<6x1000xf16> layout #plan.layout<grid = [6, 1], split = [[0], [1]], first = 10, memory = standard> -> !tilemap.buffer<1x1000xf16, tiles = [10, 6], memory = standard>
  %u = tilemap.host_write "u" : tensor<4x1000xf16> layout #plan.layout<grid = [4, 1], split = [[0], [1]], memory = interleaved> -> !tilemap.buffer<1x1000xf16, tiles = [0, 4], memory = interleaved>
  %v = tilemap.host_write "v" : tensor<4x1000xf16> layout #plan.layout<grid = [4, 1], split = [[0], [1]], first = 4, memory = interleaved> -> !tilemap.buffer<1x1000xf16, tiles = [4, 4], memory = interleaved>
  tilemap.host_read "ox" %x : !tilemap.buffer<1x200000xf16, tiles = [0, 8], memory = standard> as tensor<8x200000xf16> layout #plan.layout<grid = [8, 1], split = [[0], [1]], memory = standard>
  tilemap.host_read "oy" %y : !tilemap.buffer<1x200000xf16, tiles = [8, 8], memory = standard> as tensor<8x200000xf16> layout #plan.layout<grid = [8, 1], split = [[0], [1]], first = 8, memory = standard>
  tilemap.host_read "oz" %z : !tilemap.buffer<1x1000xf16, tiles = [4, 8], memory = standard> as tensor<8x1000xf16> layout #plan.layout<grid = [8, 1], split = [[0], [1]], first = 4, memory = standard>
  tilemap.host_read "ow" %w : !tilemap.buffer<1x1000xf16, tiles = [10, 6], memory = standard> as tensor<6x1000xf16> layout #plan.layout<grid = [6, 1], split = [[0], [1]], first = 10, memory = standard>
  tilemap.host_read "ou" %u : !tilemap.buffer<1x1000xf16, tiles = [0, 4], memory = interleaved> as tensor<4x1000xf16> layout #plan.layout<grid = [4, 1], split = [[0], [1]], memory = interleaved>
  tilemap.host_read "ov" %v : !tilemap.buffer<1x1000xf16, tiles = [4, 4], memory = interleaved> as tensor<4x1000xf16> layout #plan.layout<grid = [4, 1], split = [[0], [1]], first = 4, memory = interleaved>
  func.return
}

// CHECK:      func.func @main()
// CHECK-SAME: exchange.memory = {peak_standard_bytes = 404032 : i64, peak_interleaved_bytes = 2016 : i64, peak_total_bytes = 404032 : i64
// CHECK-NEXT: %x = tilemap.host_write "x" {{.*}} {slot = #exchange.slot<0x50000, 400000, standard>}
// CHECK-NEXT: %y = tilemap.host_write "y" {{.*}} {slot = #exchange.slot<0x50000, 400000, standard>}
// CHECK-NEXT: %z = tilemap.host_write "z" {{.*}} {slot = #exchange.slot<0xb1a80, 2016, standard>}
// CHECK-NEXT: %w = tilemap.host_write "w" {{.*}} {slot = #exchange.slot<0xb2260, 2016, standard>}
// CHECK-NEXT: %u = tilemap.host_write "u" {{.*}} {slot = #exchange.slot<[[TOP:0x[0-9a-f]+]], 2016, interleaved>}
// CHECK-NEXT: %v = tilemap.host_write "v" {{.*}} {slot = #exchange.slot<[[TOP]], 2016, interleaved>}
