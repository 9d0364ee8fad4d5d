// RUN: ipu-opt %s -p 'place-storage{target=sim16}' --target sim16 | filecheck %s

// Memory elements: %s (192 KiB, standard) fills the non-interleaved region's data, 0x50000-0x80000,
// and %a (384 KiB, standard: it fits no longer there, and a buffer never straddles two regions)
// fills 0x80000-0xE0000 while %l is written, so %l lands at 0xE0000, in the interleaved element
// pair [0xE0000, 0xE8000). %a is dead by the matmul. The weight
// sits at the top (0xE73A0, below the loader's limit 0xE7BB0); the first free range below it,
// 0xE6BA0, is in %l's element pair, which the AMP streams in the same cycles it writes its output,
// so the output goes below the pair, to 0xDF800.
func.func @main() attributes {ipu.inputs = ["s", "a", "l"], ipu.outputs = [], ipu.target = "sim16", tilemap.mapping = #tilemap.mapping<identity>} {
  %s = tilemap.host_write "s" index 0 : tensor<16x98304xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x98304xf16, tiles = [0, 16], memory = standard>
  %a = tilemap.host_write "a" index 1 : tensor<16x196608xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x196608xf16, tiles = [0, 16], memory = standard>
  %l = tilemap.host_write "l" index 2 : tensor<256x32xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<16x32xf16, tiles = [0, 16], memory = standard>
  tilemap.checkpoint "s" index 1 op 2 %s : !tilemap.buffer<1x98304xf16, tiles = [0, 16], memory = standard> as tensor<16x98304xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>
  tilemap.checkpoint "a" index 0 op 1 %a : !tilemap.buffer<1x196608xf16, tiles = [0, 16], memory = standard> as tensor<16x196608xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>
  %w = tilemap.weight "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<32x32xf16> layout #plan.layout<grid = [16], split = [[], []], memory = interleaved> -> !tilemap.buffer<32x32xf16, tiles = [0, 16], memory = interleaved>
  %o = tilemap.run "amp_matmul"(%l, %w) {m = 16 : i64, k = 32 : i64, n = 32 : i64} : (!tilemap.buffer<16x32xf16, tiles = [0, 16], memory = standard>, !tilemap.buffer<32x32xf16, tiles = [0, 16], memory = interleaved>) -> !tilemap.buffer<16x32xf32, tiles = [0, 16], memory = interleaved>
  func.return
}

// CHECK:      %s = tilemap.host_write "s" {{.*}} {slot = #exchange.slot<0x50000, 196608, standard>}
// CHECK-NEXT: %a = tilemap.host_write "a" {{.*}} {slot = #exchange.slot<0x80000, 393216, interleaved>}
// CHECK-NEXT: %l = tilemap.host_write "l" {{.*}} {slot = #exchange.slot<0xe0000, 1024, interleaved>}
// CHECK:      %w = tilemap.weight "w" {{.*}} {slot = #exchange.slot<0xe73a0, 2048, interleaved>}
// CHECK-NEXT: %o = tilemap.run "amp_matmul"(%l, %w) {{.*}} {slot = #exchange.slot<0xdf800, 2048, interleaved>}
