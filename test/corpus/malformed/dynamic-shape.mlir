func.func @main(%x: tensor<?x8xf16>) -> tensor<?x8xf16> {
  %y = graph.relu %x : tensor<?x8xf16> -> tensor<?x8xf16>
  func.return %y : tensor<?x8xf16>
}
