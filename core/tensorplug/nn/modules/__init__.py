"""The layers of ``tensorplug.nn``, one module per theme."""

from .module import Module
from .container import Sequential, ModuleList, ModuleDict
from .linear import Identity, Linear, Bilinear
from .conv import Conv1d, Conv2d
from .pooling import MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d, AdaptiveAvgPool2d
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm
from .dropout import Dropout
from .sparse import Embedding
from .attention import MultiheadAttention
from .flatten import Flatten, Unflatten
from .activation import (ReLU, ReLU6, LeakyReLU, ELU, GELU, SiLU, Mish, Softplus, Hardtanh, Tanh, Sigmoid,
                         LogSigmoid, Softmax, Softmin, LogSoftmax)
from .conv_extra import Conv3d, ConvTranspose1d, ConvTranspose2d
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d, ReflectionPad1d,
                      ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      CircularPad1d, CircularPad2d, CircularPad3d)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .fold import Fold, Unfold
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from .pooling_extra import MaxPool3d, AvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d
from .loss import (CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCELoss, BCEWithLogitsLoss, HuberLoss, SmoothL1Loss,
                   KLDivLoss)
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .activation_extra import (Hardswish, Hardsigmoid, SELU, CELU, GLU, PReLU, RReLU, Softsign, Threshold, Hardshrink,
                               Softshrink, Tanhshrink, Softmax2d)
from .loss_extra import (MarginRankingLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, CosineEmbeddingLoss,
                         GaussianNLLLoss, PoissonNLLLoss, MultiLabelSoftMarginLoss, MultiLabelMarginLoss,
                         MultiMarginLoss, SoftMarginLoss, HingeEmbeddingLoss, CTCLoss)
from .normalization_extra import RMSNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm
from .dropout_extra import Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
from .distance import CosineSimilarity, PairwiseDistance
from .sparse_extra import EmbeddingBag
from .container_extra import ParameterList, ParameterDict
from .transformer import (Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
                          TransformerDecoderLayer)
from .nn_more import (ChannelShuffle, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d,
                      ConvTranspose3d, FractionalMaxPool2d, FractionalMaxPool3d)

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict", "Identity", "Linear", "Bilinear", "Conv1d", "Conv2d",
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "BatchNorm1d",
    "BatchNorm2d", "LayerNorm", "GroupNorm", "Dropout", "Embedding", "Flatten", "Unflatten", "ReLU", "ReLU6",
    "LeakyReLU", "ELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh", "Tanh", "Sigmoid", "LogSigmoid", "Softmax",
    "Softmin", "LogSoftmax", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss",
    "HuberLoss", "SmoothL1Loss", "KLDivLoss", "MultiheadAttention",
]
__all__ += ["Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
            "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
            "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d",
            "CircularPad3d", "PixelShuffle", "PixelUnshuffle", "Fold", "Unfold", "Upsample", "UpsamplingNearest2d",
            "UpsamplingBilinear2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "MaxPool3d", "AvgPool3d"]
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "Transformer",
            "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer",
            "Hardswish", "Hardsigmoid", "SELU", "CELU", "GLU", "PReLU", "RReLU", "Softsign", "Threshold", "Hardshrink",
            "Softshrink", "Tanhshrink", "Softmax2d", "MarginRankingLoss", "TripletMarginLoss",
            "TripletMarginWithDistanceLoss", "CosineEmbeddingLoss", "GaussianNLLLoss", "PoissonNLLLoss",
            "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss", "MultiMarginLoss", "SoftMarginLoss",
            "HingeEmbeddingLoss", "CTCLoss", "RMSNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm",
            "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "CosineSimilarity",
            "PairwiseDistance", "EmbeddingBag", "ParameterList", "ParameterDict"]
__all__ += ["ChannelShuffle", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
            "ConvTranspose3d", "FractionalMaxPool2d", "FractionalMaxPool3d"]
