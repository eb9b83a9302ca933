"""Model.train_on_batch, test_on_batch and predict_on_batch (Keras 3's),
on Sequential and functional models."""

import numpy as np
import pytest

import graphgc
from graphgc import layers


def _linear(metrics=None, lr=0.1):
    """Input(3) -> Dense(1), SGD, MSE: one step is checkable by hand."""
    m = graphgc.Sequential([layers.Input((3,)), layers.Dense(1, seed=1)])
    m.compile(optimizer=graphgc.optimizers.SGD(learning_rate=lr), loss="mse",
              metrics=metrics)
    return m


def _batch(n=5, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, 3), dtype=np.float32),
            rng.random((n, 1), dtype=np.float32))


def _mse_and_step(weights, x, y, lr, w=None):
    """The MSE of the batch and the weights after one SGD step on it."""
    kernel, bias = (a.astype(np.float64) for a in weights)
    err = x @ kernel + bias - y
    w = np.ones(len(x)) if w is None else np.asarray(w, np.float64)
    loss = np.sum(w * np.mean(err ** 2, axis=1)) / len(x)
    g = 2 * (w[:, None] * err) / len(x)
    return loss, [kernel - lr * (x.T @ g), bias - lr * g.sum(axis=0)]


def test_train_on_batch_takes_one_step_on_exactly_the_batch():
    x, y = _batch()
    m = _linear()
    loss, after = _mse_and_step(m.get_weights(), x, y, 0.1)
    out = m.train_on_batch(x, y)
    assert isinstance(out, float)
    assert out == pytest.approx(loss, rel=1e-5)
    for got, want in zip(m.get_weights(), after):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_train_on_batch_weighs_the_loss_by_sample_weight():
    x, y = _batch()
    sw = np.array([1, 0, 2, 0.5, 1], np.float32)
    m = _linear()
    loss, after = _mse_and_step(m.get_weights(), x, y, 0.1, sw)
    assert m.train_on_batch(x, y, sample_weight=sw) == pytest.approx(
        loss, rel=1e-5)
    for got, want in zip(m.get_weights(), after):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_train_on_batch_refuses_sample_and_class_weight_together():
    x, y = _batch()
    with pytest.raises(ValueError, match="class_weight"):
        _linear().train_on_batch(x, y, sample_weight=np.ones(5),
                                 class_weight={0: 1.0})


def test_train_on_batch_returns_loss_and_metrics_of_that_batch():
    x1, y1 = _batch(seed=1)
    x2, y2 = _batch(seed=2)
    m = _linear(metrics=["mae"])
    m.train_on_batch(x1, y1)
    expected = m.evaluate(x2, y2, batch_size=5, return_dict=True)
    out = m.train_on_batch(x2, y2)
    assert isinstance(out, list) and len(out) == 2
    # Computed before the step, on this batch alone (not a running mean).
    assert out[0] == pytest.approx(expected["loss"], rel=1e-5)
    assert out[1] == pytest.approx(expected["mae"], rel=1e-5)
    logs = m.train_on_batch(x2, y2, return_dict=True)
    assert sorted(logs) == ["loss", "mae"]


def test_train_on_batch_leaves_model_history_alone():
    x, y = _batch()
    m = _linear()
    history = m.fit(x, y, epochs=1, verbose=0)
    m.train_on_batch(x, y)
    assert m.history is history


def test_test_on_batch_evaluates_without_training():
    x, y = _batch()
    m = _linear(metrics=["mae"])
    weights = m.get_weights()
    out = m.test_on_batch(x, y)
    assert out == pytest.approx(m.evaluate(x, y, batch_size=5), rel=1e-6)
    assert out[0] == pytest.approx(_mse_and_step(weights, x, y, 0.1)[0],
                                   rel=1e-5)
    assert m.test_on_batch(x, y, return_dict=True).keys() == {"loss", "mae"}
    for a, b in zip(weights, m.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_test_on_batch_without_metrics_is_the_loss_and_takes_sample_weight():
    x, y = _batch()
    sw = np.array([1, 0, 2, 0.5, 1], np.float32)
    m = _linear()
    want = _mse_and_step(m.get_weights(), x, y, 0.1, sw)[0]
    out = m.test_on_batch(x, y, sample_weight=sw)
    assert isinstance(out, float)
    assert out == pytest.approx(want, rel=1e-5)


def test_predict_on_batch_is_predict_on_the_whole_batch():
    x, _ = _batch(n=70)
    m = _linear()
    out = m.predict_on_batch(x)
    assert out.shape == (70, 1)
    np.testing.assert_allclose(out, m.predict(x), rtol=1e-6)


def _two_outputs():
    inp = graphgc.Input((3,), name="x")
    a = layers.Dense(1, name="a", seed=1)(inp)
    b = layers.Dense(2, activation="softmax", name="b", seed=2)(inp)
    m = graphgc.Model(inp, [a, b])
    m.compile(optimizer="sgd",
              loss=["mse", "sparse_categorical_crossentropy"],
              metrics=[[], ["accuracy"]])
    return m


def test_batch_methods_on_a_functional_model_of_two_outputs():
    rng = np.random.default_rng(3)
    x = rng.random((6, 3), dtype=np.float32)
    ya = rng.random((6, 1), dtype=np.float32)
    yb = rng.integers(0, 2, 6).astype(np.int32)
    m = _two_outputs()
    expected = m.evaluate(x, [ya, yb], batch_size=6)
    assert m.test_on_batch(x, [ya, yb]) == pytest.approx(expected, rel=1e-6)
    out = m.train_on_batch(x, [ya, yb])
    assert out == pytest.approx(expected, rel=1e-5)
    logs = m.train_on_batch(x, {"a": ya, "b": yb}, return_dict=True)
    assert set(logs) == {"loss", "a_loss", "b_loss", "b_accuracy"}
    pa, pb = m.predict_on_batch(x)
    np.testing.assert_allclose(pa, m.predict(x)[0], rtol=1e-6)
    assert pb.shape == (6, 2)
