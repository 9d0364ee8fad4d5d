// RUN: ipu-opt %s -p 'place-storage{target=sim16}' --target sim16 | filecheck %s

// Memory elements: %a (576 KiB, standard) fills 0x50000-0xE0000 while %l is written, so %l lands
// at 0xE0000, in the interleaved element pair [0xE0000, 0xE8000). %a is dead by the matmul. The weight
// sits at the top (0xE73A0, below the loader's limit 0xE7BB0); the first free range below it,
// 0xE6BA0, is in %l's element pair, which the AMP streams in the same cycles it writes its output,
// so the output goes below the pair, to 0xDF800.
func.func @main() attributes {ipu.inputs = ["a", "l"], ipu.outputs = [], tilemap.mapping = #tilemap.mapping<identity>} {
  %a = tilemap.host_write "a" : tensor<16x294912xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<1x294912xf16, tiles = [0, 16], memory = standard>
  %l = tilemap.host_write "l" : tensor<256x32xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard> -> !tilemap.buffer<16x32xf16, tiles = [0, 16], memory = standard>
  tilemap.checkpoint "a" value "a" %a : !tilemap.buffer<1x294912xf16, tiles = [0, 16], memory = standard> as tensor<16x294912xf16> layout #plan.layout<grid = [16, 1], split = [[0], [1]], memory = standard>
  %w = tilemap.weight "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<32x32xf16> layout #plan.layout<grid = [16], split = [[], []], memory = interleaved> -> !tilemap.buffer<32x32xf16, tiles = [0, 16], memory = interleaved>
  %o = tilemap.run "amp_matmul"(%l, %w) {m = 16 : i64, k = 32 : i64, n = 32 : i64} : (!tilemap.buffer<16x32xf16, tiles = [0, 16], memory = standard>, !tilemap.buffer<32x32xf16, tiles = [0, 16], memory = interleaved>) -> !tilemap.buffer<16x32xf32, tiles = [0, 16], memory = interleaved>
  func.return
}

// CHECK:      %a = tilemap.host_write "a" {{.*}} {slot = #exchange.slot<0x50000, 589824, standard>}
// CHECK-NEXT: %l = tilemap.host_write "l" {{.*}} {slot = #exchange.slot<0xe0000, 1024, standard>}
// CHECK:      %w = tilemap.weight "w" {{.*}} {slot = #exchange.slot<0xe73a0, 2048, interleaved>}
// CHECK-NEXT: %o = tilemap.run "amp_matmul"(%l, %w) {{.*}} {slot = #exchange.slot<0xdf800, 2048, interleaved>}
