"""frontends"""

# the data-movement lowerings (Slice, Split, Concat, Pad, batched MatMul) and the convolutional
# ones (Conv, BatchNormalization, pools) extend onnx_import's registry when the package loads,
# so every importer sees them
from ipu.frontends import onnx_cnn, onnx_datamove, onnx_losses, onnx_recurrent, onnx_routing  # noqa: F401
