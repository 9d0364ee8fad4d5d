// A pinned conv grid that is not one of the family's: 3 row blocks of 4 rows (blocks of 2 leave one empty).
func.func @main(%x: tensor<1x4x4x32xf16>) -> tensor<1x4x4x16xf16> {
  %v = graph.parameter "v" #graph.gaussian<seed = 2, std = 0.1> : tensor<1x1x32x16xf16>
  %z = graph.conv %x, %v {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64, plan.choice = #plan.choice<conv, grid = [1, 3, 1, 1]>} : (tensor<1x4x4x32xf16>, tensor<1x1x32x16xf16>) -> tensor<1x4x4x16xf16>
  func.return %z : tensor<1x4x4x16xf16>
}
