// RUN: ipu-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// The verifiers: a stage reads only values on its chip, a transfer moves a stage's value to
// another chip, the callee exists with the stage's types, chips are the system's and one stage
// each, the pipeline ends in system.output, micro-batches are at least one.

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 2 {
  ^bb0(%x : tensor<4xf32>):
    %h = system.stage @s0 chip 0 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    %o = system.stage @s1 chip 1 (%h) : (tensor<4xf32>) -> (tensor<4xf32>)
    system.output %o : tensor<4xf32>
  }
  func.func @s0(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
  func.func @s1(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
// CHECK: system.stage @s1: input 0 lives on chip 0, the stage on chip 1 (transfer it)

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 2 {
  ^bb0(%x : tensor<4xf32>):
    %h = system.stage @s0 chip 0 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    %t = system.transfer %h from 0 to 0 : tensor<4xf32> -> tensor<4xf32>
    system.output %t : tensor<4xf32>
  }
  func.func @s0(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
// CHECK: system.transfer: from chip 0 to itself

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 2 {
  ^bb0(%x : tensor<4xf32>):
    %t = system.transfer %x from 0 to 1 : tensor<4xf32> -> tensor<4xf32>
    system.output %t : tensor<4xf32>
  }
}
// CHECK: system.transfer: a model input is written by the host to every chip that reads it

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 2 {
  ^bb0(%x : tensor<4xf32>):
    %h = system.stage @nowhere chip 0 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    system.output %h : tensor<4xf32>
  }
}
// CHECK: system.stage: no function @nowhere in the module

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 2 {
  ^bb0(%x : tensor<4xf32>):
    %h = system.stage @s0 chip 0 (%x) : (tensor<4xf32>) -> (tensor<8xf32>)
    system.output %h : tensor<8xf32>
  }
  func.func @s0(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
// CHECK: system.stage @s0: types (tensor<4xf32>) -> (tensor<8xf32>) do not match the function's (tensor<4xf32>) -> (tensor<4xf32>)

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 2 {
  ^bb0(%x : tensor<4xf32>):
    %h = system.stage @s0 chip 2 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    system.output %h : tensor<4xf32>
  }
  func.func @s0(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
// CHECK: system.pipeline: chip 2 is not one of the 2 chips of sim64x2

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 0 {
  ^bb0(%x : tensor<4xf32>):
    system.output %x : tensor<4xf32>
  }
}
// CHECK: system.pipeline: microbatches 0 must be at least 1

// -----

builtin.module attributes {ipu.system = #ipu.system<"pod99">} {
}
// CHECK: #ipu.system: unknown system 'pod99'

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 1 {
  ^bb0(%x : tensor<4xf32>):
    %a = system.stage @s0 chip 0 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    %b = system.stage @s0 chip 1 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    %r0, %r1 = system.all_reduce %a, %b chips [1, 0] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
    system.output %r0 : tensor<4xf32>
  }
  func.func @s0(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
// CHECK: system.all_reduce: input 0 lives on chip 0, not 1

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 1 {
  ^bb0(%x : tensor<4xf32>):
    %a = system.stage @s0 chip 0 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    %r0 = system.all_reduce %a chips [0] : tensor<4xf32> -> tensor<4xf32>
    system.output %r0 : tensor<4xf32>
  }
  func.func @s0(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
// CHECK: system.all_reduce: needs two or more distinct chips, got [0]

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 1 {
  ^bb0(%x : tensor<4xf32>):
    %a = system.stage @s0 chip 0 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    %l = system.link %a from 0 to 1 rows = #table.links<[start, src_tile, src_offset, dst_tile, dst_offset, bytes] [0, 0, 0, 0, 0, 8], [1, 0, 8, 1, 0, 8]> bound 4 horizon 4 : tensor<4xf32> -> tensor<4xf32>
    %o = system.stage @s0 chip 1 (%l) : (tensor<4xf32>) -> (tensor<4xf32>)
    system.output %o : tensor<4xf32>
  }
  func.func @s0(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
// CHECK: system.link: source tile 0 streams two rows at once (cycle 1)

// -----

builtin.module attributes {ipu.system = #ipu.system<"sim64x2">} {
  system.pipeline @main microbatches 1 {
  ^bb0(%x : tensor<4xf32>):
    %a = system.stage @s0 chip 0 (%x) : (tensor<4xf32>) -> (tensor<4xf32>)
    %l = system.link %a from 0 to 1 rows = #table.links<[start, src_tile, src_offset, dst_tile, dst_offset, bytes] [0, 0, 0, 0, 0, 8], [0, 1, 0, 1, 0, 8]> bound 2 horizon 1 : tensor<4xf32> -> tensor<4xf32>
    %o = system.stage @s0 chip 1 (%l) : (tensor<4xf32>) -> (tensor<4xf32>)
    system.output %o : tensor<4xf32>
  }
  func.func @s0(%x : tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
// CHECK: system.link: horizon 1 must cover the last row's end (2) and the lower bound 2
