// RUN: ipu-opt %s -p host-layout | filecheck %s

// What is not a permutation of the input's axes stays on the device: a reshape that only
// regroups elements in order, a chain whose value is read twice, an identity permutation.
// CHECK-LABEL: func.func @regroup
// CHECK-NOT:     ipu.host_perms
// CHECK:         graph.reshape %x
func.func @regroup(%x: tensor<4x6xf32>) -> tensor<24xf32> {
  %r = graph.reshape %x : tensor<4x6xf32> -> tensor<24xf32>
  %y = graph.relu %r : tensor<24xf32> -> tensor<24xf32>
  func.return %y : tensor<24xf32>
}

// CHECK-LABEL: func.func @shared
// CHECK-NOT:     ipu.host_perms
// CHECK:         graph.transpose %x
func.func @shared(%x: tensor<4x6xf32>) -> (tensor<6x4xf32>, tensor<4x6xf32>) {
  %t = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>
  %y = graph.relu %x : tensor<4x6xf32> -> tensor<4x6xf32>
  func.return %t, %y : tensor<6x4xf32>, tensor<4x6xf32>
}

// A transpose back and forth is the identity (the longest prefix that permutes): nothing for
// the host to do.
// CHECK-LABEL: func.func @there_and_back
// CHECK-NOT:     ipu.host_perms
// CHECK:         %a = graph.transpose %x
func.func @there_and_back(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %a = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>
  %b = graph.transpose %a {perm = array<i64: 1, 0>} : tensor<6x4xf32> -> tensor<4x6xf32>
  func.return %b : tensor<4x6xf32>
}
