// RUN: ipu-opt %s -p 'plan-ops{target=sim16 finalists=1},map-tiles' --target sim16 | filecheck %s
// RUN: ipu-opt %s -p ipu-compile --target sim16 | filecheck %s --check-prefix=TASM
// RUN: ipu-run %s --target sim16 --poison | filecheck %s --check-prefix=EMU

// Attention holds its scores in the inputs' dtype, as PopLibs' softmax holds a half model's:
// the fp32 attention's score scratch (and its checkpoint) is fp32, the half one's half. The
// state stays fp32 either way, and the update call's in dtype (which prices the update) is
// the inputs'.
func.func @main(%q: tensor<2x32x16xf32>, %k: tensor<1x32x16xf32>, %v: tensor<1x32x16xf32>, %qh: tensor<2x32x16xf16>, %kh: tensor<1x32x16xf16>, %vh: tensor<1x32x16xf16>) -> (tensor<2x32x16xf32>, tensor<2x32x16xf16>) {
  %a = graph.attention %q, %k, %v {form = "materialized", causal} : (tensor<2x32x16xf32>, tensor<1x32x16xf32>, tensor<1x32x16xf32>) -> tensor<2x32x16xf32>
  %h = graph.attention %qh, %kh, %vh {form = "streamed", causal} : (tensor<2x32x16xf16>, tensor<1x32x16xf16>, tensor<1x32x16xf16>) -> tensor<2x32x16xf16>
  func.return %a, %h : tensor<2x32x16xf32>, tensor<2x32x16xf16>
}

// CHECK:      %a_state_scores = tilemap.alloc : !tilemap.buffer<1x4x32xf32, tiles = [0, 16], memory = standard>
// CHECK-NEXT: %a_state = tilemap.run "attention_start"({{.*}}%a_state_scores) {{.*}} -> !tilemap.buffer<1x4x18xf32, {{.*}}>
// CHECK-NEXT: tilemap.checkpoint "a_state_scores" value "a" %a_state_scores : {{.*}} as tensor<2x32x32xf32>
// CHECK:      %h_state_scores = tilemap.alloc : !tilemap.buffer<1x4x32xf16, tiles = [0, 16], memory = standard>
// CHECK:      %h_state = tilemap.run "attention_start"({{.*}}%h_state_scores) {{.*}} -> !tilemap.buffer<1x4x18xf32, {{.*}}>
// CHECK:      tilemap.checkpoint "h_state_scores" value "h" %h_state_scores : {{.*}} as tensor<2x32x32xf16>

// TASM: tasm.call "attention_start" {{.*}} : f32 -> f32
// TASM: tasm.call "attention_start" {{.*}} : f16 -> f32
// TASM: tasm.checkpoint_def @a_state_scores value "a" aspect "scores" : tensor<2x32x32xf32>
// TASM: tasm.checkpoint_def @h_state_scores value "h" aspect "scores@0" : tensor<2x32x32xf16>

// Both match the reference (fp32 exactly), with tile memory poisoned.
// EMU: checkpoint=0 name=a_state_scores value=a aspect=scores samples={{[0-9]+}} maximumAbsoluteError=0.000000
// EMU: checkpoint=2 name=h_state_scores value=h aspect=scores@0
// EMU: numericalTest=PASS
