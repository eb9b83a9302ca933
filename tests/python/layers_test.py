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
