// RUN: ipu-run %s --target sim16 | filecheck %s
// RUN: ipu-opt %s -p ipu-compile --target sim16 | filecheck %s --check-prefix=TASM

// A small pre-norm attention block (seq 32, d_model 64, 4 query heads, 2 KV heads, head_dim 16)
// followed by the row ops and elementwise ops, compiled and emulated on sim16; every
// checkpoint and output is compared against the graph reference.
func.func @main(%x: tensor<32x64xf16>) -> (tensor<32x64xf16>, tensor<32xf32>) {
  %g = graph.parameter "ln_gamma" dense<1.0> : tensor<64xf16> : tensor<64xf16>
  %b = graph.parameter "ln_beta" dense<0.0> : tensor<64xf16> : tensor<64xf16>
  %wq = graph.parameter "wq" #graph.gaussian<seed = 41, std = 0.05> : tensor<64x64xf16>
  %wk = graph.parameter "wk" #graph.gaussian<seed = 42, std = 0.05> : tensor<64x32xf16>
  %wv = graph.parameter "wv" #graph.gaussian<seed = 43, std = 0.05> : tensor<64x32xf16>
  %n = graph.layer_norm %x, %g, %b : (tensor<32x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %q = graph.matmul %n, %wq : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %k = graph.matmul %n, %wk : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
  %v = graph.matmul %n, %wv : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
  %qh = graph.split_heads %q {heads = 4 : i64} : tensor<32x64xf16> -> tensor<4x32x16xf16>
  %kh = graph.split_heads %k {heads = 2 : i64} : tensor<32x32xf16> -> tensor<2x32x16xf16>
  %vh = graph.split_heads %v {heads = 2 : i64} : tensor<32x32xf16> -> tensor<2x32x16xf16>
  %a = graph.attention %qh, %kh, %vh {form = "materialized", causal} : (tensor<4x32x16xf16>, tensor<2x32x16xf16>, tensor<2x32x16xf16>) -> tensor<4x32x16xf16>
  %m = graph.merge_heads %a : tensor<4x32x16xf16> -> tensor<32x64xf16>
  %r = graph.add %x, %m : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  %s = graph.softmax %r : tensor<32x64xf16> -> tensor<32x64xf16>
  %t = graph.tanh %s : tensor<32x64xf16> -> tensor<32x64xf16>
  %y = graph.rms_norm %t, %g : (tensor<32x64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %e = graph.exp %y : tensor<32x64xf16> -> tensor<32x64xf16>
  %c = graph.cast %e : tensor<32x64xf16> -> tensor<32x64xf32>
  %rs = graph.reduce %c {kind = "mean", axis = 1 : i64} : tensor<32x64xf32> -> tensor<32xf32>
  func.return %y, %rs : tensor<32x64xf16>, tensor<32xf32>
}

// q and its head split are not checked: the attention's scale (1/4) is folded into wq
// (fold-attention-scale), so they are the model's values times 1/4 (ipu.derived).
// CHECK:      checkpoint=0 name=n value=n aspect=value samples=256 maximumAbsoluteError={{[0-9.]+}}
// CHECK-NEXT: checkpoint=1 name=k value=k aspect=value
// CHECK-NEXT: checkpoint=2 name=v value=v aspect=value
// CHECK-NEXT: checkpoint=3 name=kh value=kh aspect=value
// CHECK-NEXT: checkpoint=4 name=vh value=vh aspect=value
// The materialized scores are checked too (causal: only the unmasked entries are sampled).
// CHECK-NEXT: checkpoint=5 name=a_state_scores value=a aspect=scores samples={{[0-9]+}} maximumAbsoluteError={{[0-9.]+}}
// CHECK-NEXT: checkpoint=6 name=a value=a aspect=value
// CHECK-NEXT: checkpoint=7 name=m value=m aspect=value
// CHECK-NEXT: checkpoint=8 name=r value=r aspect=value
// CHECK-NEXT: checkpoint=9 name=s value=s aspect=value
// CHECK-NEXT: checkpoint=10 name=t value=t aspect=value
// CHECK-NEXT: checkpoint=11 name=y value=y aspect=value
// CHECK-NEXT: checkpoint=12 name=e value=e aspect=value
// CHECK-NEXT: checkpoint=13 name=c value=c aspect=value
// CHECK-NEXT: checkpoint=14 name=rs value=rs aspect=value samples=32
// CHECK-NEXT: output=output0 samples=2048 maximumAbsoluteError={{[0-9.]+}}
// CHECK-NEXT: output=output1 samples=32 maximumAbsoluteError={{[0-9.]+}}
// CHECK-NEXT: diagnosticCheckpoints=15 check=sampled sampleLimit=256 numericalTest=PASS
// CHECK-NEXT: package={{.*}}ipu-run.mlir target=sim16 tiles=16 exchangeCycles={{[0-9]+}}
// CHECK-NEXT: hostCycles={{[1-9][0-9]*}}
// CHECK-NEXT: totalCycles=[[TOTAL:[0-9]+]]
// The compiler's final estimate of the same device cycles, and their ratio.
// CHECK-NEXT: estimatedCycles={{[0-9]+}} estimatedOverEmulated={{0\.9[5-9][0-9]*|1\.0[0-4][0-9]*}}

// TASM:      tasm.call "layer_norm_rows" {{.*}} {rows = 2 : i64, cols = 64 : i64, valid = 64 : i64, eps_bits = {{[0-9]+}} : i64} : f16 -> f16
// TASM-NOT:  tasm.call "attention_init"
// The scale is in wq (no `mul` of the query block by a scale weight); the tile's one key block
// starts the state (no init: attention_start) and scales nothing (scale_bits = 1.0).
// TASM-NOT:  tasm.call "mul" {{.*}} {m = 8 : i64, n = 16 : i64, b_rows = 1 : i64, b_cols = 1 : i64} : f16 -> f16
// TASM:      tasm.call "attention_start" {{.*}}causal = 1 : i64, scale_bits = 1065353216 : i64, k_base = 0 : i64, k_step = 1 : i64} : f16 -> f32
// Under the PopLibs-derived kernel costs a key split does not pay for its combine at 32 keys: one part.
// TASM:      tasm.call "attention_combine" {{.*}} {parts = 1 : i64, qr = 8 : i64, d = 16 : i64} : f32 -> f16
// TASM:      tasm.call "softmax_rows" {{.*}} {rows = 2 : i64, cols = 64 : i64, valid = 64 : i64} : f16 -> f16
// TASM:      tasm.call "tanh" {{.*}} : f16 -> f16
// TASM:      tasm.call "rms_norm_rows" {{.*}} : f16 -> f16
// TASM:      tasm.call "exp" {{.*}} : f16 -> f16
// TASM:      tasm.call "copy" {{.*}} : f16 -> f32
// TASM:      tasm.call "reduce_rows" {{.*}} {rows = 2 : i64, cols = 64 : i64, valid = 64 : i64, kind = {{[0-9]+}} : i64} : f32 -> f32
// TASM:      tasm.checkpoint_def @a_state_scores value "a" aspect "scores" : tensor<4x32x32xf16>
