"""graphgc.utils: Keras 3's keras.utils.to_categorical and normalize (their
NumPy path, keras/src/utils/numerical_utils.py)."""

import numpy as np
import pytest

import graphgc
from graphgc import utils


def test_utils_is_reachable_as_keras_utils():
    assert graphgc.utils.to_categorical is utils.to_categorical
    assert graphgc.utils.normalize is utils.normalize


def test_to_categorical_gives_one_hot_rows():
    out = utils.to_categorical([0, 1, 2, 3], num_classes=4)
    np.testing.assert_array_equal(out, np.eye(4))


def test_to_categorical_returns_float64_as_keras_3():
    assert utils.to_categorical(np.array([1, 0], np.uint8), 3).dtype == \
        np.float64


def test_to_categorical_infers_num_classes_from_the_largest_id():
    assert utils.to_categorical([0, 2]).shape == (2, 3)
    # Keras tests `not num_classes`: 0 infers too.
    assert utils.to_categorical([0, 4], num_classes=0).shape == (2, 5)


def test_to_categorical_drops_a_trailing_dimension_of_one():
    out = utils.to_categorical(np.array([[1], [0]]), 2)
    np.testing.assert_array_equal(out, [[0, 1], [1, 0]])


def test_to_categorical_keeps_other_dimensions_and_adds_the_class_axis():
    out = utils.to_categorical(np.array([[0, 1, 2], [2, 1, 0]]), 3)
    assert out.shape == (2, 3, 3)
    np.testing.assert_array_equal(out[1, 0], [0, 0, 1])


def test_to_categorical_of_a_scalar_is_one_row():
    np.testing.assert_array_equal(utils.to_categorical(2, 3), [0, 0, 1])


def test_to_categorical_truncates_float_ids_as_int64_conversion_does():
    np.testing.assert_array_equal(utils.to_categorical([1.9], 3), [[0, 1, 0]])


def test_to_categorical_with_an_id_past_num_classes_is_index_error():
    with pytest.raises(IndexError):
        utils.to_categorical([3], num_classes=3)


def test_normalize_gives_unit_l2_rows():
    x = np.array([[3.0, 4.0], [1.0, 0.0]])
    np.testing.assert_allclose(utils.normalize(x), [[0.6, 0.8], [1.0, 0.0]])


def test_normalize_leaves_zero_rows_zero():
    out = utils.normalize(np.array([[0.0, 0.0], [0.0, 2.0]]))
    np.testing.assert_array_equal(out, [[0, 0], [0, 1]])


def test_normalize_takes_order_and_axis():
    x = np.array([[1.0, 3.0], [1.0, 1.0]])
    np.testing.assert_allclose(utils.normalize(x, order=1),
                               [[0.25, 0.75], [0.5, 0.5]])
    np.testing.assert_allclose(utils.normalize(x, axis=0),
                               [[1 / np.sqrt(2), 3 / np.sqrt(10)],
                                [1 / np.sqrt(2), 1 / np.sqrt(10)]])


def test_normalize_keeps_float32_and_returns_a_copy():
    x = np.array([[3.0, 4.0]], np.float32)
    out = utils.normalize(x)
    assert out.dtype == np.float32
    assert out is not x and x[0, 0] == 3.0


def test_normalize_of_a_1d_array_is_one_row_as_keras_numpy_path():
    out = utils.normalize(np.array([3.0, 4.0]))
    np.testing.assert_allclose(out, [[0.6, 0.8]])


def test_normalize_of_a_list_keeps_its_shape_as_keras_tensor_path():
    out = utils.normalize([3, 4])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [0.6, 0.8], rtol=1e-6)
    np.testing.assert_array_equal(utils.normalize([0.0, 0.0]), [0, 0])
    np.testing.assert_allclose(utils.normalize([[1, 3]], order=1),
                               [[0.25, 0.75]])


def test_normalize_of_a_list_with_order_below_one_is_value_error():
    with pytest.raises(ValueError, match="Argument `order` must be an int"):
        utils.normalize([1.0], order=0)
