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


def test_unknown_loss_is_value_error_listing_the_known_ones():
    with pytest.raises(ValueError, match="hinge"):
        make_model(compile=False).compile(optimizer="adam", loss="nope")


# --- every Keras loss against its NumPy formula, through model.evaluate ---

EPS = 1e-7


def _mean(v):
    return v.mean(axis=-1)


def _hinge_labels(t):
    return 2 * t - 1 if np.all((t == 0) | (t == 1)) else t


def _bce(t, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -(t * np.log(p) + (1 - t) * np.log(1 - p))


def _l2n(v):
    return v / np.sqrt(np.maximum((v * v).sum(-1, keepdims=True), 1e-12))


def _huber(t, p, d=1.0):
    e = np.abs(p - t)
    return _mean(np.where(e <= d, 0.5 * e * e, d * e - 0.5 * d * d))


# name, class, activation of the output, targets kind, per-sample formula
FORMULAS = [
    ("binary_crossentropy", "BinaryCrossentropy", "sigmoid", "binary",
     lambda t, p: _mean(_bce(t, p))),
    ("categorical_crossentropy", "CategoricalCrossentropy", "softmax",
     "one_hot", lambda t, p: -(t * np.log(np.clip(
         p / p.sum(-1, keepdims=True), EPS, 1 - EPS))).sum(-1)),
    ("mean_squared_error", "MeanSquaredError", None, "real",
     lambda t, p: _mean((t - p) ** 2)),
    ("mean_absolute_error", "MeanAbsoluteError", None, "real",
     lambda t, p: _mean(np.abs(t - p))),
    ("mean_absolute_percentage_error", "MeanAbsolutePercentageError", None,
     "real", lambda t, p: 100 * _mean(
         np.abs((t - p) / np.maximum(np.abs(t), EPS)))),
    ("mean_squared_logarithmic_error", "MeanSquaredLogarithmicError", None,
     "real", lambda t, p: _mean((np.log(np.maximum(p, EPS) + 1)
                                 - np.log(np.maximum(t, EPS) + 1)) ** 2)),
    ("huber", "Huber", None, "real", _huber),
    ("log_cosh", "LogCosh", None, "real",
     lambda t, p: _mean(np.log(np.cosh(p - t)))),
    ("kl_divergence", "KLDivergence", "softmax", "one_hot",
     lambda t, p: (np.clip(t, EPS, 1) * np.log(
         np.clip(t, EPS, 1) / np.clip(p, EPS, 1))).sum(-1)),
    ("poisson", "Poisson", "softmax", "real",
     lambda t, p: _mean(p - t * np.log(p + EPS))),
    ("hinge", "Hinge", None, "binary",
     lambda t, p: _mean(np.maximum(1 - _hinge_labels(t) * p, 0))),
    ("squared_hinge", "SquaredHinge", None, "binary",
     lambda t, p: _mean(np.maximum(1 - _hinge_labels(t) * p, 0) ** 2)),
    ("categorical_hinge", "CategoricalHinge", None, "one_hot",
     lambda t, p: np.maximum(((1 - t) * p).max(-1) - (t * p).sum(-1) + 1,
                             0)),
    ("cosine_similarity", "CosineSimilarity", None, "real",
     lambda t, p: -(_l2n(t) * _l2n(p)).sum(-1)),
]


def _problem(activation, targets):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    if targets == "binary":
        y = rng.integers(0, 2, (16, 3)).astype(np.float32)
    elif targets == "one_hot":
        y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 16)]
    else:
        y = (rng.random((16, 3)) * 2 + 0.5).astype(np.float32)
    model = graphgc.Sequential([graphgc.layers.Input((4,)),
                                graphgc.layers.Dense(3, activation=activation,
                                                     seed=3)])
    return model, x, y


def _loss_arguments():
    for name, class_name, activation, targets, formula in FORMULAS:
        yield pytest.param(name, activation, targets, formula,
                           id=f"{name}-string")
        yield pytest.param(lambda c=class_name: getattr(graphgc.losses, c)(),
                           activation, targets, formula,
                           id=f"{class_name}-object")


@pytest.mark.parametrize("loss,activation,targets,formula",
                         list(_loss_arguments()))
def test_loss_value_is_the_keras_formula(loss, activation, targets, formula):
    model, x, y = _problem(activation, targets)
    model.compile(optimizer="sgd", loss=loss() if callable(loss) else loss)
    want = formula(y.astype(np.float64),
                   model.predict(x).astype(np.float64)).mean()
    assert model.evaluate(x, y, batch_size=16) == pytest.approx(want,
                                                                rel=1e-4,
                                                                abs=1e-5)


@pytest.mark.parametrize("name,activation,targets,formula",
                         [f[:1] + f[2:] for f in FORMULAS],
                         ids=[f[0] for f in FORMULAS])
def test_loss_trains(name, activation, targets, formula):
    model, x, y = _problem(activation, targets)
    # MAPE's gradient is 100 / |target| times the others'.
    rate = 0.0005 if name == "mean_absolute_percentage_error" else 0.05
    model.compile(optimizer=graphgc.optimizers.SGD(learning_rate=rate),
                  loss=name)
    first = model.evaluate(x, y, batch_size=16)
    model.fit(x, y, epochs=5, batch_size=16, shuffle=False, verbose=0)
    assert model.evaluate(x, y, batch_size=16) < first


@pytest.mark.parametrize("alias,name", [
    ("mae", "MeanAbsoluteError"), ("MAE", "MeanAbsoluteError"),
    ("mape", "MeanAbsolutePercentageError"),
    ("msle", "MeanSquaredLogarithmicError"), ("kld", "KLDivergence"),
    ("bce", "BinaryCrossentropy"), ("MeanSquaredError", "MeanSquaredError"),
    ("logcosh", "LogCosh")])
def test_keras_aliases_name_the_loss(alias, name):
    assert isinstance(graphgc.losses.get(alias), getattr(graphgc.losses, name))


def test_sum_reduction_is_the_sum_over_the_batch():
    model, x, y = _problem(None, "real")
    model.compile(optimizer="sgd",
                  loss=graphgc.losses.MeanAbsoluteError(reduction="sum"))
    want = np.abs(y - model.predict(x)).mean(-1).sum()
    assert model.evaluate(x, y, batch_size=16) == pytest.approx(want,
                                                                rel=1e-4)


def test_reduction_none_is_value_error():
    with pytest.raises(ValueError, match="reduction"):
        graphgc.losses.MeanSquaredError(reduction=None)


def test_huber_delta_changes_the_value():
    model, x, y = _problem(None, "real")
    model.compile(optimizer="sgd", loss=graphgc.losses.Huber(delta=0.3))
    want = _huber(y, model.predict(x), 0.3).mean()
    assert model.evaluate(x, y, batch_size=16) == pytest.approx(want,
                                                                rel=1e-4)


@pytest.mark.parametrize("from_logits", [False, True])
def test_binary_crossentropy_from_logits_and_label_smoothing(from_logits):
    model, x, y = _problem(None if from_logits else "sigmoid", "binary")
    model.compile(optimizer="sgd", loss=graphgc.losses.BinaryCrossentropy(
        from_logits=from_logits, label_smoothing=0.1))
    p = model.predict(x).astype(np.float64)
    if from_logits:
        p = 1 / (1 + np.exp(-p))
    want = _bce(y * 0.9 + 0.05, p).mean()
    assert model.evaluate(x, y, batch_size=16) == pytest.approx(want,
                                                                rel=1e-4)


def test_an_option_the_loss_does_not_take_is_type_error():
    with pytest.raises(TypeError):
        graphgc.losses.MeanAbsoluteError(from_logits=True)


def test_sparse_categorical_crossentropy_takes_integral_float_ids(data):
    x, y = data
    model = make_model(compile=False)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    assert model.evaluate(x, y.astype(np.float32)) == pytest.approx(
        model.evaluate(x, y))
    history = model.fit(x, y.astype(np.float64), verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_sparse_categorical_crossentropy_refuses_non_integral_floats(data):
    x, y = data
    model = make_model(compile=False)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    bad = y.astype(np.float32)
    bad[3] = 1.5
    with pytest.raises(ValueError, match="float label 1.5 of sample 3"):
        model.fit(x, bad, verbose=0)
