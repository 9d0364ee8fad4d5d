// RUN: not ipu-opt %s -p 'roll-layers,partition-stages' 2>&1 | filecheck %s --check-prefix=NOSYS
// RUN: not ipu-opt %s -p 'roll-layers,partition-stages{system=pod9}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not ipu-opt %s -p 'roll-layers,partition-stages{system=sim16x2 layers="1,1"}' 2>&1 | filecheck %s --check-prefix=LAYERS
// RUN: not ipu-opt %s -p 'roll-layers,partition-stages{system=sim16x4 layers="0,3,0,0"}' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not ipu-opt %S/Inputs/two-ops.mlir -p 'partition-stages{system=sim16x4}' 2>&1 | filecheck %s --check-prefix=FEW
// RUN: not ipu-opt %S/Inputs/pins-out-of-order.mlir -p 'partition-stages{system=sim16x2}' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: ipu-opt %S/Inputs/pins.mlir -p 'partition-stages{system=sim16x2}' | filecheck %s --check-prefix=PINNED
// RUN: not ipu-opt %s -p 'roll-layers,partition-stages{system=sim16x2},plan-ops' 2>&1 | filecheck %s --check-prefix=LEVEL

// Each refusal names what is wrong: no system, an unknown one, a layer split that does not give
// every stage its count or leaves a stage empty, a model with fewer units than chips, pins out
// of pipeline order; a pin that can be honoured is; and a single-chip pass refuses a
// partitioned module.

// NOSYS:   partition-stages: name the system (system=…) or set the module's #ipu.system
// UNKNOWN: partition-stages: unknown system 'pod9' (known: pod16, pod2, pod4, pod8, sim16x2, sim16x4, sim64x2, sim64x4)
// LAYERS:  partition-stages: layers '1,1' must give each of the 2 stages its count of the model's 3 rolled layers (non-negative, summing to 3)
// EMPTY:   partition-stages: layers '0,3,0,0' leaves stage 0 with nothing to run
// FEW:     partition-stages: @main has 2 units of work (ops and rolled layers), fewer than the 4 chips of sim16x4: use a smaller system
// ORDER:   partition-stages: the pin of graph.relu %b to stage 0 cannot be honoured: it follows graph.gelu %a, pinned to stage 1, and stages run in order
// PINNED:      system.stage @main_stage0 chip 0
// PINNED:      func.func @main_stage0
// PINNED-NEXT:   graph.exp
// PINNED-NEXT:   func.return
// PINNED:      func.func @main_stage1
// PINNED-NEXT:   graph.gelu
// LEVEL:   plan-ops: the module is partitioned into stages (system.pipeline): compile it for its system (ipu-run MODULE, or ipu.systems.compile_system)

func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %gamma = graph.parameter "gamma" #graph.gaussian<seed = 1, std = 0.1> : tensor<32xf32>
  %l0.w1 = graph.parameter "l0.w1" #graph.gaussian<seed = 2, std = 0.1> : tensor<32x64xf32>
  %l0.w2 = graph.parameter "l0.w2" #graph.gaussian<seed = 3, std = 0.1> : tensor<64x32xf32>
  %n0 = graph.layer_norm %x, %gamma, %gamma : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %h0 = graph.matmul %n0, %l0.w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %g0 = graph.gelu %h0 : tensor<16x64xf32> -> tensor<16x64xf32>
  %f0 = graph.matmul %g0, %l0.w2 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %y0 = graph.add %x, %f0 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %l1.w1 = graph.parameter "l1.w1" #graph.gaussian<seed = 4, std = 0.1> : tensor<32x64xf32>
  %l1.w2 = graph.parameter "l1.w2" #graph.gaussian<seed = 5, std = 0.1> : tensor<64x32xf32>
  %n1 = graph.layer_norm %y0, %gamma, %gamma : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %h1 = graph.matmul %n1, %l1.w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %g1 = graph.gelu %h1 : tensor<16x64xf32> -> tensor<16x64xf32>
  %f1 = graph.matmul %g1, %l1.w2 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %y1 = graph.add %y0, %f1 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %l2.w1 = graph.parameter "l2.w1" #graph.gaussian<seed = 6, std = 0.1> : tensor<32x64xf32>
  %l2.w2 = graph.parameter "l2.w2" #graph.gaussian<seed = 7, std = 0.1> : tensor<64x32xf32>
  %n2 = graph.layer_norm %y1, %gamma, %gamma : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %h2 = graph.matmul %n2, %l2.w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %g2 = graph.gelu %h2 : tensor<16x64xf32> -> tensor<16x64xf32>
  %f2 = graph.matmul %g2, %l2.w2 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %y2 = graph.add %y1, %f2 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %out = graph.relu %y2 : tensor<16x32xf32> -> tensor<16x32xf32>
  func.return %out : tensor<16x32xf32>
}
