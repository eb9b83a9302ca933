"""NumPy in and out of the model (python/ext/numpy_tensor.h)."""

import numpy as np
import pytest

from conftest import make_model


def test_predict_output_views_the_tensor_without_copy(model, data):
    out = model.predict(data[0])
    # The array's memory is the C++ tensor's, kept by a capsule.
    assert type(out.base).__name__ == "PyCapsule"
    assert out.flags.writeable and out.flags.c_contiguous


def test_get_weights_are_copies_the_caller_owns(model):
    weights = model.get_weights()
    weights[0][...] = 7.0
    assert not np.any(model.get_weights()[0] == 7.0)


def test_float64_features_are_converted(model, data):
    x, y = data
    np.testing.assert_allclose(model.predict(x.astype(np.float64)),
                               model.predict(x), rtol=1e-6)


def test_fortran_order_and_strided_views_are_converted(model, data):
    x, _ = data
    want = model.predict(x)
    np.testing.assert_array_equal(model.predict(np.asfortranarray(x)), want)
    wide = np.zeros((256, 20), np.float32)
    wide[:, ::2] = x
    np.testing.assert_array_equal(model.predict(wide[:, ::2]), want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
def test_integer_label_dtypes_train(model, data, dtype):
    x, y = data
    model.fit(x, y.astype(dtype), verbose=0)


def test_python_lists_are_accepted(model):
    out = model.predict([[0.0] * 10, [1.0] * 10])
    assert out.shape == (2, 10)


def test_string_features_are_refused_by_name(model):
    with pytest.raises(ValueError, match="x: dtype <U1 is not a number"):
        model.predict(np.full((2, 10), "a"))


def test_complex_labels_are_refused_by_name(model, data):
    with pytest.raises(ValueError, match="y: dtype complex"):
        model.fit(data[0], data[1].astype(np.complex64), verbose=0)


def test_none_is_refused(model):
    with pytest.raises(ValueError, match="None"):
        model.predict(None)
