"""The failures of tensorplug on PyTorch's OpInfo samples that are accepted for now, each with its reason.

Keys are PyTorch OpInfo keys (``name`` or ``name.variant_test_name``), alone (every check of the op) or
with one check: ``"<key>/forward"``, ``"/inplace"``, ``"/grad"``, ``"/error"``. ``tests/test_torch_opinfo.py``
fails on a failure not listed here and on an entry that no longer fails. ``python -m
tensorplug.testing.torch_opinfo --new-failures`` prints the entries to add.
"""

_NUMBER_SELF = ("a Python number as the first argument (op(2, t)) is accepted; PyTorch's function form "
                "raises TypeError")
_NO_OUT = "no out= argument (PyTorch's error inputs check the dtype and overlap of out=)"
_POOL_PAD = "negative padding raises 'padding must be non-negative' where PyTorch says 'pad must be non-negative'"
_TIES = ("indices of equal elements: PyTorch's default (unstable) sort orders ties in its own way; the "
         "values agree")

EXCEPTIONS: dict = {
    "normal.in_place": "Tensor.normal_ refuses a negative std on samples PyTorch accepts, and accepts the one "
                       "its error inputs refuse",
    "normal/grad": "the gradient with respect to mean is the output gradient; PyTorch defines it as zero",
    "clamp_max": "no clamp_max.Tensor / clamp_min.Tensor overload: only a Number bound",
    "clamp_min": "no clamp_max.Tensor / clamp_min.Tensor overload: only a Number bound",
    "eq/error": _NUMBER_SELF,
    "ne/error": _NUMBER_SELF,
    "ge/error": _NUMBER_SELF,
    "gt/error": _NUMBER_SELF,
    "le/error": _NUMBER_SELF,
    "lt/error": _NUMBER_SELF,
    "fmod/error": _NUMBER_SELF,
    "rsub/error": _NUMBER_SELF,
    "linspace/error": "1-element start/end tensors are converted to numbers, a 2-element one fails with "
                      "'cannot be converted to Scalar' instead of 'only supports 0-dimensional start and end "
                      "tensors'",
    "linspace.tensor_overload/error": "as linspace/error",
    "as_strided.partial_views/grad": "the gradient of a view that covers part of its storage (overlapping "
                                     "windows) is not PyTorch's as_strided_backward",
    "nn.functional.adaptive_avg_pool1d/error": "output_size of more than one int: 'output_size must be 1' "
                                               "instead of PyTorch's wording",
    "nn.functional.adaptive_avg_pool2d/error": "a 2-d input raises RuntimeError in the op; PyTorch's Python "
                                               "wrapper raises ValueError first",
    "nn.functional.avg_pool1d/error": _POOL_PAD,
    "nn.functional.avg_pool2d/error": _POOL_PAD,
    "nn.functional.max_pool1d/error": _POOL_PAD,
    "nn.functional.max_pool2d/error": _POOL_PAD,
    "nn.functional.conv1d/error": "dilation <= 0 says 'non-positive dilation is not supported' (PyTorch's "
                                  "convolution check) where the OpInfo expects 'dilation should be greater "
                                  "than zero'",
    "nn.functional.conv2d/error": "as nn.functional.conv1d/error",
    "topk/forward": _TIES,
    "sort/forward": _TIES,
    "argsort/forward": _TIES,
    "gather/error": _NO_OUT,
    "index_select/error": _NO_OUT,
    "multinomial/error": _NO_OUT,
    "bernoulli/error": _NO_OUT,
    "cat/error": _NO_OUT,
    "amax/error": _NO_OUT,
    "amin/error": _NO_OUT,
    "scatter/forward": "no reduce= argument (PyTorch's deprecated scatter(..., reduce='add'|'multiply'))",
    "norm.nuc": "the nuclear norm needs a singular value decomposition, which tensorplug does not have yet",
}
