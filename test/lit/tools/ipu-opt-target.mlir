// RUN: ipu-opt %s -p 'plan-ops{finalists=1}' --target sim16 | filecheck %s --check-prefix=OPTIONS
// RUN: ipu-opt %s -p 'plan-ops{target=sim64 finalists=1}' --target sim16 | filecheck %s --check-prefix=EXPLICIT
// RUN: ipu-opt %s -p plan-ops --target sim64 | filecheck %s --check-prefix=BARE

// --target reaches every targeted pass that does not name one, with or without other options;
// a pass's own target option wins.
func.func @main(%x: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %g = graph.gelu %x : tensor<64x256xf16> -> tensor<64x256xf16>
  func.return %g : tensor<64x256xf16>
}

// OPTIONS:  ipu.target = "sim16"
// EXPLICIT: ipu.target = "sim64"
// BARE:     ipu.target = "sim64"
