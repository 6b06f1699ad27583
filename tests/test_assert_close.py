"""tensorplug.testing.assert_close: PyTorch's defaults, checks and message format (torch not needed here;
tests/test_assert_close_torch_oracle.py compares the messages with torch's)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing import assert_close


def test_default_tolerances_per_dtype():
    assert_close(tp.tensor([1.0]), tp.tensor([1.0 + 1e-6]))                       # float32: rtol 1.3e-6
    with pytest.raises(AssertionError):
        assert_close(tp.tensor([1.0]), tp.tensor([1.0 + 1e-4]))
    assert_close(tp.tensor([1.0], dtype=tp.float16), tp.tensor([1.0009765625], dtype=tp.float16))
    assert_close(tp.tensor([1.0], dtype=tp.bfloat16), tp.tensor([1.0078125], dtype=tp.bfloat16))
    with pytest.raises(AssertionError):
        assert_close(tp.tensor([1.0], dtype=tp.float64), tp.tensor([1.0 + 1e-6], dtype=tp.float64))
    with pytest.raises(AssertionError, match="Tensor-likes are not equal!"):
        assert_close(tp.tensor([1, 2]), tp.tensor([1, 3]))


def test_message_format():
    with pytest.raises(AssertionError) as e:
        assert_close(tp.tensor([1.0, 2.0, 3.0]), tp.tensor([1.0, 2.5, 3.0]))
    assert str(e.value) == ("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                            "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
                            "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)")
    with pytest.raises(AssertionError) as e:
        assert_close(1.0, 1.5)
    assert str(e.value) == ("Scalars are not close!\n\nExpected 1.5 but got 1.0.\n"
                            "Absolute difference: 0.5 (up to 1e-07 allowed)\n"
                            "Relative difference: 0.3333333333333333 (up to 1e-07 allowed)")


def test_metadata_checks():
    with pytest.raises(AssertionError, match=r"The values for attribute 'shape' do not match: \(2,\) != \(3,\)\."):
        assert_close(tp.ones(2), tp.ones(3))
    with pytest.raises(AssertionError, match="The values for attribute 'dtype' do not match: tensorplug.float32 != "
                                             "tensorplug.float64."):
        assert_close(tp.ones(2), tp.ones(2, dtype=tp.float64))
    assert_close(tp.ones(2), tp.ones(2, dtype=tp.float64), check_dtype=False)
    with pytest.raises(AssertionError, match="The values for attribute 'device' do not match: cpu != openreg:0."):
        assert_close(tp.ones(2), tp.ones(2, device="openreg"))
    assert_close(tp.ones(2), tp.ones(2, device="openreg"), check_device=False)
    with pytest.raises(AssertionError, match="stride"):
        assert_close(tp.ones(2, 2), tp.ones(2, 2).t().contiguous().t(), check_stride=True)


def test_nan_inf_and_custom_tolerances():
    nan = float("nan")
    with pytest.raises(AssertionError):
        assert_close(tp.tensor([nan]), tp.tensor([nan]))
    assert_close(tp.tensor([nan, 1.0]), tp.tensor([nan, 1.0]), equal_nan=True)
    assert_close(tp.tensor([float("inf")]), tp.tensor([float("inf")]))
    with pytest.raises(AssertionError):
        assert_close(tp.tensor([float("inf")]), tp.tensor([-float("inf")]))
    assert_close(tp.tensor([1.0]), tp.tensor([1.5]), rtol=0, atol=0.5)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                                         "atol."):
        assert_close(tp.ones(1), tp.ones(1), rtol=1e-3)


def test_containers_and_msg():
    assert_close({"a": [tp.ones(2), 1.0], "b": (True, None)}, {"a": [tp.ones(2), 1.0], "b": (True, None)})
    with pytest.raises(AssertionError, match=r"The failure occurred for item \['a'\]\[0\]$"):
        assert_close({"a": [tp.tensor(1.0)]}, {"a": [tp.tensor(0.0)]})
    with pytest.raises(AssertionError, match="The length of the sequences mismatch: 2 != 3"):
        assert_close([1, 2], [1, 2, 3])
    with pytest.raises(AssertionError, match="Missing keys in the actual mapping: \\['b'\\]"):
        assert_close({"a": 1}, {"b": 1})
    with pytest.raises(AssertionError, match="^boom$"):
        assert_close(tp.ones(2), tp.zeros(2), msg="boom")
    with pytest.raises(AssertionError, match="^custom: Tensor-likes"):
        assert_close(tp.ones(2), tp.zeros(2), msg=lambda m: "custom: " + m)
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
        assert_close(tp.ones(1), [1.0])
    with pytest.raises(AssertionError, match="The \\(d\\)types do not match"):
        assert_close(1, 1.0)
    with pytest.raises(AssertionError, match="None mismatch"):
        assert_close(None, 1)
    assert_close(np.ones(3), np.ones(3))


def test_conformance_kit_keeps_its_own_comparison():
    from tensorplug.testing import check_close as kit_close
    kit_close(tp.ones(2), tp.ones(2), 1e-6, 1e-6, "what")
    with pytest.raises(AssertionError, match="what"):
        kit_close(tp.ones(2), tp.zeros(2), 1e-6, 1e-6, "what")
