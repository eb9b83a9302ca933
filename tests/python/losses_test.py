"""graphgc.losses: each loss by name and by object."""

import numpy as np
import pytest

import graphgc
from conftest import make_model


@pytest.mark.parametrize("loss", [
    "sparse_categorical_crossentropy",
    graphgc.losses.SparseCategoricalCrossentropy()])
def test_sparse_categorical_crossentropy_takes_integer_labels(loss, data):
    model = make_model(compile=False)
    model.compile(optimizer="adam", loss=loss)
    history = model.fit(*data, verbose=0)
    assert np.isfinite(history.history["loss"][0])


@pytest.mark.parametrize("loss", [
    "categorical_crossentropy", graphgc.losses.CategoricalCrossentropy()])
def test_categorical_crossentropy_takes_one_hot_labels(loss, data):
    x, y = data
    model = make_model(compile=False)
    model.compile(optimizer="adam", loss=loss)
    one_hot = np.eye(10, dtype=np.float32)[y]
    history = model.fit(x, one_hot, verbose=0)
    assert np.isfinite(history.history["loss"][0])


@pytest.mark.parametrize("loss", ["mse", "mean_squared_error",
                                  graphgc.losses.MeanSquaredError()])
def test_mean_squared_error_takes_float_targets(loss, data):
    x, _ = data
    model = graphgc.Sequential([graphgc.layers.Input((10,)),
                                graphgc.layers.Dense(1)])
    model.compile(optimizer="sgd", loss=loss)
    target = x.sum(axis=1, keepdims=True)
    first = model.evaluate(x, target)
    model.fit(x, target, epochs=5, verbose=0)
    assert model.evaluate(x, target) < first


def test_unknown_loss_is_value_error():
    with pytest.raises(ValueError, match="hinge"):
        make_model(compile=False).compile(optimizer="adam", loss="hinge")
