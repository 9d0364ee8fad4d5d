// A declaration: no body to compile
func.func private @main(%x: tensor<8x16xf16>) -> tensor<8x16xf16>
