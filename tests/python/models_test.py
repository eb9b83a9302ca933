"""graphgc.Sequential: Keras's model API."""

import os
import re

import numpy as np
import pytest

import graphgc
from conftest import make_model


def test_fit_returns_history_of_each_epoch(model, data):
    history = model.fit(*data, epochs=3, batch_size=64, verbose=0)
    assert history.epoch == [0, 1, 2]
    assert sorted(history.history) == ["accuracy", "loss"]
    assert len(history.history["loss"]) == 3
    assert history.model is model
    assert model.history is history


def test_fit_with_validation_data_reports_val_metrics(model, data):
    x, y = data
    history = model.fit(x, y, validation_data=(x[:32], y[:32]), verbose=0)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy",
                                       "val_loss"]


def test_fit_lowers_the_loss(model, data):
    history = model.fit(*data, epochs=20, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_fit_without_shuffle_is_deterministic(data):
    a, b = make_model(), make_model()
    ha = a.fit(*data, epochs=2, shuffle=False, verbose=0)
    hb = b.fit(*data, epochs=2, shuffle=False, verbose=0)
    assert ha.history == hb.history


def test_evaluate_returns_list_in_compile_order(model, data):
    loss, accuracy = model.evaluate(*data)
    assert loss > 0 and 0 <= accuracy <= 1


def test_evaluate_return_dict_gives_names(model, data):
    out = model.evaluate(*data, return_dict=True)
    assert sorted(out) == ["accuracy", "loss"]


def test_evaluate_without_metrics_returns_the_loss(data):
    model = make_model(metrics=())
    assert isinstance(model.evaluate(*data), float)


def test_predict_returns_probabilities_as_numpy(model, data):
    out = model.predict(data[0])
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float32 and out.shape == (256, 10)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)


def test_get_weights_gives_kernel_and_bias_per_dense(model):
    shapes = [w.shape for w in model.get_weights()]
    assert shapes == [(10, 16), (16,), (16, 10), (10,)]


def test_set_weights_round_trips(model, data):
    weights = [np.full_like(w, 0.5) for w in model.get_weights()]
    model.set_weights(weights)
    for got, want in zip(model.get_weights(), weights):
        np.testing.assert_array_equal(got, want)


def test_summary_prints_keras_table(model, capsys):
    model.summary()
    out = capsys.readouterr().out
    assert "Total params: 346" in out
    assert "(None, 16)" in out


def test_summary_goes_to_print_fn(model):
    lines = []
    model.summary(print_fn=lines.append)
    assert "Model:" in lines[0]


def test_named_model_keeps_its_name():
    assert make_model(name="classifier").name.startswith("classifier")


def test_add_builds_the_model_layer_by_layer(data):
    model = graphgc.Sequential()
    model.add(graphgc.layers.Input((10,)))
    model.add(graphgc.layers.Dense(10, activation="softmax"))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(*data, verbose=0)
    assert len(model.layers) == 1


def test_add_after_compile_is_refused(model):
    with pytest.raises(RuntimeError, match="compile"):
        model.add(graphgc.layers.Dense(3))


def test_save_and_load_model_predict_the_same(model, data, tmp_path):
    model.fit(*data, verbose=0)
    model.save(tmp_path / "saved")
    loaded = graphgc.models.load_model(tmp_path / "saved")
    np.testing.assert_array_equal(loaded.predict(data[0]),
                                  model.predict(data[0]))
    assert [type(layer).__name__ for layer in loaded.layers] == ["Dense",
                                                                 "Dense"]
    loaded.fit(*data, verbose=0)


def test_load_model_of_missing_directory_is_os_error(tmp_path):
    with pytest.raises(OSError, match="config.json"):
        graphgc.models.load_model(tmp_path / "nothing")


def test_load_model_of_missing_directory_is_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        graphgc.models.load_model(tmp_path / "nothing")


def test_load_model_with_a_truncated_weights_file_is_os_error(model,
                                                              tmp_path):
    model.save(tmp_path / "saved")
    weights = tmp_path / "saved" / "model.weights.h5"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(OSError, match="model.weights.h5"):
        graphgc.models.load_model(tmp_path / "saved")


def test_save_over_a_regular_file_is_os_error(model, tmp_path):
    target = tmp_path / "file"
    target.write_text("not a model")
    with pytest.raises(OSError, match="Not a directory"):
        model.save(target)
    assert target.read_text() == "not a model"


# Bad input raises and leaves the weights as they were.

def assert_weights_equal(a, b):
    assert len(a) == len(b)
    for wa, wb in zip(a, b):
        np.testing.assert_array_equal(wa, wb)


def test_fit_with_wrong_feature_count_is_value_error(model, data):
    before = model.get_weights()
    with pytest.raises(ValueError):
        model.fit(np.zeros((8, 3), np.float32), np.zeros(8, np.int32),
                  verbose=0)
    assert_weights_equal(model.get_weights(), before)


def test_fit_with_label_out_of_range_is_value_error(model, data):
    x, y = data
    before = model.get_weights()
    bad = y.copy()
    bad[-1] = 10
    with pytest.raises(ValueError, match="10"):
        model.fit(x, bad, verbose=0)
    assert_weights_equal(model.get_weights(), before)


def test_fit_with_mismatched_sample_counts_is_value_error(model, data):
    x, y = data
    before = model.get_weights()
    with pytest.raises(ValueError):
        model.fit(x, y[:10], verbose=0)
    assert_weights_equal(model.get_weights(), before)


def test_evaluate_with_mismatched_sample_counts_is_value_error(model, data):
    x, y = data
    before = model.get_weights()
    with pytest.raises(ValueError, match="256 samples but y has 10"):
        model.evaluate(x, y[:10])
    assert_weights_equal(model.get_weights(), before)


def test_set_weights_with_wrong_shape_changes_nothing(model):
    before = model.get_weights()
    bad = [np.ones_like(w) for w in before]
    bad[2] = np.ones((3, 3), np.float32)
    with pytest.raises(ValueError):
        model.set_weights(bad)
    assert_weights_equal(model.get_weights(), before)


def test_set_weights_with_too_few_arrays_changes_nothing(model):
    before = model.get_weights()
    with pytest.raises(ValueError):
        model.set_weights(before[:1])
    assert_weights_equal(model.get_weights(), before)


def test_predict_with_wrong_rank_is_value_error(model):
    with pytest.raises(ValueError):
        model.predict(np.zeros((2, 10, 1), np.float32))


def test_fit_before_compile_is_runtime_error(data):
    with pytest.raises(RuntimeError):
        make_model(compile=False).fit(*data, verbose=0)


def test_non_layer_in_sequential_is_value_error():
    with pytest.raises(ValueError, match="str"):
        graphgc.Sequential([graphgc.layers.Input((3,)), "dense"])


def test_batch_size_beyond_int32_is_value_error(model, data):
    with pytest.raises(ValueError, match="batch_size"):
        model.fit(*data, batch_size=2**40, verbose=0)


def test_negative_fit_seed_is_value_error(model, data):
    with pytest.raises(ValueError, match="seed"):
        model.fit(*data, seed=-1, verbose=0)


def test_fractional_epochs_is_value_error(model, data):
    with pytest.raises(ValueError, match="epochs"):
        model.fit(*data, epochs=1.5, verbose=0)


def test_fit_validation_split_reports_val_metrics_of_the_last_rows(data):
    x, y = data
    model = make_model()
    history = model.fit(x, y, epochs=2, validation_split=0.25, verbose=0)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy",
                                       "val_loss"]
    # Keras: rows from floor(256 * 0.75) = 192 on, validated on the weights
    # the last epoch ended with.
    loss, accuracy = model.evaluate(x[192:], y[192:])
    assert history.history["val_loss"][-1] == pytest.approx(loss, rel=1e-6)
    assert history.history["val_accuracy"][-1] == pytest.approx(accuracy)


def test_fit_validation_split_trains_on_the_first_rows_only(data):
    x, y = data
    split, first = make_model(), make_model()
    split.fit(x, y, epochs=2, validation_split=0.25, verbose=0)
    first.fit(x[:192], y[:192], epochs=2, verbose=0)
    for a, b in zip(split.get_weights(), first.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_fit_validation_data_overrides_validation_split(data):
    x, y = data
    both, data_only = make_model(), make_model()
    both.fit(x, y, validation_split=0.5, validation_data=(x[:32], y[:32]),
             verbose=0)
    data_only.fit(x, y, validation_data=(x[:32], y[:32]), verbose=0)
    for a, b in zip(both.get_weights(), data_only.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_fit_validation_split_leaving_no_training_sample_is_keras_error(
        model, data):
    x, y = data
    with pytest.raises(ValueError, match=(
            r"Training data contains 1 samples, which is not sufficient to "
            r"split it into a validation and training set as specified by "
            r"`validation_split=0\.5`\. Either provide more data, or a "
            r"different value for the `validation_split` argument\.")):
        model.fit(x[:1], y[:1], validation_split=0.5, verbose=0)


@pytest.mark.parametrize("split", [-0.1, 1.5, float("nan")])
def test_fit_validation_split_outside_the_unit_interval_is_value_error(
        model, data, split):
    with pytest.raises(ValueError, match=r"validation_split must be in "
                                         r"\[0, 1\)"):
        model.fit(*data, validation_split=split, verbose=0)


def test_evaluate_with_one_hot_labels_gives_categorical_accuracy(data):
    x, y = data
    model = graphgc.Sequential([
        graphgc.layers.Input((10,)),
        graphgc.layers.Dense(10, activation="softmax", seed=2),
    ])
    model.compile(loss="categorical_crossentropy", optimizer="adam",
                  metrics=["accuracy"])
    score = model.evaluate(x, graphgc.utils.to_categorical(y, 10), verbose=0)
    assert isinstance(score, list) and len(score) == 2
    predicted = model.predict(x).argmax(axis=1)
    assert score[1] == pytest.approx(np.mean(predicted == y))


# Fit's Keras 3 arguments (initial_epoch, validation_freq, steps_per_epoch,
# validation_steps, validation_batch_size, class_weight, sample_weight).

def test_fit_initial_epoch_counts_epochs_from_it(model, data):
    history = model.fit(*data, epochs=5, initial_epoch=3, verbose=0)
    assert history.epoch == [3, 4]
    assert len(history.history["loss"]) == 2


def test_fit_validation_freq_validates_every_nth_epoch(model, data):
    history = model.fit(*data, epochs=4, validation_split=0.25,
                        validation_freq=2, verbose=0)
    assert len(history.history["loss"]) == 4
    assert len(history.history["val_loss"]) == 2


def test_fit_validation_freq_list_names_the_epochs(model, data):
    history = model.fit(*data, epochs=4, validation_split=0.25,
                        validation_freq=[1, 2, 3], verbose=0)
    assert len(history.history["val_loss"]) == 3


def test_fit_validation_freq_of_another_type_raises_as_keras(model, data):
    with pytest.raises(ValueError, match="Expected `validation_freq` to be "
                                         "a list or int"):
        model.fit(*data, validation_freq="2", verbose=0)


def test_fit_steps_per_epoch_warns_when_the_data_runs_out(model, data):
    batches = []

    class Count(graphgc.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            batches.append(0)

        def on_train_batch_end(self, batch, logs=None):
            batches[-1] += 1

    # 256 samples in batches of 64: 4 batches a pass, 3 an epoch.
    with pytest.warns(UserWarning, match="Your input ran out of data"):
        model.fit(*data, epochs=3, batch_size=64, steps_per_epoch=3,
                  callbacks=[Count()], verbose=0)
    assert batches == [3, 1, 3]


def test_fit_validation_steps_and_batch_size_validate_first_batches(
        model, data):
    x, y = data
    history = model.fit(x, y, validation_data=(x, y), validation_steps=1,
                        validation_batch_size=16, verbose=0)
    loss = model.evaluate(x[:16], y[:16], return_dict=True)["loss"]
    assert history.history["val_loss"][-1] == pytest.approx(loss, rel=1e-6)


def test_evaluate_sample_weight_scales_the_loss_as_keras(model, data):
    x, y = data
    plain = model.evaluate(x, y, return_dict=True)
    weighted = model.evaluate(x, y, sample_weight=np.full(256, 2.0),
                              return_dict=True)
    assert weighted["loss"] == pytest.approx(2 * plain["loss"], rel=1e-6)
    assert weighted["accuracy"] == plain["accuracy"]


def test_fit_class_weight_trains_as_its_sample_weights(data):
    x, y = data
    weights = {0: 3.0, 1: 0.5}
    per_sample = np.array([weights.get(int(c), 1.0) for c in y])
    a, b = make_model(), make_model()
    ha = a.fit(x, y, epochs=2, shuffle=False, class_weight=weights,
               verbose=0)
    hb = b.fit(x, y, epochs=2, shuffle=False, sample_weight=per_sample,
               verbose=0)
    assert ha.history == hb.history
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)


def test_fit_class_weight_with_validation_split_validates_unweighted(data):
    x, y = data
    model = make_model()
    history = model.fit(x, y, validation_split=0.25, class_weight={0: 5.0},
                        verbose=0)
    loss = model.evaluate(x[192:], y[192:], return_dict=True)["loss"]
    assert history.history["val_loss"][-1] == pytest.approx(loss, rel=1e-6)


def test_fit_validation_data_takes_sample_weights_third(model, data):
    x, y = data
    w = np.full(32, 4.0)
    history = model.fit(x, y, validation_data=(x[:32], y[:32], w),
                        verbose=0)
    loss = model.evaluate(x[:32], y[:32], sample_weight=w,
                          return_dict=True)["loss"]
    assert history.history["val_loss"][-1] == pytest.approx(loss, rel=1e-6)


def test_fit_class_weight_and_sample_weight_together_raise(model, data):
    x, y = data
    with pytest.raises(ValueError, match="You cannot `class_weight` and "
                                         "`sample_weight` at the same time"):
        model.fit(x, y, class_weight={0: 1.0}, sample_weight=np.ones(256),
                  verbose=0)


def test_fit_verbose_2_prints_keras_line_per_epoch_from_initial_epoch(
        model, data, capfd):
    model.fit(*data, epochs=3, initial_epoch=1, batch_size=64, verbose=2)
    lines = capfd.readouterr().err.splitlines()
    assert lines[0] == "Epoch 2/3" and lines[2] == "Epoch 3/3"
    step = r"4/4 - \d+s - \d+(s|ms|us)/step"
    for line in (lines[1], lines[3]):
        assert re.fullmatch(step + r" - accuracy: \d\.\d{4} - loss: "
                            r"\d\.\d{4}(e[-+]\d\d)?", line), line


def test_dense_losses_take_integer_targets_as_keras_casts_them():
    # keras-io's functional_api.py trains a categorical and a binary output
    # on np.random.randint targets (int64).
    x = graphgc.Input((4,))
    h = graphgc.layers.Dense(8, activation="relu")(x)
    model = graphgc.Model(x, [graphgc.layers.Dense(1, name="bin")(h),
                              graphgc.layers.Dense(3, name="cat")(h)])
    model.compile(optimizer="sgd",
                  loss=[graphgc.losses.BinaryCrossentropy(from_logits=True),
                        graphgc.losses.CategoricalCrossentropy(
                            from_logits=True)])
    rng = np.random.default_rng(0)
    data = rng.random((32, 4), dtype=np.float32)
    bin_y = rng.integers(2, size=(32, 1))
    cat_y = np.eye(3, dtype=np.int64)[rng.integers(3, size=32)]
    as_ints = model.evaluate(data, [bin_y, cat_y], verbose=0)
    as_floats = model.evaluate(data, [bin_y.astype(np.float32),
                                      cat_y.astype(np.float32)], verbose=0)
    assert as_ints == as_floats
    model.fit(data, [bin_y, cat_y], epochs=1, verbose=0)
