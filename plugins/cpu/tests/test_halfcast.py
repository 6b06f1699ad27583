"""The bit-level float32 <-> bfloat16 conversions give ml_dtypes' bits, special values included."""

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

from tensorplug_cpu import halfcast  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)


def _values():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(20000) * 10.0 ** rng.integers(-40, 38, 20000)).astype(np.float32)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4e38, -3.4e38, 1e-45, 1.0, 1.00390625,
                        1.01171875], np.float32)  # the last two are ties, rounding to even
    signalling = np.array([0x7F800001, 0xFF800001], np.uint32).view(np.float32)
    return np.concatenate([special, signalling, x])


def test_narrow_matches_ml_dtypes_and_keeps_nan():
    x = _values()
    got, want = halfcast.narrow(x), x.astype(BF16)
    finite = ~np.isnan(x)
    assert np.array_equal(got.view(np.uint16)[finite], want.view(np.uint16)[finite])
    assert np.isnan(got.astype(np.float32)[~finite]).all()
    assert np.array_equal(np.signbit(got.astype(np.float32)), np.signbit(x))


def test_widen_is_exact_and_shapes_and_strides_are_kept():
    b = _values().astype(BF16).reshape(2, -1)
    assert np.array_equal(halfcast.widen(b), b.astype(np.float32), equal_nan=True)
    assert np.array_equal(halfcast.widen(b[:, ::3]), b[:, ::3].astype(np.float32), equal_nan=True)
    x0 = np.array(1.5, np.float32)
    assert halfcast.narrow(x0).shape == () and halfcast.widen(x0.astype(BF16)).shape == ()
    assert halfcast.narrow(_values()[::2]).shape == _values()[::2].shape


def test_astype_takes_the_fast_path_only_between_float32_and_bfloat16():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    big = np.linspace(-3, 3, halfcast.SMALL * 2, dtype=np.float32)
    assert np.array_equal(halfcast.astype(big, BF16).view(np.uint16), big.astype(BF16).view(np.uint16))
    assert np.array_equal(halfcast.to_float32(big.astype(BF16)), big.astype(BF16).astype(np.float32))
    assert halfcast.astype(x, BF16).dtype == BF16
    assert halfcast.astype(x.astype(BF16), np.float32).dtype == np.float32
    assert halfcast.astype(x, np.float16).dtype == np.float16
    assert halfcast.astype(x.astype(np.float64), BF16).dtype == BF16
