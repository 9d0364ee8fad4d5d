// An extent of 0
func.func @main(%x: tensor<0x16xf16>) -> tensor<0x16xf16> {
  %y = graph.relu %x : tensor<0x16xf16> -> tensor<0x16xf16>
  func.return %y : tensor<0x16xf16>
}
