"""Models of several inputs and outputs from Python (models/functional.h's
list forms, graphgc/_multi_io.py): keras.Model with lists and dicts,
per-output losses, loss weights and metrics, and fit/evaluate/predict data
as lists or dicts, as Keras 3 takes them."""

import numpy as np
import pytest

import graphgc as keras
from graphgc import layers

NUM_TAGS = 12
NUM_DEPARTMENTS = 4


def ticket_model(outputs_as_dict=False):
    """keras-io's guides/functional_api.py "Models with multiple inputs and
    outputs", with Dense layers in place of Embedding and LSTM (graphgc has
    neither): the same inputs, the same concatenation and the same two named
    output layers."""
    title_input = keras.Input(shape=(10,), name="title")
    body_input = keras.Input(shape=(100,), name="body")
    tags_input = keras.Input(shape=(NUM_TAGS,), name="tags")
    title_features = layers.Dense(128, activation="relu", seed=1)(title_input)
    body_features = layers.Dense(32, activation="relu", seed=2)(body_input)
    x = layers.concatenate([title_features, body_features, tags_input])
    priority_pred = layers.Dense(1, name="priority", seed=3)(x)
    department_pred = layers.Dense(NUM_DEPARTMENTS, name="department",
                                   seed=4)(x)
    outputs = [priority_pred, department_pred]
    if outputs_as_dict:
        outputs = {"priority": priority_pred, "department": department_pred}
    return keras.Model(inputs=[title_input, body_input, tags_input],
                       outputs=outputs)


def ticket_data(samples=1280, seed=0):
    rng = np.random.default_rng(seed)
    x = {"title": rng.random((samples, 10), dtype=np.float32),
         "body": rng.random((samples, 100), dtype=np.float32),
         "tags": rng.integers(2, size=(samples, NUM_TAGS)).astype("float32")}
    y = {"priority": rng.random((samples, 1)),
         "department": rng.integers(
             2, size=(samples, NUM_DEPARTMENTS)).astype("float32")}
    return x, y


def guide_losses():
    return [keras.losses.BinaryCrossentropy(from_logits=True),
            keras.losses.CategoricalCrossentropy(from_logits=True)]


def test_the_guides_model_compiles_with_a_loss_list_and_fits_on_dicts():
    model = ticket_model()
    model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
                  loss=guide_losses(), loss_weights=[1.0, 0.2])
    x, y = ticket_data()
    history = model.fit(x, y, epochs=2, batch_size=32, verbose=0)
    assert sorted(history.history) == ["department_loss", "loss",
                                       "priority_loss"]
    assert len(history.history["loss"]) == 2


def test_the_guides_loss_and_loss_weight_dicts_are_keyed_by_output_name():
    model = ticket_model()
    model.compile(
        optimizer=keras.optimizers.RMSprop(1e-3),
        loss={"priority": keras.losses.BinaryCrossentropy(from_logits=True),
              "department": keras.losses.CategoricalCrossentropy(
                  from_logits=True)},
        loss_weights={"priority": 1.0, "department": 0.2})
    x, y = ticket_data(64)
    history = model.fit(x, y, epochs=2, batch_size=32, verbose=0)
    assert len(history.history["priority_loss"]) == 2


def test_model_lists_its_inputs_outputs_and_names():
    model = ticket_model()
    assert model.input_names == ["title", "body", "tags"]
    assert model.output_names == ["priority", "department"]
    assert len(model.inputs) == 3 and len(model.outputs) == 2
    assert model.input_shape == [(None, 10), (None, 100), (None, NUM_TAGS)]
    assert model.output_shape == [(None, 1), (None, NUM_DEPARTMENTS)]


def test_the_total_loss_is_the_weighted_sum_of_each_outputs_loss():
    model = ticket_model()
    model.compile(optimizer="adam", loss=["mse", "mse"],
                  loss_weights=[0.5, 2.0])
    x, y = ticket_data(40, seed=1)
    logs = model.evaluate(x, y, return_dict=True)
    priority, department = model.predict(x)
    mse_p = np.mean((priority - y["priority"]) ** 2)
    mse_d = np.mean((department - y["department"]) ** 2)
    assert logs["priority_loss"] == pytest.approx(mse_p, rel=1e-5)
    assert logs["department_loss"] == pytest.approx(mse_d, rel=1e-5)
    assert logs["loss"] == pytest.approx(0.5 * mse_p + 2.0 * mse_d, rel=1e-5)


def test_fit_trains_both_outputs():
    model = ticket_model()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss=["mse", "mse"])
    x, y = ticket_data(256, seed=2)
    history = model.fit(x, y, epochs=15, batch_size=32, verbose=0)
    for key in ("priority_loss", "department_loss"):
        values = history.history[key]
        assert values[-1] < 0.75 * values[0], key


def test_metrics_are_named_per_output_and_validated_on():
    model = ticket_model()
    model.compile(optimizer="adam", loss=["mse", guide_losses()[1]],
                  metrics={"department": ["accuracy"]})
    x, y = ticket_data(50, seed=3)
    history = model.fit(x, y, epochs=1, verbose=0, validation_split=0.2)
    assert sorted(history.history) == [
        "department_accuracy", "department_loss", "loss", "priority_loss",
        "val_department_accuracy", "val_department_loss", "val_loss",
        "val_priority_loss"]


def test_data_may_be_lists_in_input_and_output_order():
    model = ticket_model()
    model.compile(optimizer="adam", loss=["mse", "mse"])
    x, y = ticket_data(20, seed=4)
    xs = [x["title"], x["body"], x["tags"]]
    ys = [y["priority"], y["department"]]
    by_list = model.evaluate(xs, ys, return_dict=True)
    assert by_list == model.evaluate(x, y, return_dict=True)
    history = model.fit(xs, ys, verbose=0, validation_data=(xs, ys))
    assert "val_priority_loss" in history.history


def test_evaluate_lists_the_total_then_each_outputs_loss():
    model = ticket_model()
    model.compile(optimizer="adam", loss=["mse", "mse"])
    x, y = ticket_data(20, seed=5)
    logs = model.evaluate(x, y, return_dict=True)
    assert model.evaluate(x, y) == [logs["loss"], logs["priority_loss"],
                                    logs["department_loss"]]


def test_one_sample_weight_scales_every_outputs_loss():
    model = ticket_model()
    model.compile(optimizer="adam", loss=["mse", "mse"],
                  loss_weights=[0.5, 2.0])
    x, y = ticket_data(40, seed=7)
    plain = model.evaluate(x, y, return_dict=True)
    weighted = model.evaluate(x, y, sample_weight=np.full(40, 2.0),
                              return_dict=True)
    for key in ("loss", "priority_loss", "department_loss"):
        assert weighted[key] == pytest.approx(2 * plain[key], rel=1e-5), key


def test_fit_on_dicts_takes_keras_3s_fit_arguments():
    model = ticket_model()
    model.compile(optimizer="adam", loss=["mse", "mse"])
    x, y = ticket_data(64, seed=8)
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0,
                        initial_epoch=1, steps_per_epoch=2,
                        sample_weight=np.ones(64),
                        validation_data=(x, y, np.ones(64)),
                        validation_freq=2, validation_batch_size=32)
    assert history.epoch == [1, 2]
    assert len(history.history["priority_loss"]) == 2
    assert len(history.history["val_department_loss"]) == 1


def test_class_weight_for_several_outputs_is_value_error_as_keras_3():
    model = ticket_model()
    model.compile(optimizer="adam", loss=["mse", "mse"])
    x, y = ticket_data(16, seed=9)
    with pytest.raises(ValueError, match="`class_weight` is only supported "
                                         "for Models with a single output."):
        model.fit(x, y, verbose=0, class_weight={0: 2.0})

def test_predict_returns_a_dict_when_the_outputs_were_a_dict():
    model = ticket_model(outputs_as_dict=True)
    x, _ = ticket_data(6, seed=6)
    out = model.predict(x)
    assert sorted(out) == ["department", "priority"]
    assert out["priority"].shape == (6, 1)
    assert out["department"].shape == (6, NUM_DEPARTMENTS)


def test_inputs_as_a_dict_are_flattened_in_key_order():
    a = keras.Input((2,), name="a")
    b = keras.Input((3,), name="b")
    y = layers.Dense(1)(layers.concatenate([a, b]))
    model = keras.Model(inputs={"b": b, "a": a}, outputs=y)
    assert model.input_names == ["a", "b"]
    x = {"a": np.ones((4, 2), np.float32), "b": np.ones((4, 3), np.float32)}
    assert model.predict(x).shape == (4, 1)


def test_an_output_without_a_loss_is_not_trained_on():
    model = ticket_model()
    model.compile(optimizer="adam", loss={"priority": "mse",
                                          "department": None})
    x, y = ticket_data(32, seed=7)
    before = model.get_weights()
    history = model.fit(x, {"priority": y["priority"]}, verbose=0)
    assert sorted(history.history) == ["loss"]
    after = model.get_weights()
    # The department layer's kernel and bias come last.
    for old, new in zip(before[-2:], after[-2:]):
        np.testing.assert_array_equal(old, new)
    assert not np.array_equal(before[-4], after[-4])  # priority's kernel


def test_a_sample_count_mismatch_is_value_error_naming_the_input():
    model = ticket_model()
    model.compile(optimizer="adam", loss=["mse", "mse"])
    x, y = ticket_data(20, seed=8)
    x["body"] = x["body"][:15]
    with pytest.raises(ValueError, match="input 'body' \\(x\\[1\\]\\) has 15 "
                       "samples but input 'title' \\(x\\[0\\]\\) has 20"):
        model.fit(x, y, verbose=0)


def test_an_unknown_data_key_is_value_error():
    model = ticket_model()
    x, _ = ticket_data(4, seed=9)
    x["subject"] = x["title"]
    with pytest.raises(ValueError, match="Unknown entries in input "
                       "dictionary: \\['subject'\\]"):
        model.predict(x)


def test_a_missing_input_is_value_error():
    model = ticket_model()
    x, _ = ticket_data(4, seed=10)
    del x["tags"]
    with pytest.raises(ValueError, match="Missing data for input 'tags'"):
        model.predict(x)


def test_a_loss_dict_of_unknown_keys_is_value_error():
    model = ticket_model()
    with pytest.raises(ValueError, match="Expected keys"):
        model.compile(optimizer="adam", loss={"priority": "mse",
                                              "urgency": "mse"})


def test_a_loss_list_of_another_length_is_value_error():
    model = ticket_model()
    with pytest.raises(ValueError, match="as many entries as the model has "
                       "outputs"):
        model.compile(optimizer="adam", loss=["mse"])


def test_saving_a_multi_output_model_is_not_implemented(tmp_path):
    with pytest.raises(NotImplementedError):
        ticket_model().save(tmp_path / "model")
