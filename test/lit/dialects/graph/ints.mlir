// RUN: IPU_ROUNDTRIP
// RUN: IPU_GENERIC_ROUNDTRIP
// RUN: ipu-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Integer (i32) and bool (i1) tensors: arithmetic, comparisons giving i1, logic, the narrow-type
// wrap, where with a runtime condition, casts between float, int and bool, and arg_reduce.

// CHECK-LABEL: func.func @ints
func.func @ints(%a: tensor<4x6xi32>, %b: tensor<4x6xi32>, %x: tensor<4x6xf32>, %v: tensor<6xi32>) -> (tensor<4x6xi32>, tensor<4x6xi1>, tensor<4x6xf32>, tensor<4xi32>) {
  // CHECK: %s = graph.add %a, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  %s = graph.add %a, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  // CHECK-NEXT: %d = graph.div %s, %v : (tensor<4x6xi32>, tensor<6xi32>) -> tensor<4x6xi32>
  %d = graph.div %s, %v : (tensor<4x6xi32>, tensor<6xi32>) -> tensor<4x6xi32>
  // CHECK-NEXT: %m = graph.mod %d, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  %m = graph.mod %d, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  // CHECK-NEXT: %fm = graph.fmod %m, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  %fm = graph.fmod %m, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  // CHECK-NEXT: %bw = graph.and %fm, %a : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  %bw = graph.and %fm, %a : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  // CHECK-NEXT: %sh = graph.shift_left %bw, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  %sh = graph.shift_left %bw, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  // CHECK-NEXT: %nt = graph.bitwise_not %sh : tensor<4x6xi32> -> tensor<4x6xi32>
  %nt = graph.bitwise_not %sh : tensor<4x6xi32> -> tensor<4x6xi32>
  // CHECK-NEXT: %w = graph.wrap %nt {to = "u8"} : tensor<4x6xi32> -> tensor<4x6xi32>
  %w = graph.wrap %nt {to = "u8"} : tensor<4x6xi32> -> tensor<4x6xi32>
  // CHECK-NEXT: %c = graph.less %a, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
  %c = graph.less %a, %b : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
  // CHECK-NEXT: %e = graph.greater_equal %x, %x : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
  %e = graph.greater_equal %x, %x : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
  // CHECK-NEXT: %o = graph.xor %c, %e : (tensor<4x6xi1>, tensor<4x6xi1>) -> tensor<4x6xi1>
  %o = graph.xor %c, %e : (tensor<4x6xi1>, tensor<4x6xi1>) -> tensor<4x6xi1>
  // CHECK-NEXT: %n = graph.not %o : tensor<4x6xi1> -> tensor<4x6xi1>
  %n = graph.not %o : tensor<4x6xi1> -> tensor<4x6xi1>
  // CHECK-NEXT: %f = graph.cast %w : tensor<4x6xi32> -> tensor<4x6xf32>
  %f = graph.cast %w : tensor<4x6xi32> -> tensor<4x6xf32>
  // CHECK-NEXT: %t = graph.cast %x : tensor<4x6xf32> -> tensor<4x6xi1>
  %t = graph.cast %x : tensor<4x6xf32> -> tensor<4x6xi1>
  // CHECK-NEXT: %q = graph.and %n, %t : (tensor<4x6xi1>, tensor<4x6xi1>) -> tensor<4x6xi1>
  %q = graph.and %n, %t : (tensor<4x6xi1>, tensor<4x6xi1>) -> tensor<4x6xi1>
  // CHECK-NEXT: %y = graph.where %q, %x, %f : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = graph.where %q, %x, %f : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  // CHECK-NEXT: %am = graph.arg_reduce %y {kind = "min", select_last_index} : tensor<4x6xf32> -> tensor<4xi32>
  %am = graph.arg_reduce %y {kind = "min", select_last_index} : tensor<4x6xf32> -> tensor<4xi32>
  func.return %w, %q, %y, %am : tensor<4x6xi32>, tensor<4x6xi1>, tensor<4x6xf32>, tensor<4xi32>
}
// GENERIC: "graph.wrap"(%{{.*}}) {to = "u8"} : (tensor<4x6xi32>) -> tensor<4x6xi32>
// GENERIC: "graph.less"(%{{.*}}, %{{.*}}) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
// GENERIC: "graph.where"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
