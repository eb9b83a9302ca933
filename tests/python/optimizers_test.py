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
    with pytest.raises(ValueError, match="ftrl"):
        make_model(compile=False).compile(
            optimizer="ftrl", loss="sparse_categorical_crossentropy")


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


# --- The other Keras optimizers and the base keywords ---

def _keras_steps(update, x, y, kernel, bias, steps=5, clip=None,
                 weight_decay=None, learning_rate=None):
    """Weights after each full-batch step of mean((x @ k + b - y)^2), with
    Keras's base optimizer around `update(w, g, state, t)`: clip, decay,
    update (keras/src/optimizers/base_optimizer.py)."""
    w = [kernel.astype(np.float64), bias.astype(np.float64)]
    states = [{} for _ in w]
    out = []
    for t in range(1, steps + 1):
        err = x @ w[0] + w[1] - y
        grads = [2 * x.T @ err / len(x), 2 * err.sum(axis=0) / len(x)]
        if clip is not None:
            grads = clip(grads)
        if weight_decay is not None:
            w = [v - v * weight_decay * learning_rate for v in w]
        w = [update(v, g, s, t) for v, g, s in zip(w, grads, states)]
        out.append(w)
    return out


def _dense_problem():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = rng.standard_normal((8, 1)).astype(np.float32)
    kernel = np.array([[0.5], [-0.25], [1.0]], np.float32)
    bias = np.array([0.1], np.float32)
    return x, y, kernel, bias


def _expect_fit_matches(optimizer, want, x, y, kernel, bias):
    model = graphgc.Sequential([graphgc.layers.Input((3,)),
                                graphgc.layers.Dense(1)])
    model.set_weights([kernel, bias])
    model.compile(optimizer=optimizer, loss="mse")
    for step, w in enumerate(want):
        model.fit(x, y, batch_size=len(x), epochs=1, shuffle=False,
                  verbose=0)
        for have, expected in zip(model.get_weights(), w):
            np.testing.assert_allclose(have, expected, rtol=1e-4, atol=1e-6,
                                       err_msg=f"step {step + 1}")


def _slot(state, name, like, init=0.0):
    if name not in state:
        state[name] = np.full_like(like, init)
    return state[name]


def _sgd(lr, momentum=0.0, nesterov=False):
    def update(w, g, s, t):
        m = momentum * _slot(s, "m", w) - lr * g
        s["m"] = m
        if nesterov:
            return w + momentum * m - lr * g
        return w + m if momentum else w - lr * g
    return update


def _adam(lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False):
    def update(w, g, s, t):
        alpha = lr * np.sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
        m = _slot(s, "m", w) + (g - _slot(s, "m", w)) * (1 - beta_1)
        v = _slot(s, "v", w) + (g * g - _slot(s, "v", w)) * (1 - beta_2)
        s["m"], s["v"] = m, v
        if amsgrad:
            s["v_hat"] = np.maximum(_slot(s, "v_hat", w), v)
            v = s["v_hat"]
        return w - m * alpha / (np.sqrt(v) + epsilon)
    return update


def _adagrad(lr, initial_accumulator_value=0.1, epsilon=1e-7):
    def update(w, g, s, t):
        s["acc"] = _slot(s, "acc", w, initial_accumulator_value) + g * g
        return w - lr * g / np.sqrt(s["acc"] + epsilon)
    return update


def _adamax(lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    def update(w, g, s, t):
        s["m"] = _slot(s, "m", w) + (g - _slot(s, "m", w)) * (1 - beta_1)
        s["u"] = np.maximum(beta_2 * _slot(s, "u", w), np.abs(g))
        return w - lr * s["m"] / ((1 - beta_1 ** t) * (s["u"] + epsilon))
    return update


def _nadam(lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    def update(w, g, s, t):
        u_t = beta_1 * (1 - 0.5 * 0.96 ** t)
        u_t_1 = beta_1 * (1 - 0.5 * 0.96 ** (t + 1))
        s["u_product"] = s.get("u_product", 1.0) * u_t
        u_product_t_1 = s["u_product"] * u_t_1
        s["m"] = _slot(s, "m", w) + (g - _slot(s, "m", w)) * (1 - beta_1)
        s["v"] = _slot(s, "v", w) + (g * g - _slot(s, "v", w)) * (1 - beta_2)
        m_hat = (u_t_1 * s["m"] / (1 - u_product_t_1)
                 + (1 - u_t) * g / (1 - s["u_product"]))
        v_hat = s["v"] / (1 - beta_2 ** t)
        return w - m_hat * lr / (np.sqrt(v_hat) + epsilon)
    return update


def _adadelta(lr, rho=0.95, epsilon=1e-7):
    def update(w, g, s, t):
        def rms(v):
            return np.sqrt(v + epsilon)
        s["ag"] = rho * _slot(s, "ag", w) + (1 - rho) * g * g
        delta = -rms(_slot(s, "ad", w)) * g / rms(s["ag"])
        s["ad"] = rho * _slot(s, "ad", w) + (1 - rho) * delta * delta
        return w + lr * delta
    return update


def _lion(lr, beta_1=0.9, beta_2=0.99):
    def update(w, g, s, t):
        m = _slot(s, "m", w)
        out = w - lr * np.sign(m * beta_1 + g * (1 - beta_1))
        s["m"] = m * beta_2 + g * (1 - beta_2)
        return out
    return update


@pytest.mark.parametrize("cls,options,update", [
    ("SGD", {"learning_rate": 0.05, "momentum": 0.9}, _sgd),
    ("SGD", {"learning_rate": 0.05, "momentum": 0.9, "nesterov": True},
     _sgd),
    ("Adam", {"learning_rate": 0.05}, _adam),
    ("Adam", {"learning_rate": 0.05, "amsgrad": True}, _adam),
    ("Adagrad", {"learning_rate": 0.1}, _adagrad),
    ("Adamax", {"learning_rate": 0.05}, _adamax),
    ("Nadam", {"learning_rate": 0.05}, _nadam),
    ("Adadelta", {"learning_rate": 1.0, "epsilon": 1e-3}, _adadelta),
    ("Lion", {"learning_rate": 0.01}, _lion),
])
def test_optimizer_matches_keras_formula_step_by_step(cls, options, update):
    x, y, kernel, bias = _dense_problem()
    want = _keras_steps(update(
        options["learning_rate"],
        **{k: v for k, v in options.items() if k != "learning_rate"}),
        x, y, kernel, bias)
    _expect_fit_matches(getattr(graphgc.optimizers, cls)(**options), want,
                        x, y, kernel, bias)


def test_adamw_decays_before_adams_update_as_keras():
    x, y, kernel, bias = _dense_problem()
    want = _keras_steps(_adam(0.05), x, y, kernel, bias,
                        weight_decay=0.004, learning_rate=0.05)
    _expect_fit_matches(graphgc.optimizers.AdamW(learning_rate=0.05), want,
                        x, y, kernel, bias)


def test_weight_decay_applies_to_any_optimizer():
    x, y, kernel, bias = _dense_problem()
    want = _keras_steps(_sgd(0.1), x, y, kernel, bias, weight_decay=0.5,
                        learning_rate=0.1)
    _expect_fit_matches(graphgc.optimizers.SGD(0.1, weight_decay=0.5), want,
                        x, y, kernel, bias)


def _clip_by_norm(clipnorm):
    def clip(grads):
        return [g * clipnorm / max(np.sqrt((g * g).sum()), clipnorm)
                for g in grads]
    return clip


def _clip_by_global_norm(clipnorm):
    def clip(grads):
        norm = np.sqrt(sum((g * g).sum() for g in grads))
        return [g * clipnorm / max(norm, clipnorm) for g in grads]
    return clip


@pytest.mark.parametrize("keyword,clip", [
    ("clipnorm", _clip_by_norm(0.05)),
    ("global_clipnorm", _clip_by_global_norm(0.05)),
    ("clipvalue", lambda grads: [np.clip(g, -0.05, 0.05) for g in grads]),
])
def test_clipping_matches_keras_on_gradients_that_get_clipped(keyword, clip):
    x, y, kernel, bias = _dense_problem()
    # The first gradients are far above 0.05, so every keyword clips.
    err = x @ kernel + bias - y
    assert np.abs(2 * x.T @ err / len(x)).max() > 0.5
    want = _keras_steps(_sgd(0.5), x, y, kernel, bias, clip=clip)
    _expect_fit_matches(graphgc.optimizers.SGD(0.5, **{keyword: 0.05}),
                        want, x, y, kernel, bias)


def test_two_clipping_keywords_are_value_error_as_keras():
    with pytest.raises(ValueError, match="Only one of `clipnorm`, "
                       "`clipvalue` and `global_clipnorm` can be set"):
        graphgc.optimizers.Adam(clipnorm=1.0, global_clipnorm=1.0)


@pytest.mark.parametrize("cls", ["SGD", "Adam", "AdamW", "RMSprop",
                                 "Adagrad", "Adamax", "Nadam", "Adadelta",
                                 "Lion"])
def test_unknown_keyword_is_type_error_naming_it(cls):
    with pytest.raises(TypeError, match="no_such_option"):
        getattr(graphgc.optimizers, cls)(no_such_option=1)


@pytest.mark.parametrize("name", ["adamw", "adagrad", "adamax", "nadam",
                                  "adadelta", "lion", "sgd", "AdamW"])
def test_new_optimizer_names_compile_and_fit(name, data):
    model = make_model(compile=False)
    model.compile(optimizer=name, loss="sparse_categorical_crossentropy")
    assert isinstance(model.optimizer, graphgc.optimizers.Optimizer)
    model.fit(*data, verbose=0)


def test_defaults_and_names_are_keras_3s():
    o = graphgc.optimizers
    assert (o.AdamW().weight_decay, o.AdamW().name) == (0.004, "adamw")
    assert o.Adagrad().initial_accumulator_value == 0.1
    assert o.Adadelta().rho == 0.95
    assert (o.Lion().beta_1, o.Lion().beta_2) == (0.9, 0.99)
    assert o.SGD().name == "SGD"
    assert o.Nadam().name == "nadam"
    assert o.Adam().amsgrad is False
    assert o.Adam().clipnorm is None and o.Adam().weight_decay is None
    assert float(o.Adamax().learning_rate) == pytest.approx(0.001)


def test_get_returns_each_optimizer_by_name():
    assert isinstance(graphgc.optimizers.get("nadam"),
                      graphgc.optimizers.Nadam)
    assert isinstance(graphgc.optimizers.get("AdamW"),
                      graphgc.optimizers.AdamW)
