// An extent of 1099511627776
func.func @main(%x: tensor<1099511627776x16xf16>) -> tensor<1099511627776x16xf16> {
  %y = graph.relu %x : tensor<1099511627776x16xf16> -> tensor<1099511627776x16xf16>
  func.return %y : tensor<1099511627776x16xf16>
}
