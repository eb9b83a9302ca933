"""graphgc.optimizers and graphgc.losses: names and objects compile;
RMSprop against Keras 3's formula; the live learning rate."""

import numpy as np
import pytest

import graphgc
from conftest import make_model


@pytest.mark.parametrize("optimizer", [
    "adam", "sgd", "Adam", "rmsprop", "RMSprop",
    graphgc.optimizers.RMSprop(momentum=0.9, centered=True),
    graphgc.optimizers.Adam(learning_rate=0.01),
    graphgc.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=True)])
def test_optimizer_names_and_objects_compile(optimizer, data):
    model = make_model(compile=False)
    model.compile(optimizer=optimizer,
                  loss="sparse_categorical_crossentropy")
    model.fit(*data, verbose=0)


def test_adam_learning_rate_reaches_the_model():
    model = make_model(compile=False)
    model.compile(optimizer=graphgc.optimizers.Adam(learning_rate=0.02),
                  loss="sparse_categorical_crossentropy")
    assert model.learning_rate == pytest.approx(0.02)
    model.learning_rate = 0.005
    assert model.learning_rate == pytest.approx(0.005)


def test_unknown_optimizer_is_value_error():
    with pytest.raises(ValueError, match="adagrad"):
        make_model(compile=False).compile(
            optimizer="adagrad", loss="sparse_categorical_crossentropy")


def test_negative_learning_rate_is_value_error():
    with pytest.raises(ValueError, match="learning_rate"):
        make_model(compile=False).compile(
            optimizer=graphgc.optimizers.Adam(learning_rate=-1.0),
            loss="mse")


def test_compile_without_optimizer_uses_rmsprop_as_keras(data):
    model = make_model(compile=False)
    model.compile(loss="sparse_categorical_crossentropy")
    assert isinstance(model.optimizer, graphgc.optimizers.RMSprop)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.001)
    model.fit(*data, verbose=0)


def test_rmsprop_defaults_are_keras_3s():
    opt = graphgc.optimizers.RMSprop()
    assert float(opt.learning_rate) == pytest.approx(0.001)
    assert (opt.rho, opt.momentum, opt.epsilon, opt.centered) == (
        0.9, 0.0, 1e-7, False)


def _keras_rmsprop(w, g, state, learning_rate, rho, momentum, epsilon,
                   centered):
    """Keras 3's RMSprop.update_step (keras/src/optimizers/rmsprop.py)."""
    state["velocity"] = rho * state["velocity"] + (1 - rho) * g * g
    if centered:
        state["average_grad"] = (rho * state["average_grad"]
                                 + (1 - rho) * g)
        denominator = (state["velocity"] - state["average_grad"] ** 2
                       + epsilon)
    else:
        denominator = state["velocity"] + epsilon
    increment = learning_rate * g / np.sqrt(denominator)
    if momentum > 0:
        state["momentum"] = momentum * state["momentum"] + increment
        return w - state["momentum"]
    return w - increment


@pytest.mark.parametrize("options", [
    {},
    {"learning_rate": 0.01, "momentum": 0.9},
    {"learning_rate": 0.01, "centered": True},
    {"learning_rate": 0.01, "rho": 0.8, "momentum": 0.5, "centered": True},
])
def test_rmsprop_matches_keras_formula_step_by_step(options):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = rng.standard_normal((8, 1)).astype(np.float32)
    model = graphgc.Sequential([graphgc.layers.Input((3,)),
                                graphgc.layers.Dense(1)])
    kernel = np.array([[0.5], [-0.25], [1.0]], np.float32)
    bias = np.array([0.1], np.float32)
    model.set_weights([kernel, bias])
    model.compile(optimizer=graphgc.optimizers.RMSprop(**options),
                  loss="mse")
    full = {"learning_rate": 0.001, "rho": 0.9, "momentum": 0.0,
            "epsilon": 1e-7, "centered": False, **options}
    w = [kernel.astype(np.float64), bias.astype(np.float64)]
    states = [{"velocity": np.zeros_like(v), "momentum": np.zeros_like(v),
               "average_grad": np.zeros_like(v)} for v in w]
    for step in range(5):
        # One full batch: the gradients of mean((x @ kernel + bias - y)^2).
        err = x @ w[0] + w[1] - y
        grads = [2 * x.T @ err / len(x), 2 * err.sum(axis=0) / len(x)]
        w = [_keras_rmsprop(v, g, s, **full)
             for v, g, s in zip(w, grads, states)]
        model.fit(x, y, batch_size=len(x), epochs=1, shuffle=False,
                  verbose=0)
        got = model.get_weights()
        for have, want in zip(got, w):
            np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-6,
                                       err_msg=f"step {step}")


def test_model_optimizer_is_the_compiled_object():
    opt = graphgc.optimizers.Adam(learning_rate=0.02)
    model = make_model(compile=False)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    assert model.optimizer is opt


def test_learning_rate_assign_changes_the_models_rate():
    model = make_model()
    model.optimizer.learning_rate.assign(1e-4)
    assert float(model.optimizer.learning_rate) == pytest.approx(1e-4)
    assert model.learning_rate == pytest.approx(1e-4)
    assert model.optimizer.learning_rate.numpy() == pytest.approx(1e-4)
    assert float(np.array(model.optimizer.learning_rate)) == pytest.approx(
        1e-4)


def test_learning_rate_reads_the_rate_the_model_has():
    model = make_model()
    model.learning_rate = 0.125
    assert float(model.optimizer.learning_rate) == 0.125
    assert model.optimizer.learning_rate * 2 == 0.25
    assert model.optimizer.learning_rate < 0.2


def test_learning_rate_zero_from_a_callback_stops_the_weights(data):
    class ZeroAtEpochOne(graphgc.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.weights = []

        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 1:
                self.model.optimizer.learning_rate = 0.0

        def on_epoch_end(self, epoch, logs=None):
            self.weights.append(self.model.get_weights())

    model = make_model()
    before = model.get_weights()
    callback = ZeroAtEpochOne()
    model.fit(*data, epochs=3, verbose=0, callbacks=[callback])
    assert any(not np.array_equal(a, b)
               for a, b in zip(before, callback.weights[0]))
    for later in callback.weights[1:]:
        for a, b in zip(callback.weights[0], later):
            np.testing.assert_array_equal(a, b)
    assert float(model.optimizer.learning_rate) == 0.0


def test_learning_rate_assign_from_a_callback_takes_effect_next_step(data):
    class Lower(graphgc.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.optimizer.learning_rate.assign(1e-4)

    model = make_model()
    model.fit(*data, epochs=2, verbose=0, callbacks=[Lower()])
    assert float(model.optimizer.learning_rate) == pytest.approx(1e-4)


def test_negative_learning_rate_assignment_is_value_error():
    model = make_model()
    with pytest.raises(ValueError, match="learning_rate"):
        model.optimizer.learning_rate = -1.0
    assert float(model.optimizer.learning_rate) == pytest.approx(0.001)


def test_recompiling_detaches_the_previous_optimizer():
    model = make_model()
    first = model.optimizer
    model.compile(optimizer=graphgc.optimizers.SGD(learning_rate=0.05),
                  loss="sparse_categorical_crossentropy")
    first.learning_rate = 0.5
    assert float(model.optimizer.learning_rate) == pytest.approx(0.05)
    assert float(first.learning_rate) == 0.5
