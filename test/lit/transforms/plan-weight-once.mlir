// RUN: ipu-opt %s -p 'plan-decide{target=sim16}' | filecheck %s --check-prefix=DECIDE
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s --check-prefix=PLAN
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// An LM-head-like weight too big for the residency share (2.5 MB over 16 tiles: 160 KB a tile,
// the share is 12 % of 624 KiB). Its grid has one row block, so it holds the weight once: a
// fetched weight's home (stored once over the grid's tiles) would be those very blocks, moved
// each run from standard into interleaved memory. It stays resident where the AMP reads it:
// no home, no fetch, half the bytes.
func.func @main(%x: tensor<16x64xf16>) -> tensor<16x20000xf16> {
  %w = graph.parameter "w" #graph.gaussian<seed = 1, std = 0.1> : tensor<64x20000xf16>
  %y = graph.matmul %x, %w : (tensor<16x64xf16>, tensor<64x20000xf16>) -> tensor<16x20000xf16>
  func.return %y : tensor<16x20000xf16>
}

// DECIDE: #plan.choice<gemm, grid = [1, 16, 1], weight = resident, orientation = swapped>

// PLAN:     %w = plan.parameter "w" {{.*}} memory = interleaved>>
// PLAN-NOT: weight fetch
// PLAN:     plan.gemm %x, %w {value = "y", swapped}

// EMU: numericalTest=PASS
