// RUN: ipu-opt %s -p expand-windows | filecheck %s
// RUN: ipu-opt %s -p expand-windows,host-layout | filecheck %s --check-prefix=HOST
// RUN: ipu-run %s --target sim16 | filecheck %s --check-prefix=EMU

// A 7x7/2 stem on 3 channels (ResNet's, small): PopLibs' expandDims of the kernel width. The
// image is padded (rows, columns, channels 3 -> 4), its 7 column windows (stride 2: a phase of
// columns and channels of the [.., W/2, 2 C] view each) are joined on the channels, and a 7x1 conv with stride (2, 1)
// over 28 channels remains: the conv plan family takes it on the AMP. It keeps the conv's name.
// CHECK-LABEL: func.func @stem
// CHECK:         %[[P:.*]] = graph.pad %x {low = array<i64: 0, 3, 3, 0>, ipu.derived} : tensor<2x16x16x3xf32> -> tensor<2x22x22x4xf32>
// CHECK-NEXT:    %[[V:.*]] = graph.reshape %[[P]] {ipu.derived} : tensor<2x22x22x4xf32> -> tensor<2x22x11x8xf32>
// CHECK-NEXT:    graph.slice %[[V]] {starts = array<i64: 0, 0, 0, 0>, ipu.derived} : tensor<2x22x11x8xf32> -> tensor<2x22x8x4xf32>
// CHECK-NEXT:    graph.slice %[[V]] {starts = array<i64: 0, 0, 0, 4>, ipu.derived} : tensor<2x22x11x8xf32> -> tensor<2x22x8x4xf32>
// CHECK:         graph.slice %[[V]] {starts = array<i64: 0, 0, 3, 0>, ipu.derived}
// CHECK:         %[[J:.*]] = graph.concat {{.*}} {axis = 3 : i64, ipu.derived} : {{.*}} -> tensor<2x22x8x28xf32>
// The filters are a weight: padded and regrouped here, once, as a new one.
// CHECK:         %[[F:.*]] = graph.parameter "y.filters" dense<{{.*}}> : tensor<7x1x28x8xf32>
// CHECK-NEXT:    %y = graph.conv %[[J]], %[[F]] {strides = array<i64: 2, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<2x22x8x28xf32>, tensor<7x1x28x8xf32>) -> tensor<2x8x8x8xf32>

// The zeros around the image are the host's to write: the input becomes the padded image.
// HOST:          func.func @stem(%x: tensor<2x22x22x4xf32>
// HOST-SAME:       ipu.host_pads = {x = array<i64: 0, 3, 3, 0, 0, 3, 3, 1>}
// HOST:            graph.reshape %x {{.*}}: tensor<2x22x22x4xf32> -> tensor<2x22x11x8xf32>

// EMU: numericalTest=PASS
func.func @stem(%x: tensor<2x16x16x3xf32>) -> tensor<2x8x8x8xf32> {
  %w = graph.parameter "w" #graph.gaussian<seed = 3, std = 0.1> : tensor<7x7x3x8xf32>
  %y = graph.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>, groups = 1 : i64} : (tensor<2x16x16x3xf32>, tensor<7x7x3x8xf32>) -> tensor<2x8x8x8xf32>
  func.return %y : tensor<2x8x8x8xf32>
}
