"""graphgc.layers: Keras's layer constructors build models of every kind."""

import numpy as np
import pytest

import graphgc
from graphgc import layers


def test_dense_layer_reports_units_and_name():
    dense = layers.Dense(7, activation="relu", name="hidden")
    model = graphgc.Sequential([layers.Input((3,)), dense])
    assert dense.units == 7
    assert dense.built
    assert dense.name.startswith("hidden")
    assert model.layers == [dense]


def test_image_layers_build_a_convolutional_model():
    model = graphgc.Sequential([
        layers.Input((8, 8, 1)),
        layers.Conv2D(4, 3, activation="relu", padding="same"),
        layers.BatchNormalization(),
        layers.MaxPooling2D((2, 2)),
        layers.Dropout(0.25, seed=3),
        layers.Flatten(),
        layers.Reshape((8, 8)),
        layers.Flatten(),
        layers.Dense(3),
        layers.Activation("softmax"),
    ])
    out = model.predict(np.zeros((5, 8, 8, 1), np.float32))
    assert out.shape == (5, 3)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)
    kinds = [type(layer).__name__ for layer in model.layers]
    assert kinds == ["Conv2D", "BatchNormalization", "MaxPooling2D",
                     "Dropout", "Flatten", "Reshape", "Flatten", "Dense",
                     "Activation"]


def test_layer_shared_by_two_models_shares_its_weights():
    shared = layers.Dense(4, seed=5)
    a = graphgc.Sequential([layers.Input((3,)), shared])
    b = graphgc.Sequential([layers.Input((3,)), shared])
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)


def test_unknown_activation_is_refused_when_the_model_is_made():
    with pytest.raises(ValueError, match="activation"):
        graphgc.Sequential([layers.Input((3,)),
                            layers.Dense(4, activation="swishy")])


def test_callable_activation_is_refused_by_name():
    with pytest.raises(ValueError, match="activation"):
        layers.Dense(4, activation=lambda t: t)


def test_bad_kernel_size_is_refused():
    with pytest.raises(ValueError, match="kernel_size"):
        layers.Conv2D(4, "three")


def test_negative_seed_is_refused_by_name():
    with pytest.raises(ValueError, match="Dense: seed"):
        layers.Dense(4, seed=-1)


def test_keras_input_is_the_top_level_input():
    assert graphgc.Input is layers.Input
    model = graphgc.Sequential([graphgc.Input(shape=(4,)), layers.Dense(2)])
    assert model.predict(np.zeros((3, 4), np.float32)).shape == (3, 2)


def test_input_takes_a_batch_shape():
    model = graphgc.Sequential([layers.Input(batch_shape=(None, 4)),
                                layers.Dense(2)])
    assert model.predict(np.zeros((1, 4), np.float32)).shape == (1, 2)


@pytest.mark.parametrize("kwargs, message", [
    ({}, "You must pass a `shape` argument."),
    ({"shape": (4,), "batch_shape": (None, 4)},
     "You cannot pass both `shape` and `batch_shape` at the same time."),
    ({"shape": (4,), "dtype": "int32"}, "float32"),
    ({"shape": (4,), "sparse": True}, "sparse"),
])
def test_input_refuses_what_keras_or_graphgc_refuses(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("`", ".")):
        layers.Input(**kwargs)


def test_sequential_takes_the_input_layer_of_a_keras_history():
    class SymbolicTensor:  # a tensor of another library, Keras's own test
        def __init__(self, layer):
            self._keras_history = (layer, 0, 0)

    inp = layers.InputLayer((4,))
    model = graphgc.Sequential([SymbolicTensor(inp), layers.Dense(2)])
    assert model.predict(np.zeros((1, 4), np.float32)).shape == (1, 2)


@pytest.mark.parametrize("kwargs", [{"input_shape": (4,)}, {"input_dim": 4}])
def test_first_layer_input_shape_starts_the_model_with_an_input(kwargs):
    with pytest.warns(UserWarning, match="Do not pass an `input_shape`"):
        dense = layers.Dense(2, **kwargs)
    model = graphgc.Sequential([dense, layers.Dense(3)])
    assert model.layers[0] is dense
    assert model.predict(np.zeros((5, 4), np.float32)).shape == (5, 3)


def test_add_of_a_layer_with_input_shape_to_an_empty_model_builds_it():
    model = graphgc.Sequential()
    with pytest.warns(UserWarning):
        model.add(layers.Dense(2, input_shape=(4,)))
    assert model.predict(np.zeros((1, 4), np.float32)).shape == (1, 2)
