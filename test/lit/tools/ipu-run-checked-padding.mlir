// RUN: ipu-opt %s -p ipu-compile --target sim16 | filecheck %s --check-prefix=TASM
// RUN: ipu-run %s --target sim16 --checked | filecheck %s

// `--checked` stops at any read of memory never written. The AMP reads its weight's blocks
// whole, padding lanes included (here w's 90 columns in 6 blocks of 16: 96), and the bias add
// reads c's padded block whole, though neither padding is data: the host writes every padded
// weight's padding as zeros, so a checked run reads nothing unwritten and passes.
func.func @main(%x: tensor<32x64xf16>) -> tensor<32x90xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 3, std = 0.05> : tensor<64x90xf16>
  %c = graph.parameter "c" #graph.gaussian<seed = 4, std = 0.05> : tensor<90xf16>
  %y = graph.matmul %x, %w : (tensor<32x64xf16>, tensor<64x90xf16>) -> tensor<32x90xf16>
  %z = graph.add %y, %c : (tensor<32x90xf16>, tensor<90xf16>) -> tensor<32x90xf16>
  func.return %z : tensor<32x90xf16>
}

// TASM: tasm.weight @w {{.*}} : tensor<64x90xf16> layout #plan.layout<grid = [2, 6, 1], split = {{\[\[}}2], [1]], align = [2, 1], memory = interleaved> at {{[0-9]+}} zero_padding
// TASM: tasm.weight @c {{.*}} : tensor<90xf16> layout #plan.layout<grid = [2, 6, 1], split = {{\[\[}}1]], memory = standard> at {{[0-9]+}} zero_padding

// CHECK: numericalTest=PASS
// CHECK: totalCycles={{[0-9]+}}
