"""graphgc.layers.LSTM and GRU: generated from the C++ layer registry
(models/layers/lstm.cc, gru.cc) with Keras 3's keyword arguments, in
Sequential and functional models."""

import inspect

import numpy as np
import pytest

import graphgc as keras
from graphgc import layers


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def lstm_reference(x, kernel, recurrent, bias, backwards=False):
    """Keras's LSTMCell over x [batch, steps, features] from zero states:
    every step's h, in the order the steps ran."""
    units = recurrent.shape[0]
    h = np.zeros((x.shape[0], units))
    c = np.zeros((x.shape[0], units))
    out = []
    steps = range(x.shape[1] - 1, -1, -1) if backwards else range(x.shape[1])
    for t in steps:
        z = x[:, t] @ kernel + h @ recurrent + bias
        i, f, g, o = np.split(z, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        out.append(h)
    return np.stack(out, axis=1)


def test_lstm_takes_keras_3_arguments():
    params = inspect.signature(layers.LSTM).parameters
    assert list(params)[:4] == ["units", "activation", "recurrent_activation",
                                "use_bias"]
    assert params["activation"].default == "tanh"
    assert params["recurrent_activation"].default == "sigmoid"
    assert params["unit_forget_bias"].default is True
    assert params["return_sequences"].default is False


@pytest.mark.parametrize("backwards", [False, True])
def test_lstm_matches_keras_equations_on_set_weights(backwards):
    rng = np.random.default_rng(0)
    model = keras.Sequential([
        layers.Input((3, 4)),
        layers.LSTM(5, return_sequences=True, go_backwards=backwards)])
    kernel = rng.normal(size=(4, 20)).astype(np.float32)
    recurrent = rng.normal(size=(5, 20)).astype(np.float32)
    bias = rng.normal(size=(20,)).astype(np.float32)
    model.set_weights([kernel, recurrent, bias])
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        model.predict(x, verbose=0),
        lstm_reference(x, kernel, recurrent, bias, backwards),
        rtol=1e-5, atol=1e-5)


def test_embedding_lstm_dense_learns_a_sequence_task(tmp_path):
    # Whether token 1 occurs in a sequence of 8 tokens out of 6.
    rng = np.random.default_rng(1)
    x = rng.integers(2, 6, size=(256, 8))
    marked = rng.random(256) < 0.5
    x[marked, rng.integers(0, 8, size=marked.sum())] = 1
    x = x.astype(np.float32)
    y = marked.astype(np.float32)[:, None]
    tokens = keras.Input((8,))
    h = layers.LSTM(16, seed=3)(layers.Embedding(6, 8, seed=2)(tokens))
    model = keras.Model(tokens, layers.Dense(1, activation="sigmoid",
                                             seed=4)(h))
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.02),
                  loss="binary_crossentropy")
    history = model.fit(x, y, epochs=10, batch_size=32, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    model.save(tmp_path / "model")
    loaded = keras.models.load_model(tmp_path / "model")
    np.testing.assert_allclose(loaded.predict(x, verbose=0),
                               model.predict(x, verbose=0),
                               rtol=1e-6, atol=1e-6)


def gru_reference(x, kernel, recurrent, bias):
    """Keras's GRUCell (reset_after=True) over x from a zero state: the
    last h."""
    units = recurrent.shape[0]
    h = np.zeros((x.shape[0], units))
    for t in range(x.shape[1]):
        xz = x[:, t] @ kernel + bias[0]
        inner = h @ recurrent + bias[1]
        z = sigmoid(xz[:, :units] + inner[:, :units])
        r = sigmoid(xz[:, units:2 * units] + inner[:, units:2 * units])
        hh = np.tanh(xz[:, 2 * units:] + r * inner[:, 2 * units:])
        h = z * h + (1 - z) * hh
    return h


def test_gru_matches_keras_equations_on_set_weights():
    params = inspect.signature(layers.GRU).parameters
    assert params["reset_after"].default is True
    rng = np.random.default_rng(5)
    model = keras.Sequential([layers.Input((3, 4)), layers.GRU(5)])
    kernel = rng.normal(size=(4, 15)).astype(np.float32)
    recurrent = rng.normal(size=(5, 15)).astype(np.float32)
    bias = rng.normal(size=(2, 15)).astype(np.float32)
    model.set_weights([kernel, recurrent, bias])
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0),
                               gru_reference(x, kernel, recurrent, bias),
                               rtol=1e-5, atol=1e-5)
    # 3 * 5 * (4 + 5 + 2).
    assert model.count_params() == 165


def test_lstm_counts_keras_params():
    model = keras.Sequential([layers.Input((80,)),
                              layers.Embedding(10000, 64),
                              layers.LSTM(64), layers.Dense(1)])
    # 640000 + 4 * 64 * (64 + 64 + 1) + 65.
    assert model.count_params() == 640000 + 33024 + 65


@pytest.mark.parametrize("kwargs,what", [
    ({"return_state": True}, "return_state=True"),
    ({"dropout": 0.2}, "dropout=0.2"),
    ({"recurrent_dropout": 0.5}, "recurrent_dropout=0.5"),
    ({"stateful": True}, "stateful"),
])
def test_lstm_refuses_what_it_does_not_implement(kwargs, what):
    with pytest.raises(Exception, match=what):
        keras.Sequential([layers.Input((3, 4)), layers.LSTM(5, **kwargs)])
