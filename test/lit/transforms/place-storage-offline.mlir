// RUN: ipu-opt %s -p 'place-storage{target=sim16}' --target sim16 --log-level info -o %t 2>&1 | filecheck %s --check-prefix=LOG
// RUN: filecheck %s < %t

// First-fit in program order fragments the tile: %a (300000 B) goes to the bottom (0x50000), %b
// (32000 B, written while %a lives) above it at 0x993E0. %a dies before %d (400000 B) is written,
// leaving two holes of 300000 and 289488 bytes, neither enough. Every lifetime is known, so
// place-storage packs offline instead, largest first: %d at the bottom, %a there too (they never
// live together), and %b above %d (0x50000 + 400000 = 0xB1A80).
func.func @main() attributes {ipu.inputs = ["a", "b", "d"], ipu.outputs = ["oa", "ob", "od"], tilemap.mapping = #tilemap.mapping<identity>} {
  %a = tilemap.host_write "a" : tensor<16x150000xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x150000xf16, tiles = [0, 16], memory = standard>
  %b = tilemap.host_write "b" : tensor<16x16000xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x16000xf16, tiles = [0, 16], memory = standard>
  tilemap.host_read "oa" %a : !tilemap.buffer<1x150000xf16, tiles = [0, 16], memory = standard> as tensor<16x150000xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>
  %d = tilemap.host_write "d" : tensor<16x200000xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x200000xf16, tiles = [0, 16], memory = standard>
  tilemap.host_read "ob" %b : !tilemap.buffer<1x16000xf16, tiles = [0, 16], memory = standard> as tensor<16x16000xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>
  tilemap.host_read "od" %d : !tilemap.buffer<1x200000xf16, tiles = [0, 16], memory = standard> as tensor<16x200000xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>
  func.return
}

// LOG:      packed storage offline function=main buffers=3
// LOG:      placed storage function=main peak_standard_bytes=432000 peak_interleaved_bytes=0 peak_total_bytes=432000

// CHECK:      %a = tilemap.host_write "a" {{.*}} {slot = #exchange.slot<0x50000, 300000, standard>}
// CHECK-NEXT: %b = tilemap.host_write "b" {{.*}} {slot = #exchange.slot<0xb1a80, 32000, standard>}
// CHECK:      %d = tilemap.host_write "d" {{.*}} {slot = #exchange.slot<0x50000, 400000, standard>}
