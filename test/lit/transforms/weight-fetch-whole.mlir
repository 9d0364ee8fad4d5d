// RUN: ipu-opt %s --split-input-file -p map-tiles | filecheck %s

// A weight fetched into a layout of the same padded extent moves as whole blocks: the host writes
// the weight's padding as zeros (`zero_padding`), the fetch carries them along, and the fetched
// copy is not zeroed on the device first.
//
// w [16, 20] is stored in 2 x 3 blocks of 8 x 8 (columns padded 20 -> 24) and fetched into
// column blocks of 16 x 8 on every row of tiles: the same 24 columns.
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
func.func @main() -> !plan.tensor<16x20xf16, #plan.layout<grid = [2, 3], split = [[], [1]], memory = standard>>
    attributes {ipu.inputs = [], ipu.outputs = ["y"]} {
  %w = plan.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : !plan.tensor<16x20xf16, #plan.layout<grid = [2, 3], split = [[0], [1]], memory = standard>>
  %y = plan.rearrange %w {reason = "fetch"} : !plan.tensor<16x20xf16, #plan.layout<grid = [2, 3], split = [[0], [1]], memory = standard>> -> !plan.tensor<16x20xf16, #plan.layout<grid = [2, 3], split = [[], [1]], memory = standard>>
  func.return %y : !plan.tensor<16x20xf16, #plan.layout<grid = [2, 3], split = [[], [1]], memory = standard>>
}
}

// CHECK:      %w = tilemap.weight "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<16x20xf16> layout #plan.layout<grid = [2, 3], split = {{\[\[}}0], [1]], memory = standard> {zero_padding} -> !tilemap.buffer<8x8xf16, tiles = [0, 6], memory = standard>
// Every block moves whole: 8 rows of 4 words (8 halves) from tiles 0-2 and 3-5 to the three column
// blocks, each multicast to both rows of tiles; the last column block's padding is included.
// CHECK:      %y = tilemap.move %w transfers
// CHECK-NEXT: [0, 0, 16, 0, 0, 16, 8, 4, 3, 1, 1, 2, 3, 0, 0, 0],
// CHECK-NEXT: [3, 0, 16, 0, 128, 16, 8, 4, 3, 1, 1, 2, 3, 0, 0, 0]> {reason = "fetch"} : !tilemap.buffer<8x8xf16, tiles = [0, 6], memory = standard> -> !tilemap.buffer<16x8xf16, tiles = [0, 6], memory = standard>

// -----

// Fetched into 7 column blocks of 4 (28 columns, not 24): the blocks do not line up, so the
// fetch moves real elements only and the fetched copy is zeroed on the device (whole: the
// seventh block holds no data at all). The host still writes the stored weight's padding as
// zeros, as it does every padded weight's.
builtin.module attributes {ipu.target = #ipu.target<"sim16">} {
func.func @main() -> !plan.tensor<16x20xf16, #plan.layout<grid = [7], split = [[], [0]], memory = standard>>
    attributes {ipu.inputs = [], ipu.outputs = ["y"]} {
  %w = plan.parameter "w" #graph.gaussian<seed = 1, std = 0.02> : !plan.tensor<16x20xf16, #plan.layout<grid = [2, 3], split = [[0], [1]], memory = standard>>
  %y = plan.rearrange %w {reason = "fetch"} : !plan.tensor<16x20xf16, #plan.layout<grid = [2, 3], split = [[0], [1]], memory = standard>> -> !plan.tensor<16x20xf16, #plan.layout<grid = [7], split = [[], [0]], memory = standard>>
  func.return %y : !plan.tensor<16x20xf16, #plan.layout<grid = [7], split = [[], [0]], memory = standard>>
}
}

// CHECK:      %w = tilemap.weight "w" #graph.gaussian<seed = 1, std = 0.02> : tensor<16x20xf16> layout #plan.layout<grid = [2, 3], split = {{\[\[}}0], [1]], memory = standard> {zero_padding} -> !tilemap.buffer<8x8xf16, tiles = [0, 6], memory = standard>
// CHECK:      {reason = "fetch", zero_fill} : !tilemap.buffer<8x8xf16, tiles = [0, 6], memory = standard> -> !tilemap.buffer<16x4xf16, tiles = [0, 7], memory = standard>
