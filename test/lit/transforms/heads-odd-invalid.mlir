// RUN: not ipu-opt %s -p 'plan-ops{target=sim16}' 2>&1 >/dev/null | filecheck %s

// Head splits and merges move whole head rows; rows are stored padded to whole 32-bit words, so
// an odd head_dim is refused (it used to move each head's pad as data) and the importer spells
// such a swap of leading axes as a graph.transpose (plan.permute), which is planned for any.
func.func @main(%x: tensor<4x15xf32>) -> tensor<3x4x5xf32> {
  %q = graph.split_heads %x {heads = 3 : i64} : tensor<4x15xf32> -> tensor<3x4x5xf32>
  func.return %q : tensor<3x4x5xf32>
}
// CHECK: plan-ops: graph.split_heads %q (op 0): head_dim 5 is odd; graph.split_heads is planned for even head_dim only (a graph.transpose of the [S, H, D] view is planned for any)
