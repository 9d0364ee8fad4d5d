// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// A model as two stages on the chips of a system, the value between them moved by a transfer.

// CHECK:      builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
// CHECK-NEXT:   system.pipeline @main microbatches 4 {
// CHECK-NEXT:   ^bb0(%x: tensor<4x8xf32>):
// CHECK-NEXT:     %h = system.stage @main_stage0 chip 0(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>)
// CHECK-NEXT:     %h_1 = system.transfer %h from 0 to 1 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:     %o = system.stage @main_stage1 chip 1(%h_1, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>)
// CHECK-NEXT:     system.output %o : tensor<4x8xf32>
// CHECK-NEXT:   }
// CHECK:        func.func @main_stage0
// CHECK:        func.func @main_stage1
builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 4 {
  ^bb0(%x : tensor<4x8xf32>):
    %h = system.stage @main_stage0 chip 0 (%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>)
    %h_1 = system.transfer %h from 0 to 1 : tensor<4x8xf32> -> tensor<4x8xf32>
    %o = system.stage @main_stage1 chip 1 (%h_1, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>)
    system.output %o : tensor<4x8xf32>
  }
  func.func @main_stage0(%x : tensor<4x8xf32>) -> tensor<4x8xf32> {
    %h = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
    func.return %h : tensor<4x8xf32>
  }
  func.func @main_stage1(%h : tensor<4x8xf32>, %x : tensor<4x8xf32>) -> tensor<4x8xf32> {
    %o = graph.add %h, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    func.return %o : tensor<4x8xf32>
  }
}

// -----

// Tensor-parallel segments: each chip's partial, summed on both by an all-reduce; a chip runs
// several stages (one per segment).

// CHECK:      %r0, %r1 = system.all_reduce %a, %b chips [0, 1] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: %o = system.stage @s0 chip 0(%r0) : (tensor<4xf32>) -> (tensor<4xf32>)
builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 1 {
  ^bb0(%x : tensor<4xf32>):
    %a = system.stage @s0 chip 0 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    %b = system.stage @s0 chip 1 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    %r0, %r1 = system.all_reduce %a, %b chips [0, 1] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
    %o = system.stage @s0 chip 0 (%r0) : (tensor<4xf32>) -> (tensor<4xf32>)
    system.output %o : tensor<4xf32>
  }
  func.func @s0(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
