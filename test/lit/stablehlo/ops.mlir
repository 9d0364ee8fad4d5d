// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP

// Every stablehlo op in JAX's pretty syntax, printed back the same way (and through the generic
// form). Like JAX, gather is written in the generic form. Hex float splats: splat.mlir.

// CHECK-LABEL: func.func @ops
func.func @ops(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %q: tensor<1x8x2x4xf32>, %ids: tensor<3xi32>, %t: tensor<10x8xf32>, %i: tensor<i32>) -> tensor<2x4xf32> {
  // CHECK-NEXT: %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %s = stablehlo.dot_general %q, %q, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %s = stablehlo.dot_general %q, %q, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  // CHECK-NEXT: %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  // CHECK-NEXT: %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %a = stablehlo.add %d, %b : tensor<2x4xf32>
  %a = stablehlo.add %d, %b : tensor<2x4xf32>
  // CHECK-NEXT: %e1 = stablehlo.subtract %a, %b : tensor<2x4xf32>
  // CHECK-NEXT: %e2 = stablehlo.multiply %e1, %a : tensor<2x4xf32>
  // CHECK-NEXT: %e3 = stablehlo.divide %e2, %a : tensor<2x4xf32>
  // CHECK-NEXT: %e4 = stablehlo.maximum %e3, %a : tensor<2x4xf32>
  // CHECK-NEXT: %e5 = stablehlo.minimum %e4, %a : tensor<2x4xf32>
  // CHECK-NEXT: %e6 = stablehlo.power %e5, %a : tensor<2x4xf32>
  %e1 = stablehlo.subtract %a, %b : tensor<2x4xf32>
  %e2 = stablehlo.multiply %e1, %a : tensor<2x4xf32>
  %e3 = stablehlo.divide %e2, %a : tensor<2x4xf32>
  %e4 = stablehlo.maximum %e3, %a : tensor<2x4xf32>
  %e5 = stablehlo.minimum %e4, %a : tensor<2x4xf32>
  %e6 = stablehlo.power %e5, %a : tensor<2x4xf32>
  // CHECK-NEXT: %u1 = stablehlo.exponential %e6 : tensor<2x4xf32>
  // CHECK-NEXT: %u2 = stablehlo.tanh %u1 : tensor<2x4xf32>
  // CHECK-NEXT: %u3 = stablehlo.negate %u2 : tensor<2x4xf32>
  // CHECK-NEXT: %u4 = stablehlo.rsqrt %u3 : tensor<2x4xf32>
  // CHECK-NEXT: %u5 = stablehlo.sqrt %u4 : tensor<2x4xf32>
  // CHECK-NEXT: %u6 = stablehlo.logistic %u5 : tensor<2x4xf32>
  // CHECK-NEXT: %u7 = stablehlo.log %u6 : tensor<2x4xf32>
  // CHECK-NEXT: %u8 = stablehlo.abs %u7 : tensor<2x4xf32>
  // CHECK-NEXT: %u9 = chlo.erf %u8 : tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %u10 = chlo.square %u9 : tensor<2x4xf32> -> tensor<2x4xf32>
  %u1 = stablehlo.exponential %e6 : tensor<2x4xf32>
  %u2 = stablehlo.tanh %u1 : tensor<2x4xf32>
  %u3 = stablehlo.negate %u2 : tensor<2x4xf32>
  %u4 = stablehlo.rsqrt %u3 : tensor<2x4xf32>
  %u5 = stablehlo.sqrt %u4 : tensor<2x4xf32>
  %u6 = stablehlo.logistic %u5 : tensor<2x4xf32>
  %u7 = stablehlo.log %u6 : tensor<2x4xf32>
  %u8 = stablehlo.abs %u7 : tensor<2x4xf32>
  %u9 = chlo.erf %u8 : tensor<2x4xf32> -> tensor<2x4xf32>
  %u10 = chlo.square %u9 : tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %u11 = chlo.erfc %u10 : tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %fin = stablehlo.is_finite %u11 : (tensor<2x4xf32>) -> tensor<2x4xi1>
  %u11 = chlo.erfc %u10 : tensor<2x4xf32> -> tensor<2x4xf32>
  %fin = stablehlo.is_finite %u11 : (tensor<2x4xf32>) -> tensor<2x4xi1>
  // CHECK-NEXT: %r = stablehlo.reduce(%u10 init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
  %r = stablehlo.reduce(%u10 init: %c) applies stablehlo.maximum across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
  // CHECK-NEXT: %r2 = stablehlo.reduce(%u10 init: %c) across dimensions = [0] : (tensor<2x4xf32>, tensor<f32>) -> tensor<4xf32> reducer(%p: tensor<f32>, %o: tensor<f32>) {
  // CHECK-NEXT:   %n = stablehlo.add %p, %o : tensor<f32>
  // CHECK-NEXT:   %m = stablehlo.multiply %n, %n : tensor<f32>
  // CHECK-NEXT:   stablehlo.return %m : tensor<f32>
  // CHECK-NEXT: }
  %r2 = stablehlo.reduce(%u10 init: %c) across dimensions = [0] : (tensor<2x4xf32>, tensor<f32>) -> tensor<4xf32>
   reducer(%p: tensor<f32>, %o: tensor<f32>) {
    %n = stablehlo.add %p, %o : tensor<f32>
    %m = stablehlo.multiply %n, %n : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }
  // CHECK-NEXT: %io4 = stablehlo.iota dim = 1 : tensor<2x4xi32>
  // CHECK-NEXT: %zi = stablehlo.constant dense<0> : tensor<i32>
  // CHECK-NEXT: %am, %am_1 = stablehlo.reduce(%u10 init: %c), (%io4 init: %zi) across dimensions = [1] : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>) reducer(%v0: tensor<f32>, %v1: tensor<f32>) (%j0: tensor<i32>, %j1: tensor<i32>) {
  // CHECK-NEXT:   %gt = stablehlo.compare GT, %v0, %v1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  // CHECK-NEXT:   %bv = stablehlo.select %gt, %v0, %v1 : tensor<i1>, tensor<f32>
  // CHECK-NEXT:   %bj = stablehlo.select %gt, %j0, %j1 : tensor<i1>, tensor<i32>
  // CHECK-NEXT:   stablehlo.return %bv, %bj : tensor<f32>, tensor<i32>
  // CHECK-NEXT: }
  %io4 = stablehlo.iota dim = 1 : tensor<2x4xi32>
  %zi = stablehlo.constant dense<0> : tensor<i32>
  %am:2 = stablehlo.reduce(%u10 init: %c), (%io4 init: %zi) across dimensions = [1] : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
   reducer(%v0: tensor<f32>, %v1: tensor<f32>) (%j0: tensor<i32>, %j1: tensor<i32>)  {
    %gt = stablehlo.compare GT, %v0, %v1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %bv = stablehlo.select %gt, %v0, %v1 : tensor<i1>, tensor<f32>
    %bj = stablehlo.select %gt, %j0, %j1 : tensor<i1>, tensor<i32>
    stablehlo.return %bv, %bj : tensor<f32>, tensor<i32>
  }
  // CHECK-NEXT: %rs = stablehlo.reshape %u10 : (tensor<2x4xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %tr = stablehlo.transpose %u10, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
  // CHECK-NEXT: %io = stablehlo.iota dim = 1 : tensor<2x4xi32>
  // CHECK-NEXT: %cv = stablehlo.convert %io : (tensor<2x4xi32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %cmp = stablehlo.compare GT, %cv, %u10, FLOAT : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  // CHECK-NEXT: %cmp2 = stablehlo.compare EQ, %io, %io : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
  // CHECK-NEXT: %sel = stablehlo.select %cmp, %cv, %u10 : tensor<2x4xi1>, tensor<2x4xf32>
  // CHECK-NEXT: %cl = stablehlo.clamp %c, %sel, %c : (tensor<f32>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %rs = stablehlo.reshape %u10 : (tensor<2x4xf32>) -> tensor<8xf32>
  %tr = stablehlo.transpose %u10, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %io = stablehlo.iota dim = 1 : tensor<2x4xi32>
  %cv = stablehlo.convert %io : (tensor<2x4xi32>) -> tensor<2x4xf32>
  %cmp = stablehlo.compare GT, %cv, %u10, FLOAT : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %cmp2 = stablehlo.compare EQ, %io, %io : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
  %sel = stablehlo.select %cmp, %cv, %u10 : tensor<2x4xi1>, tensor<2x4xf32>
  %cl = stablehlo.clamp %c, %sel, %c : (tensor<f32>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %cat = stablehlo.concatenate %cl, %cl, dim = 0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  // CHECK-NEXT: %sl = stablehlo.slice %cat [1:3, 0:4:2] : (tensor<4x4xf32>) -> tensor<2x2xf32>
  // CHECK-NEXT: %ds = stablehlo.dynamic_slice %cat, %i, %i, sizes = [2, 4] : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %pd = stablehlo.pad %sl, %c, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x4xf32>
  %cat = stablehlo.concatenate %cl, %cl, dim = 0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %sl = stablehlo.slice %cat [1:3, 0:4:2] : (tensor<4x4xf32>) -> tensor<2x2xf32>
  %ds = stablehlo.dynamic_slice %cat, %i, %i, sizes = [2, 4] : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
  %pd = stablehlo.pad %sl, %c, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %ix = stablehlo.reshape %ids : (tensor<3xi32>) -> tensor<3x1xi32>
  // CHECK-NEXT: %g = "stablehlo.gather"(%t, %ix) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 8>}> : (tensor<10x8xf32>, tensor<3x1xi32>) -> tensor<3x8xf32>
  %ix = stablehlo.reshape %ids : (tensor<3xi32>) -> tensor<3x1xi32>
  %g = "stablehlo.gather"(%t, %ix) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 8>}> : (tensor<10x8xf32>, tensor<3x1xi32>) -> tensor<3x8xf32>
  // CHECK-NEXT: %cc = stablehlo.custom_call @Sharding(%pd) {mhlo.sharding = "{replicated}"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %cc = stablehlo.custom_call @Sharding(%pd) {mhlo.sharding = "{replicated}"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %cl2 = func.call @helper(%cc) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %cl2 = func.call @helper(%cc) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %cl2 : tensor<2x4xf32>
}

// CHECK: func.func private @helper
func.func private @helper(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  func.return %x : tensor<2x4xf32>
}
