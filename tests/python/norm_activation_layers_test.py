"""graphgc.layers' LayerNormalization, ReLU, ELU, Softmax, Rescaling and
Dot, and the activation names (generated from the C++ layer registry with
Keras 3's arguments): signatures, values against Keras 3's formulas, bad
arguments and save/load."""

import inspect
import json
import math

import numpy as np
import pytest

import graphgc as keras
from graphgc import layers


def signature(cls):
    return {name: p.default for name, p in
            inspect.signature(cls).parameters.items()}


def predict(layer, x):
    x = np.asarray(x, dtype=np.float32)
    model = keras.Sequential([layers.Input(x.shape[1:]), layer])
    return model.predict(x, verbose=0)


def test_signatures_are_keras_3s():
    ln = signature(layers.LayerNormalization)
    assert list(ln)[:5] == ["axis", "epsilon", "center", "scale",
                            "rms_scaling"]
    assert ln["axis"] == -1 and ln["epsilon"] == pytest.approx(1e-3)
    assert ln["center"] is True and ln["scale"] is True
    relu = signature(layers.ReLU)
    assert list(relu) == ["max_value", "negative_slope", "threshold", "name"]
    assert relu["max_value"] is None
    assert signature(layers.ELU)["alpha"] == pytest.approx(1.0)
    assert signature(layers.Softmax)["axis"] == -1
    rescaling = signature(layers.Rescaling)
    assert rescaling["scale"] is inspect.Parameter.empty
    assert rescaling["offset"] == pytest.approx(0.0)
    dot = signature(layers.Dot)
    assert dot["axes"] is inspect.Parameter.empty
    assert dot["normalize"] is False
    assert inspect.signature(layers.dot).parameters["axes"].default == -1


def test_layer_normalization_normalises_each_sample():
    x = np.array([[1, 2, 3, 4], [-3, 0, 0, 7]], dtype=np.float32)
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    np.testing.assert_allclose(predict(layers.LayerNormalization(), x),
                               (x - mean) / np.sqrt(var + 1e-3), atol=1e-5)


def test_layer_normalization_weights_are_gamma_then_beta(tmp_path):
    model = keras.Sequential([layers.Input((3,)),
                              layers.LayerNormalization(name="ln")])
    gamma, beta = model.get_weights()
    np.testing.assert_array_equal(gamma, np.ones(3))
    np.testing.assert_array_equal(beta, np.zeros(3))
    model.set_weights([np.array([1, 2, 3], np.float32),
                       np.array([4, 5, 6], np.float32)])
    model.save(tmp_path / "m")
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    layer = config["config"]["layers"][1]
    assert layer["class_name"] == "LayerNormalization"
    assert layer["config"]["axis"] == [-1]
    assert layer["config"]["epsilon"] == pytest.approx(1e-3)
    loaded = keras.models.load_model(tmp_path / "m")
    x = np.array([[1, 0, -4]], dtype=np.float32)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0),
                                  model.predict(x, verbose=0))


def test_layer_normalization_refuses_an_axis_but_the_last():
    with pytest.raises(ValueError, match="LayerNormalization.*axis 1"):
        keras.Sequential([layers.Input((2, 3)),
                          layers.LayerNormalization(axis=1)])
    with pytest.raises(ValueError, match="axis"):
        layers.LayerNormalization(axis="last")


def test_relu_matches_keras_examples():
    x = [[-10, -5, 0, 5, 10]]
    np.testing.assert_array_equal(predict(layers.ReLU(), x),
                                  [[0, 0, 0, 5, 10]])
    np.testing.assert_array_equal(predict(layers.ReLU(negative_slope=0.5), x),
                                  [[-5, -2.5, 0, 5, 10]])
    np.testing.assert_array_equal(predict(layers.ReLU(max_value=5.0), x),
                                  [[0, 0, 0, 5, 5]])
    np.testing.assert_array_equal(predict(layers.ReLU(threshold=5.0), x),
                                  [[0, 0, 0, 0, 10]])


def test_relu_refuses_negative_arguments():
    with pytest.raises(ValueError, match="max_value of a ReLU layer"):
        keras.Sequential([layers.Input((2,)), layers.ReLU(max_value=-1.0)])


def test_elu_softmax_and_rescaling():
    x = np.array([[-2, 0.5, 1]], dtype=np.float32)
    np.testing.assert_allclose(predict(layers.ELU(alpha=0.5), x),
                               np.where(x > 0, x, 0.5 * np.expm1(x)),
                               atol=1e-6)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(predict(layers.Softmax(), x), e / e.sum(),
                               atol=1e-6)
    np.testing.assert_allclose(
        predict(layers.Rescaling(1 / 127.5, offset=-1), [[0, 127.5, 255]]),
        [[-1, 0, 1]], atol=1e-6)


def test_dot_and_its_function_form():
    a = keras.Input((3,))
    hidden = layers.Dense(3, use_bias=False)(a)
    out = layers.dot([a, hidden], axes=1)
    assert out.shape == (None, 1)
    model = keras.Model(a, layers.Dot(axes=-1, normalize=True)([a, hidden]))
    model.set_weights([np.diag([1, 2, 3]).astype(np.float32)])
    x = np.array([[1, 2, 3]], dtype=np.float32)
    want = 36 / math.sqrt(14 * 98)
    np.testing.assert_allclose(model.predict(x, verbose=0), [[want]],
                               rtol=1e-5)


ACTIVATIONS = {
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "selu": lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x)),
    "leaky_relu": lambda x: np.where(x > 0, x, 0.2 * x),
    "gelu": lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))),
    "swish": lambda x: x / (1 + np.exp(-x)),
    "silu": lambda x: x / (1 + np.exp(-x)),
    "softplus": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (np.abs(x) + 1),
    "relu6": lambda x: np.clip(x, 0, 6),
    "hard_sigmoid": lambda x: np.clip(x / 6 + 0.5, 0, 1),
    "exponential": np.exp,
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_names_match_keras_formulas(name):
    x = np.array([[-7, -3, -1, -0.3, 0, 0.4, 1, 2.9, 6.5]], dtype=np.float64)
    got = predict(layers.Activation(name), x)
    np.testing.assert_allclose(got, ACTIVATIONS[name](x), rtol=2e-6,
                               atol=2e-6)


def test_dense_applies_an_activation_named_in_its_arguments():
    model = keras.Sequential([layers.Input((2,)),
                              layers.Dense(3, activation="gelu", seed=1)])
    kernel, bias = model.get_weights()
    x = np.array([[1, -2]], dtype=np.float32)
    np.testing.assert_allclose(model.predict(x),
                               ACTIVATIONS["gelu"](x @ kernel + bias),
                               rtol=2e-6, atol=2e-6)
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(x, np.zeros((1, 3), np.float32), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
