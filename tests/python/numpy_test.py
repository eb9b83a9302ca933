"""NumPy in and out of the model (python/ext/numpy_tensor.h)."""

import sys

import numpy as np
import pytest

import graphgc
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


def test_arrays_made_after_import_are_64_byte_aligned():
    assert graphgc._graphgc._numpy_allocator_name() == "graphgc_aligned64"
    for n in (1, 3, 100, 100_000):
        assert np.empty(n, np.float32).ctypes.data % 64 == 0
        assert np.zeros((n, 3), np.int64).ctypes.data % 64 == 0


def test_an_aligned_float32_array_is_lent_not_copied():
    x = np.ones((256, 10), np.float32)
    address, lent = graphgc._graphgc._features_tensor_for_testing(x)
    assert lent
    assert address == x.ctypes.data


def test_an_unaligned_array_is_copied():
    x = np.ones(2561, np.float32)[1:].reshape(256, 10)
    assert x.ctypes.data % 64 != 0
    address, lent = graphgc._graphgc._features_tensor_for_testing(x)
    assert not lent
    assert address != x.ctypes.data


def test_a_converted_array_is_lent_from_numpys_own_conversion():
    x = np.ones((256, 10), np.float64)
    address, lent = graphgc._graphgc._features_tensor_for_testing(x)
    assert lent  # NumPy's float32 copy, not a second one of ours
    assert address != x.ctypes.data


def test_a_lent_array_is_released_when_the_call_returns(model, data):
    x, y = data
    x = np.ascontiguousarray(x)
    before = sys.getrefcount(x)
    model.fit(x, y, verbose=0, validation_data=(x, y))
    model.evaluate(x, y, verbose=0)
    model.predict(x)
    assert sys.getrefcount(x) == before


def test_training_never_writes_a_lent_array(model, data):
    x, y = data
    x_before, y_before = x.copy(), y.copy()
    model.fit(x, y, epochs=2, verbose=0)
    model.predict(x)
    np.testing.assert_array_equal(x, x_before)
    np.testing.assert_array_equal(y, y_before)


def test_set_weights_copies_so_later_writes_do_not_reach_the_model(model):
    weights = [np.full(w.shape, 0.5, np.float32) for w in model.get_weights()]
    model.set_weights(weights)
    weights[0][...] = 9.0
    assert np.all(model.get_weights()[0] == 0.5)


def test_lent_and_copied_inputs_predict_the_same(model, data):
    x, _ = data
    unaligned = np.empty(x.size + 1, np.float32)[1:].reshape(x.shape)
    unaligned[...] = x
    np.testing.assert_array_equal(model.predict(unaligned), model.predict(x))


@pytest.mark.threads
def test_a_lent_array_released_by_a_thread_python_never_saw_drops_its_ref():
    x = np.ones((256, 10), np.float32)
    before = sys.getrefcount(x)
    assert graphgc._graphgc._drop_lent_tensor_on_a_new_thread_for_testing(x)
    assert sys.getrefcount(x) == before
