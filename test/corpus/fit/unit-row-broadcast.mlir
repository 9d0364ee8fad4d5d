// A broadcast of a rank-2 single row ([1, 16] onto [8, 16]) verifies but is not planned (a row
// vector is planned as rank 1, [16]; a column, [8, 1], is planned).
func.func @main(%x: tensor<8x16xf16>, %c: tensor<1x16xf16>) -> tensor<8x16xf16> {
  %y = graph.add %x, %c : (tensor<8x16xf16>, tensor<1x16xf16>) -> tensor<8x16xf16>
  func.return %y : tensor<8x16xf16>
}
