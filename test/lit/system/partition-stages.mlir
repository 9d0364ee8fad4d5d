// RUN: ipu-opt %s -p 'roll-layers,partition-stages{system=sim16x2}' --log-level info 2>&1 | filecheck %s
// RUN: ipu-opt %s -p 'roll-layers,partition-stages{system=sim16x4 layers="1,1,1,1" microbatches=8}' | filecheck %s --check-prefix=PIN
// RUN: ipu-opt %s -p 'roll-layers,partition-stages{system=sim16x2}' -o %t.mlir
// RUN: ipu-opt %t.mlir | ipu-opt --print-op-generic | ipu-opt | filecheck %s --check-prefix=RT
// RUN: ipu-run %t.mlir --microbatches 3 | filecheck %s --check-prefix=EMU
// RUN: ipu-run %s --system sim16x4 --layers 1,1,1,1 --microbatches 8 --package %t.ipupod | filecheck %s --check-prefix=EMU4
// RUN: ipu-translate %t.ipupod --inspect | filecheck %s --check-prefix=POD

// Four identical pre-norm MLP layers. roll-layers makes them one graph.repeat 4; partition-stages
// prices each layer and the final relu alone on the system's chip (the planner's estimate) and
// cuts the model where the slower stage is fastest: two layers a chip. The repeat splits into a
// repeat of 2 per stage over its slice of the stacked weights ("l*.w1[0:2]", "[2:4]"), the
// residual stream after two trips crosses the link (`boundary.y3.out_trip2`), the shared norm scale is
// copied into both stages. `layers = "1,1,1,1"` pins Graphcore-style layer counts per chip on
// a ladder of four (pipeline order 0, 2, 3, 1: neighbours all the way). The system emulator runs
// micro-batches through the stages and checks each stage and the model's outputs.

// CHECK:      rolled layers count=4
// CHECK:      partitioned stages function=main system=sim16x2 units=5 stage_cycles=[[C0:[0-9]+]],[[C1:[0-9]+]] stage_weight_bytes=33024,33024
// CHECK:      builtin.module attributes {ipu.system = #ipu.system<"sim16x2">} {
// CHECK-NEXT:   system.pipeline @main microbatches 4 attributes {ipu.outputs = ["output0"]} {
// CHECK-NEXT:   ^bb0(%x: tensor<16x32xf32>):
// CHECK-NEXT:     %[[H:.*]] = system.stage @main_stage0 chip 0(%x) : (tensor<16x32xf32>) -> (tensor<16x32xf32>)
// CHECK-NEXT:     %[[T:.*]] = system.transfer %[[H]] from 0 to 1 : tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:     %[[O:.*]] = system.stage @main_stage1 chip 1(%[[T]]) : (tensor<16x32xf32>) -> (tensor<16x32xf32>)
// CHECK-NEXT:     system.output %[[O]] : tensor<16x32xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @main_stage0(%{{.*}}: tensor<16x32xf32>) -> tensor<16x32xf32> attributes {ipu.inputs = ["x"], ipu.outputs = ["boundary.y3.out_trip2"], ipu.stage = 0 : i64, ipu.estimated_cycles = [[C0]] : i64} {
// CHECK-NEXT:     graph.parameter "l*.w1[0:2]" dense<"0x{{[0-9A-F]+}}"> : tensor<2x32x64xf32>
// CHECK-NEXT:     graph.parameter "l*.w2[0:2]" dense<"0x{{[0-9A-F]+}}"> : tensor<2x64x32xf32>
// CHECK-NEXT:     %gamma = graph.parameter "gamma"
// CHECK-NEXT:     graph.repeat 2 iter
// CHECK-NEXT:       graph.iteration_slice %{{.*}} : tensor<2x32x64xf32> -> tensor<32x64xf32>
// CHECK:        } {rolled}
// CHECK-NEXT:     func.return
// CHECK:        func.func @main_stage1(%{{.*}}: tensor<16x32xf32>) -> tensor<16x32xf32> attributes {ipu.inputs = ["boundary.y3.out_trip2"], ipu.outputs = ["output0"], ipu.stage = 1 : i64
// CHECK-NEXT:     graph.parameter "l*.w1[2:4]" dense<"0x{{[0-9A-F]+}}"> : tensor<2x32x64xf32>
// CHECK:          graph.repeat 2 iter
// CHECK:          graph.relu

// PIN:        system.pipeline @main microbatches 8 attributes {ipu.outputs = ["output0"]} {
// PIN:          system.stage @main_stage0 chip 0
// PIN-NEXT:     system.transfer %{{.*}} from 0 to 2
// PIN-NEXT:     system.stage @main_stage1 chip 2
// PIN-NEXT:     system.transfer %{{.*}} from 2 to 3
// PIN-NEXT:     system.stage @main_stage2 chip 3
// PIN-NEXT:     system.transfer %{{.*}} from 3 to 1
// PIN-NEXT:     system.stage @main_stage3 chip 1
// PIN:        func.func @main_stage0
// PIN:          graph.parameter "l*.w1[0:1]" {{.*}} : tensor<1x32x64xf32>
// PIN:          graph.repeat 1 iter
// PIN:        func.func @main_stage3
// PIN:          graph.parameter "l*.w1[3:4]"
// PIN:          graph.repeat 1 iter
// PIN:          graph.relu

// RT:         system.pipeline @main microbatches 4 attributes {ipu.outputs = ["output0"]} {
// RT:           system.transfer %{{.*}} from 0 to 1 : tensor<16x32xf32> -> tensor<16x32xf32>
// RT:         func.func @main_stage1

// EMU:        numericalTest=PASS
// EMU-NEXT:   stage=0 chip=0 function=main_stage0 busyPerMicrobatch=[[B0:[0-9]+]] busy={{[0-9]+}} idle={{[0-9]+}}
// EMU-NEXT:   stage=1 chip=1 function=main_stage1 busyPerMicrobatch=[[B1:[0-9]+]]
// EMU-NEXT:   system=sim16x2 stages=2 microbatches=3 linkCycles={{[0-9]+}} totalCycles={{[0-9]+}} bubble=0.{{[0-9]+}} idealBubble=0.2500

// EMU4:       numericalTest=PASS
// EMU4:       stage=3 chip=1 function=main_stage3
// EMU4-NEXT:  system=sim16x4 stages=4 microbatches=8 {{.*}} idealBubble=0.2727

// POD:        system package: system sim16x4 (4 x sim16, ladder, 2 links of 12 B/cycle between neighbours)
// POD-NEXT:   pipeline: 4 stages, 8 micro-batches a run
// POD:        transfer stage 0:boundary.y3.out_trip1 -> stage 1:boundary.y3.out_trip1, chip 0 -> 2 (1 hop), 2,048 bytes in {{[0-9]+}} rows from 16 tiles to 16: horizon 86 cycles (lower bound 86) + 2,500 sync and latency
// POD:        model input x -> stage 0:x
// POD-NEXT:   model output output0 <- stage 3:output0
// POD:        --- stage 3 (chip 1) ---

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
  %l3.w1 = graph.parameter "l3.w1" #graph.gaussian<seed = 8, std = 0.1> : tensor<32x64xf32>
  %l3.w2 = graph.parameter "l3.w2" #graph.gaussian<seed = 9, std = 0.1> : tensor<64x32xf32>
  %n3 = graph.layer_norm %y2, %gamma, %gamma : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %h3 = graph.matmul %n3, %l3.w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %g3 = graph.gelu %h3 : tensor<16x64xf32> -> tensor<16x64xf32>
  %f3 = graph.matmul %g3, %l3.w2 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %y3 = graph.add %y2, %f3 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %out = graph.relu %y3 : tensor<16x32xf32> -> tensor<16x32xf32>
  func.return %out : tensor<16x32xf32>
}
