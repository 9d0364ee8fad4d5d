// RUN: ipu-opt %s -p 'split-tensor-parallel{system=sim16x2}' --log-level info 2>&1 | filecheck %s
// RUN: ipu-opt %s -p 'split-tensor-parallel{system=sim16x2}' | ipu-opt --print-op-generic | ipu-opt | filecheck %s --check-prefix=RT
// RUN: ipu-run %s --system sim16x2 --parallel tensor --microbatches 2 | filecheck %s --check-prefix=EMU
// RUN: ipu-opt %S/Inputs/tp-conflict.mlir -p 'split-tensor-parallel{system=sim16x2}' --log-level info 2>&1 | filecheck %s --check-prefix=CONFLICT
// RUN: ipu-run %S/Inputs/tp-conflict.mlir --system sim16x2 --parallel tensor --microbatches 1 | filecheck %s --check-prefix=EMU
// RUN: ipu-opt %s -p 'split-tensor-parallel{system=sim16x4 group=2}' --log-level info 2>&1 | filecheck %s --check-prefix=GROUP
// RUN: ipu-run %s --system sim16x4 --parallel tensor --tensor-group 2 --microbatches 3 --package %t.ipupod | filecheck %s --check-prefix=GEMU
// RUN: ipu-translate %t.ipupod --from-ipuexe -o %t.sys.mlir
// RUN: filecheck %s --input-file %t.sys.mlir --check-prefix=GLOW
// RUN: ipu-translate %t.sys.mlir --to-ipuexe -o %t.again.ipupod
// RUN: python3 -c "import sys; a, b = (open(p, 'rb').read() for p in sys.argv[1:]); sys.exit(a != b)" %t.ipupod %t.again.ipupod
// RUN: not ipu-opt %s -p 'split-tensor-parallel{system=sim16x4 group=3}' 2>&1 | filecheck %s --check-prefix=BADGROUP

// A pre-norm transformer block split Megatron-style over two chips: the q, k and v projections
// and the FFN's first matmul are column-parallel (each chip its half of the columns, and of the
// biases), attention runs on each chip's two of the four heads, the output projection and the
// FFN's second matmul are row-parallel (each chip its half of the rows: a partial sum), and a
// system.all_reduce sums the partials. Three segments a chip, the last (after the second
// all-reduce) on the first chip alone.

// CHECK:      split tensor parallel function=main system=sim16x2 chips=2 groups=1 column_parallel=4 all_reduces=2 segments=3 segments_per_group=3
// CHECK:      system.pipeline @main microbatches 4 attributes {ipu.parallel = "tensor"} {
// CHECK-NEXT: ^bb0(%x: tensor<16x32xf32>):
// CHECK-NEXT:   %{{.*}} = system.stage @main_seg0_chip0 chip 0(%x)
// CHECK-NEXT:   %{{.*}} = system.stage @main_seg0_chip1 chip 1(%x)
// CHECK-NEXT:   %[[A0:.*]], %[[A1:.*]] = system.all_reduce %{{.*}}, %{{.*}} chips [0, 1] : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT:   %[[H:.*]], %{{.*}} = system.stage @main_seg1_chip0 chip 0(%x, %[[A0]])
// CHECK-NEXT:   %{{.*}}, %{{.*}} = system.stage @main_seg1_chip1 chip 1(%x, %[[A1]])
// CHECK-NEXT:   %[[B0:.*]], %{{.*}} = system.all_reduce
// CHECK-NEXT:   %[[OUT:.*]] = system.stage @main_seg2_chip0 chip 0(%[[H]], %[[B0]])
// CHECK-NEXT:   system.output %[[OUT]] : tensor<16x32xf32>
// CHECK:      func.func @main_seg0_chip1
// CHECK:        graph.parameter "wq[:,16:32]" {{.*}} : tensor<32x16xf32>
// CHECK:        graph.parameter "bq[16:32]" {{.*}} : tensor<16xf32>
// CHECK:        graph.parameter "wo[16:32,:]" {{.*}} : tensor<16x32xf32>
// CHECK:        graph.split_heads %{{.*}} {heads = 2 : i64} : tensor<16x16xf32> -> tensor<2x16x8xf32>
// CHECK:        graph.attention {{.*}} -> tensor<2x16x8xf32>
// CHECK:        graph.merge_heads {{.*}} -> tensor<16x16xf32>
// CHECK:        %{{.*}} = graph.matmul %{{.*}}, %{{.*}} : (tensor<16x16xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
// CHECK:      func.func @main_seg1_chip0
// CHECK:        graph.matmul {{.*}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
// CHECK:        graph.gelu {{.*}} : tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK:        graph.matmul {{.*}} : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>

// RT:         system.all_reduce %{{.*}}, %{{.*}} chips [0, 1]

// A projection whose sharded result reaches an op that needs it whole (here, a softmax over its
// columns) stays replicated: the FFN still splits, the model stays correct.
// CONFLICT:   split tensor parallel function=main system=sim16x2 chips=2 groups=1 column_parallel=1 all_reduces=1 segments=2

// EMU:        numericalTest=PASS
// EMU:        collective=0 kind=all_reduce chips=0,1 bytes=2048 cycles={{[0-9]+}} lowerBound={{[0-9]+}} overBound=1.000 schedule=ring
// EMU:        chip=0 busy=
// EMU-NEXT:   chip=1 busy=

// Tensor x pipeline parallelism: with group=2 on four chips the split is over pairs of chips
// (the rungs of the ladder, chips 0-1 and 2-3) and the pairs are pipelined. The segments are cut
// between the pairs where the slower pair is fastest (the attention segment alone on the first
// pair here); the sum an all-reduce leaves on chip 0 and chip 1 crosses to its counterpart on the
// next pair (system.transfer), and the last segment runs on the second pair's first chip.
// GROUP:      split tensor parallel function=main system=sim16x4 chips=2 groups=2 column_parallel=4 all_reduces=2 segments=3 segments_per_group=1,2
// GROUP:      ^bb0(%x: tensor<16x32xf32>):
// GROUP-NEXT:   %[[P0:.*]] = system.stage @main_seg0_chip0 chip 0(%x)
// GROUP-NEXT:   %[[P1:.*]] = system.stage @main_seg0_chip1 chip 1(%x)
// GROUP-NEXT:   %[[O0:.*]], %[[O1:.*]] = system.all_reduce %[[P0]], %[[P1]] chips [0, 1]
// GROUP-NEXT:   %[[T0:.*]] = system.transfer %[[O0]] from 0 to 2
// GROUP-NEXT:   %[[H:.*]], %[[Q0:.*]] = system.stage @main_seg1_chip0 chip 2(%x, %[[T0]])
// GROUP-NEXT:   %[[T1:.*]] = system.transfer %[[O1]] from 1 to 3
// GROUP-NEXT:   %{{.*}}, %[[Q1:.*]] = system.stage @main_seg1_chip1 chip 3(%x, %[[T1]])
// GROUP-NEXT:   %[[F0:.*]], %{{.*}} = system.all_reduce %[[Q0]], %[[Q1]] chips [2, 3]
// GROUP-NEXT:   %[[OUT:.*]] = system.stage @main_seg2_chip0 chip 2(%[[H]], %[[F0]])
// GROUP-NEXT:   system.output %[[OUT]]

// The pairs pipelined over three micro-batches: each all-reduce within its pair, the bubble
// against (p - 1) / (m + p - 1) for p = 2 pairs.
// GEMU:       numericalTest=PASS
// GEMU:       collective=0 kind=all_reduce chips=0,1
// GEMU-NEXT:  collective=1 kind=all_reduce chips=2,3
// GEMU:       system=sim16x4 segmentStages=5 pipelinedGroups=2 microbatches=3 {{.*}} idealBubble=0.2500

// Lowered, the sum crossing pairs is a system.link from the all-reduce's result (it is left in
// place of each member's partial, and the link rows read it there).
// GLOW:       %[[S0:.*]], %[[S1:.*]] = system.all_reduce
// GLOW-NEXT:  system.link %[[S0]] from 0 to 2 rows =
// GLOW:       system.link %[[S1]] from 1 to 3 rows =

// BADGROUP:   split-tensor-parallel: group 3 must be 2 or more chips and divide the 4 chips of sim16x4

func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %g = graph.parameter "g" #graph.gaussian<seed = 1, std = 0.1> : tensor<32xf32>
  %wq = graph.parameter "wq" #graph.gaussian<seed = 2, std = 0.2> : tensor<32x32xf32>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 3, std = 0.2> : tensor<32x32xf32>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 4, std = 0.2> : tensor<32x32xf32>
  %bq = graph.parameter "bq" #graph.gaussian<seed = 5, std = 0.1> : tensor<32xf32>
  %wo = graph.parameter "wo" #graph.gaussian<seed = 6, std = 0.2> : tensor<32x32xf32>
  %w1 = graph.parameter "w1" #graph.gaussian<seed = 7, std = 0.2> : tensor<32x64xf32>
  %w2 = graph.parameter "w2" #graph.gaussian<seed = 8, std = 0.2> : tensor<64x32xf32>
  %n = graph.layer_norm %x, %g, %g : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %q0 = graph.matmul %n, %wq : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %q1 = graph.add %q0, %bq : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %k0 = graph.matmul %n, %wk : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %v0 = graph.matmul %n, %wv : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %q = graph.split_heads %q1 {heads = 4 : i64} : tensor<16x32xf32> -> tensor<4x16x8xf32>
  %k = graph.split_heads %k0 {heads = 4 : i64} : tensor<16x32xf32> -> tensor<4x16x8xf32>
  %v = graph.split_heads %v0 {heads = 4 : i64} : tensor<16x32xf32> -> tensor<4x16x8xf32>
  %a = graph.attention %q, %k, %v {form = "materialized", causal, scale = 0.35355339059327373 : f64} : (tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %m = graph.merge_heads %a : tensor<4x16x8xf32> -> tensor<16x32xf32>
  %o = graph.matmul %m, %wo : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %h = graph.add %x, %o : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %n2 = graph.layer_norm %h, %g, %g : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %f1 = graph.matmul %n2, %w1 : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %f2 = graph.gelu %f1 : tensor<16x64xf32> -> tensor<16x64xf32>
  %f3 = graph.matmul %f2, %w2 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %y = graph.add %h, %f3 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  func.return %y : tensor<16x32xf32>
}
