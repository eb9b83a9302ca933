"""graphgc.metrics: the metric objects on their own (NumPy formulas), and
compile()'s metrics computed in C++ over an epoch's batches."""

import numpy as np
import pytest

import graphgc
from graphgc import metrics


def batches():
    rng = np.random.default_rng(3)
    t1, p1 = rng.uniform(0.1, 2, (5, 3)), rng.uniform(0.1, 2, (5, 3))
    t2, p2 = rng.uniform(0.1, 2, (2, 3)), rng.uniform(0.1, 2, (2, 3))
    return (t1, p1), (t2, p2)


def epoch_value(metric, parts):
    for t, p in parts:
        metric.update_state(t, p)
    return metric.result()


@pytest.mark.parametrize("metric, per_sample", [
    (metrics.MeanSquaredError(), lambda t, p: np.mean((p - t) ** 2, -1)),
    (metrics.MeanAbsoluteError(), lambda t, p: np.mean(np.abs(p - t), -1)),
    (metrics.MeanAbsolutePercentageError(),
     lambda t, p: 100 * np.mean(np.abs((t - p) / t), -1)),
    (metrics.MeanSquaredLogarithmicError(),
     lambda t, p: np.mean((np.log1p(p) - np.log1p(t)) ** 2, -1)),
    (metrics.LogCoshError(), lambda t, p: np.mean(np.log(np.cosh(p - t)), -1)),
    (metrics.CosineSimilarity(),
     lambda t, p: np.sum(t * p, -1) / (np.linalg.norm(t, axis=-1) *
                                       np.linalg.norm(p, axis=-1))),
])
def test_mean_metrics_weigh_samples_over_updates(metric, per_sample):
    parts = batches()
    t = np.concatenate([a for a, _ in parts])
    p = np.concatenate([b for _, b in parts])
    assert epoch_value(metric, parts) == pytest.approx(
        np.mean(per_sample(t, p)), rel=1e-6)


def test_root_mean_squared_error_is_the_root_of_the_whole_mean():
    parts = batches()
    t = np.concatenate([a for a, _ in parts])
    p = np.concatenate([b for _, b in parts])
    assert epoch_value(metrics.RootMeanSquaredError(), parts) == \
        pytest.approx(np.sqrt(np.mean((p - t) ** 2)), rel=1e-6)


def test_reset_state_forgets_the_updates():
    m = metrics.MeanAbsoluteError()
    m.update_state([[0.0]], [[5.0]])
    m.reset_state()
    m.update_state([[1.0]], [[1.5]])
    assert m.result() == pytest.approx(0.5)


def test_precision_counts_over_updates_not_their_mean():
    m = metrics.Precision()
    m.update_state([1, 0, 0], [0.9, 0.8, 0.2])  # tp 1, fp 1
    m.update_state([1, 0], [0.7, 0.1])  # tp 1
    assert m.result() == pytest.approx(2 / 3)


def test_recall_counts_over_updates_not_their_mean():
    m = metrics.Recall()
    m.update_state([1, 1], [0.9, 0.3])  # tp 1, fn 1
    m.update_state([1], [0.8])
    assert m.result() == pytest.approx(2 / 3)


def test_auc_is_the_fraction_of_pairs_ordered_right():
    m = metrics.AUC()
    m.update_state([1, 0, 0], [0.9, 0.8, 0.2])
    m.update_state([1, 0], [0.7, 0.1])
    assert m.result() == pytest.approx(5 / 6, abs=1e-6)


def test_accuracies_and_top_k():
    t = np.array([0, 2, 1, 2])
    p = np.array([[.7, .2, .1], [.1, .3, .6], [.5, .4, .1], [.2, .5, .3]])
    one_hot = np.eye(3)[t]
    assert epoch_value(metrics.SparseCategoricalAccuracy(), [(t, p)]) == 0.5
    assert epoch_value(metrics.CategoricalAccuracy(), [(one_hot, p)]) == 0.5
    assert epoch_value(metrics.SparseTopKCategoricalAccuracy(k=2),
                       [(t, p)]) == 1.0
    assert epoch_value(metrics.TopKCategoricalAccuracy(k=1),
                       [(one_hot, p)]) == 0.5
    assert epoch_value(metrics.BinaryAccuracy(),
                       [([[1], [0]], [[0.9], [0.7]])]) == 0.5


def test_default_names_are_keras():
    assert metrics.Precision().name == "precision"
    assert metrics.AUC().name == "auc"
    assert metrics.LogCoshError().name == "logcosh"
    assert metrics.SparseTopKCategoricalAccuracy(k=3).name == \
        "sparse_top_k_categorical_accuracy"
    assert metrics.get("mae").name == "mean_absolute_error"


def binary_data():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(50, 4)).astype(np.float32)
    y = (x[:, :1] + 0.5 * rng.normal(size=(50, 1)) > 0).astype(np.float32)
    return x, y


def binary_model(metric_list):
    model = graphgc.Sequential([
        graphgc.layers.Input((4,)),
        graphgc.layers.Dense(1, activation="sigmoid", seed=1)])
    model.compile(optimizer="sgd", loss="binary_crossentropy",
                  metrics=metric_list)
    return model


def test_fit_history_has_keras_keys():
    x, y = binary_data()
    model = binary_model(["mae", metrics.Precision(), metrics.AUC(name="a"),
                          "acc"])
    history = model.fit(x, y, epochs=2, batch_size=8, validation_split=0.2,
                        verbose=0)
    assert sorted(history.history) == sorted(
        ["loss", "mae", "precision", "a", "acc", "val_loss", "val_mae",
         "val_precision", "val_a", "val_acc"])
    assert all(len(v) == 2 for v in history.history.values())


def test_evaluate_matches_the_numpy_metrics_over_every_batch():
    # batch_size 7 over 50 samples: 8 batches, so per-batch precision or
    # AUC averaged would differ from the whole data's.
    x, y = binary_data()
    model = binary_model(["mse", metrics.Precision(thresholds=0.4),
                          metrics.Recall(), metrics.AUC(),
                          metrics.BinaryAccuracy()])
    got = model.evaluate(x, y, batch_size=7, return_dict=True)
    p = model.predict(x)
    for metric, key in [(metrics.MeanSquaredError(), "mse"),
                        (metrics.Precision(thresholds=0.4), "precision"),
                        (metrics.Recall(), "recall"), (metrics.AUC(), "auc"),
                        (metrics.BinaryAccuracy(), "binary_accuracy")]:
        metric.update_state(y, p)
        assert got[key] == pytest.approx(metric.result(), abs=1e-5), key


def test_evaluate_lists_metrics_in_compile_order():
    x, y = binary_data()
    model = binary_model(["mse", "auc", "acc"])
    out = model.evaluate(x, y, batch_size=16, return_dict=True)
    listed = model.evaluate(x, y, batch_size=16)
    assert listed == pytest.approx([out["loss"], out["mse"], out["auc"],
                                    out["acc"]])


def test_sparse_top_k_with_k_in_compile(data):
    x, y = data
    model = graphgc.Sequential([
        graphgc.layers.Input((10,)),
        graphgc.layers.Dense(10, activation="softmax", seed=2)])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=[metrics.SparseTopKCategoricalAccuracy(k=3),
                           "sparse_categorical_crossentropy"])
    got = model.evaluate(x, y, batch_size=10, return_dict=True)
    p = model.predict(x)
    top = metrics.SparseTopKCategoricalAccuracy(k=3)
    top.update_state(y, p)
    ce = metrics.SparseCategoricalCrossentropy()
    ce.update_state(y, p)
    assert got["sparse_top_k_categorical_accuracy"] == \
        pytest.approx(top.result(), abs=1e-6)
    assert got["sparse_categorical_crossentropy"] == \
        pytest.approx(ce.result(), rel=1e-4)


def test_unknown_metric_is_refused_listing_the_known():
    with pytest.raises(ValueError, match="unknown metric 'f1'.*precision"):
        binary_model(["f1"])
