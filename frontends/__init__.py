"""frontends"""

# the data-movement lowerings (Slice, Split, Concat, Pad, batched MatMul) and the convolutional
# ones (Conv, BatchNormalization, pools) extend onnx_import's registry when the package loads,
# so every importer sees them
from ipu.frontends import (  # noqa: F401
    onnx_activations,
    onnx_cnn,
    onnx_cumprod,
    onnx_datamove,
    onnx_einsum,
    onnx_losses,
    onnx_norms,
    onnx_onehot,
    onnx_recurrent,
    onnx_routing,
    onnx_scatter,
    onnx_space_depth,
)
