"""The autocast op policy: which operators run in which precision, per device type, as data.

PyTorch keeps these lists in C++ (``aten/src/ATen/autocast_mode.cpp``); here they are plain Python
sets that a user reads and changes at run time::

    policy = tensorplug.amp.policy("cpu")
    policy["mm"]                      # 'lower_precision_fp'
    policy["exp"] = "fp32"            # exp under CPU autocast now computes in float32
    del policy["exp"]                 # ... and runs in its inputs' dtype again
    policy.reset()                    # PyTorch's lists

The categories are PyTorch's ``CastPolicy`` names:

``lower_precision_fp``
    floating arguments on the device are cast to the region's dtype (float16 or bfloat16);
``fp32``
    floating arguments are cast to float32;
``fp32_set_opt_dtype``
    the op has a ``dtype`` argument: when the caller gave none and the first argument is
    floating, the op runs with ``dtype=float32`` (its inputs are not cast);
``fp32_append_dtype``
    (``norm``) the op computes in float32: floating arguments are cast to float32;
``promote``
    floating arguments are cast to the widest floating dtype among them;
``banned``
    the op raises under autocast (``binary_cross_entropy`` on CUDA, as PyTorch: use the
    ``_with_logits`` form).

Ops in no list run in their inputs' dtype. An operator that tensorplug decomposes but PyTorch
computes with a kernel of its own (``mv``, ``dot``) runs its decomposition with autocast off, so
its pieces are not cast where PyTorch's kernel would not be: :data:`PYTORCH_DECOMPOSED` lists the
operators PyTorch decomposes (whose pieces autocast does reach, as in PyTorch). Float64 arguments are never cast, nor are integer,
bool and other-device arguments. Names are operator names with their overload
(``"conv2d.padding"``); a name without overload means its default overload (``"conv2d"``).

The default tables are PyTorch 2.13's (CPU: 127 operators, CUDA: 119; other devices use the CUDA
lists unless their backend says otherwise, see docs/autocast.md). They name PyTorch's operators,
including some tensorplug does not have; only operators that exist get kernels.
"""

from __future__ import annotations

import pathlib

CATEGORIES = ("lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote", "banned")


def _names(text):
    return frozenset(text.split())


# PyTorch 2.13, AutocastCPU
CPU = {
    "lower_precision_fp": _names("""
        conv1d conv1d.padding conv2d conv2d.padding conv3d conv3d.padding bmm mm linalg_vecdot baddbmm addmm
        addbmm linear _convolution.deprecated matmul conv_tbc mkldnn_rnn_layer conv_transpose1d
        conv_transpose2d.input conv_transpose3d.input prelu scaled_dot_product_attention
        _native_multi_head_attention _addmm_activation
    """),
    "fp32": _names("""
        avg_pool3d binary_cross_entropy grid_sampler polar prod prod.dim_int quantile quantile.scalar
        nanquantile nanquantile.scalar stft stft.center cdist grid_sampler_2d _grid_sampler_2d_cpu_fallback
        grid_sampler_3d trace view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr
        ormqr pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d
        reflection_pad2d replication_pad1d replication_pad2d replication_pad3d mse_loss cosine_embedding_loss
        nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss
        huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss.IntList
        ctc_loss.Tensor kl_div multilabel_margin_loss binary_cross_entropy_with_logits fft_fft fft_ifft
        fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn
        fft_hfft fft_ihfft linalg_cond linalg_cond.p_str linalg_matrix_rank linalg_matrix_rank.tol_tensor
        linalg_matrix_rank.atol_rtol_tensor linalg_matrix_rank.atol_rtol_float linalg_solve linalg_cholesky
        linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv
        linalg_tensorsolve fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd triangular_solve
        fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d multilabel_margin_loss_forward
        linalg_qr linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex
    """),
    "fp32_set_opt_dtype": frozenset(),
    "fp32_append_dtype": frozenset(),
    "promote": _names("stack cat index_copy"),
    "banned": frozenset(),
}

# PyTorch 2.13, AutocastCUDA
CUDA = {
    "lower_precision_fp": _names("""
        _convolution.deprecated _convolution conv1d conv2d conv3d conv_tbc conv_transpose1d
        conv_transpose2d.input conv_transpose3d.input convolution prelu addmm addmv addr matmul einsum mm mv
        linalg_vecdot linear addbmm baddbmm bmm chain_matmul linalg_multi_dot _thnn_fused_lstm_cell
        _thnn_fused_gru_cell lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention
        scaled_dot_product_attention cudnn_convolution cudnn_convolution_transpose
    """),
    "fp32": _names("""
        acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow.Tensor_Scalar
        pow.Tensor_Tensor pow.Scalar softplus layer_norm native_layer_norm group_norm frobenius_norm.dim
        nuclear_norm nuclear_norm.dim cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss
        nll_loss2d hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
        multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss
        binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp upsample_nearest1d
        _upsample_nearest_exact1d upsample_nearest2d _upsample_nearest_exact2d upsample_nearest3d
        _upsample_nearest_exact3d upsample_linear1d upsample_bilinear2d _upsample_bilinear2d_aa
        upsample_trilinear3d upsample_bicubic2d _upsample_bicubic2d_aa rms_norm
    """),
    "fp32_set_opt_dtype": _names("""
        prod prod.dim_int softmax.int log_softmax.int
        cumprod cumsum linalg_vector_norm linalg_matrix_norm linalg_matrix_norm.str_ord sum sum.dim_IntList
    """),
    "fp32_append_dtype": _names("norm.Scalar norm.ScalarOpt_dim"),
    "promote": _names("""
        addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot scatter_add
    """),
    "banned": _names("binary_cross_entropy"),
}

DEFAULTS = {"cpu": CPU, "cuda": CUDA}


def _read_decomposed():
    path = pathlib.Path(__file__).with_name("pytorch_decomposed.txt")
    return frozenset(line.strip() for line in path.read_text().splitlines() if line.strip() and line[0] != "#")


#: the operators PyTorch 2.13 decomposes (CompositeImplicitAutograd): autocast reaches their pieces. Plus
#: the CompositeExplicitAutograd ones whose pieces PyTorch's autocast reaches (affine_grid_generator's bmm)
PYTORCH_DECOMPOSED = _read_decomposed() | {"affine_grid_generator"}

BANNED_MESSAGE = {
    "binary_cross_entropy": (
        "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
        "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
        "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
        "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
        "safe to autocast."),
}


def _canonical(name):
    """``"conv2d"`` and ``"conv2d.default"`` are the same entry; overloads keep their suffix."""
    if name.endswith(".default"):
        name = name[: -len(".default")]
    return name


class Policy:
    """The mutable op policy of one device type: a mapping from operator name to category.

    ``policy[name]`` is the category of ``name`` (KeyError if it has none); assigning or deleting an
    entry takes effect on the next call (kernels for newly listed operators are registered at
    once). ``policy.category(name)`` is the lookup that returns None for unlisted operators.
    """

    def __init__(self, device_type, defaults, on_change):
        self.device_type = device_type
        self._defaults = defaults
        self._on_change = on_change
        self._table = {}
        self.reset()

    def reset(self):
        """Back to PyTorch's lists for this device type (plus the backend's own overrides)."""
        self._table = {_canonical(n): cat for cat, names in self._defaults().items() for n in names}
        self._on_change()

    def category(self, name):
        return self._table.get(name)

    def __getitem__(self, name):
        return self._table[_canonical(name)]

    def __setitem__(self, name, category):
        if category not in CATEGORIES:
            raise ValueError(f"unknown autocast category {category!r}; expected one of {', '.join(CATEGORIES)}")
        self._table[_canonical(name)] = category
        self._on_change()

    def __delitem__(self, name):
        del self._table[_canonical(name)]
        self._on_change()

    def __contains__(self, name):
        return _canonical(name) in self._table

    def __iter__(self):
        return iter(sorted(self._table))

    def __len__(self):
        return len(self._table)

    def names(self, category):
        """The sorted operator names of ``category``."""
        if category not in CATEGORIES:
            raise ValueError(f"unknown autocast category {category!r}; expected one of {', '.join(CATEGORIES)}")
        return sorted(n for n, c in self._table.items() if c == category)

    def as_dict(self):
        """``{category: [names]}``, a copy."""
        return {c: self.names(c) for c in CATEGORIES}

    def __repr__(self):
        counts = ", ".join(f"{c}: {len(self.names(c))}" for c in CATEGORIES)
        return f"<autocast policy for {self.device_type!r}: {counts}>"


def markdown_tables():
    """The default lists as the markdown docs/autocast.md shows (between its generated markers)."""
    out = []
    for device, table in DEFAULTS.items():
        total = sum(len(v) for v in table.values())
        out.append(f"#### `{device}` ({total} operators)\n")
        out.append("| category | operators |")
        out.append("| --- | --- |")
        for cat in CATEGORIES:
            names = sorted(table[cat])
            out.append(f"| `{cat}` | {', '.join(f'`{n}`' for n in names) if names else '-'} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
