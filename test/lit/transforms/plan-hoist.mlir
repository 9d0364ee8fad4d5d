// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s
// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1}' | ipu-opt | filecheck %s
// RUN: ipu-opt %S/Inputs/plan-hoist-few.mlir -p 'plan-ops{target=sim16 finalists=1}' | filecheck %s --check-prefix=FEW
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A loop-invariant conversion moves out of a loop of several trips: the norm's scale, first read
// by an add of two vectors outside the loop (split over the tiles), is converted to the norm's
// layout (whole on every tile) once before the 16 trips (the repeat is emitted after its body, so
// the conversion lands just before it), where each trip paid its words and a phase. With 1 trip
// the same conversion stays in the body: hoisting it saves nothing.

func.func @many(%x: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>) {
  %g = graph.parameter "g" #graph.gaussian<seed = 1, std = 0.5> : tensor<64xf32>
  %b = graph.parameter "b" #graph.gaussian<seed = 2, std = 0.5> : tensor<64xf32>
  %s = graph.add %g, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %y = graph.repeat 16 iter(%c = %x) : (tensor<16x64xf32>) {
    %n = graph.layer_norm %c, %g, %b {epsilon = 1.0e-05 : f32} : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
    graph.yield %n : tensor<16x64xf32>
  }
  func.return %y, %s : tensor<16x64xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @many
// CHECK:       %g_r = plan.rearrange %g {reason = "graph.layer_norm"}
// CHECK:       plan.repeat 16
// CHECK-NOT:     plan.rearrange %g
// CHECK:         plan.yield

// FEW-LABEL: func.func @few
// FEW-NOT:   plan.rearrange %h
// FEW:       plan.repeat 1
// FEW:         %h_r = plan.rearrange %h {reason = "graph.layer_norm"}
// FEW:         plan.yield

// EMU: numericalTest=PASS
