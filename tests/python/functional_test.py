"""The functional API from Python: keras.Input tensors, layer calls on
them, keras.Model(inputs, outputs) and the merge layers' function forms, on
the C++ functional model (models/functional.h)."""

import re

import numpy as np
import pytest

import graphgc as keras
from graphgc import layers


def regression_data(samples=128, features=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((samples, features), dtype=np.float32)
    y = x.sum(axis=1, keepdims=True).astype(np.float32)
    return x, y


def residual_model(features=8, name=None):
    inputs = keras.Input((features,))
    h = layers.Dense(features, activation="relu", seed=1)(inputs)
    outputs = layers.Dense(1, seed=2)(layers.add([h, inputs]))
    return keras.Model(inputs, outputs, name=name)


def test_input_returns_a_symbolic_tensor_with_keras_shape():
    x = keras.Input((3, 4), name="pixels")
    assert isinstance(x, layers.KerasTensor)
    assert x.shape == (None, 3, 4)
    assert x.dtype == "float32"
    assert x.name == "pixels"
    assert isinstance(x._keras_history[0], layers.InputLayer)


def test_input_of_an_unknown_dimension_is_value_error():
    with pytest.raises(ValueError, match="sizes >= 1"):
        keras.Input((0,))


def test_layer_call_returns_a_tensor_of_the_output_shape():
    dense = layers.Dense(5)
    y = dense(keras.Input((3,)))
    assert y.shape == (None, 5)
    assert y._keras_history[0] is dense


def test_residual_model_trains():
    x, y = regression_data()
    model = residual_model()
    model.compile(optimizer="adam", loss="mse")
    loss = model.fit(x, y, epochs=10, batch_size=16, verbose=0)
    assert loss.history["loss"][-1] < loss.history["loss"][0]
    assert model.predict(x[:5]).shape == (5, 1)


def test_model_is_reachable_by_keras_spellings():
    assert keras.models.Model is keras.Model
    assert issubclass(keras.Sequential, keras.Model)


def test_layer_called_twice_has_one_set_of_weights():
    shared = layers.Dense(4, seed=3)
    inputs = keras.Input((4,))
    model = keras.Model(inputs, shared(shared(inputs)))
    assert [layer for layer in model.layers if layer is shared] == [shared]
    assert [w.shape for w in model.get_weights()] == [(4, 4), (4,)]


def test_lists_of_one_input_and_one_output_are_taken():
    inputs = keras.Input((4,))
    outputs = layers.Dense(2)(inputs)
    model = keras.Model([inputs], [outputs])
    assert model.inputs == [inputs]
    assert model.outputs == [outputs]
    assert model.input_shape == (None, 4)
    assert model.output_shape == (None, 2)


def test_merge_of_mismatched_shapes_is_value_error():
    with pytest.raises(ValueError):
        layers.add([keras.Input((3,)), keras.Input((4,))])


def test_merge_layer_on_one_tensor_is_value_error():
    with pytest.raises(ValueError):
        layers.Add()(keras.Input((3,)))


@pytest.mark.parametrize("merge", [
    layers.add, layers.subtract, layers.multiply, layers.average,
    layers.maximum, layers.minimum])
def test_elementwise_merge_functions_keep_the_shape(merge):
    assert merge([keras.Input((3,)), keras.Input((3,))]).shape == (None, 3)


def test_concatenate_joins_the_last_axis():
    joined = layers.concatenate([keras.Input((3,)), keras.Input((2,))],
                                axis=-1)
    assert joined.shape == (None, 5)


def test_summary_has_connected_to():
    lines = []
    residual_model().summary(print_fn=lines.append)
    assert "Connected to" in lines[0]


def test_get_layer_finds_the_layer_by_name():
    inputs = keras.Input((4,))
    dense = layers.Dense(2, name="head")
    model = keras.Model(inputs, dense(inputs))
    assert model.get_layer("head") is dense
    with pytest.raises(ValueError, match="No such layer: tail"):
        model.get_layer("tail")


def test_count_params_is_the_summary_total():
    model = residual_model()
    lines = []
    model.summary(print_fn=lines.append)
    total = re.search(r"Total params: ([\d,]+)", lines[0]).group(1)
    assert model.count_params() == int(total.replace(",", ""))
    assert model.count_params() == (8 * 8 + 8) + (8 + 1)


def test_set_weights_round_trips():
    model = residual_model()
    weights = [np.full_like(w, 0.5) for w in model.get_weights()]
    model.set_weights(weights)
    for got, want in zip(model.get_weights(), weights):
        np.testing.assert_array_equal(got, want)


class StopAfterFirstEpoch(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        self.model.stop_training = True


def test_a_callback_stops_a_functional_fit():
    x, y = regression_data()
    model = residual_model()
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(x, y, epochs=5, verbose=0,
                        callbacks=[StopAfterFirstEpoch()])
    assert history.epoch == [0]


def test_learning_rate_of_a_functional_model_is_settable():
    model = residual_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.25),
                  loss="mse")
    assert model.learning_rate == 0.25
    model.learning_rate = 0.5
    assert model.learning_rate == 0.5


def test_optimizer_learning_rate_drives_a_functional_model():
    model = residual_model()
    model.compile(optimizer="rmsprop", loss="mse")
    model.optimizer.learning_rate = 0.125
    assert model.learning_rate == 0.125


def test_a_saved_functional_model_loads_as_a_model(tmp_path):
    x, y = regression_data()
    model = residual_model(name="residual")
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=1, verbose=0)
    model.save(tmp_path / "model")
    loaded = keras.models.load_model(tmp_path / "model")
    assert type(loaded) is keras.Model
    # The saved name, uniqued in the graph the original still lives in.
    assert loaded.name in ("residual", "residual_1")
    assert [type(l).__name__ for l in loaded.layers] == [
        type(l).__name__ for l in model.layers]
    assert loaded.input_shape == (None, 8)
    assert loaded.output_shape == (None, 1)
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    for a, b in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
    loaded.fit(x, y, epochs=1, verbose=0)  # compiled as saved


def test_a_loaded_model_compiled_with_a_loss_per_output_names_the_count(
        tmp_path):
    residual_model().save(tmp_path / "model")
    loaded = keras.models.load_model(tmp_path / "model")
    with pytest.raises(ValueError, match="loss"):
        loaded.compile(optimizer="sgd", loss=["mse", "mae"])
    loaded.compile(optimizer="sgd", loss=["mse"])
    x, y = regression_data()
    loaded.fit([x], [y], epochs=1, verbose=0)


def test_a_saved_functional_config_is_keras_functional(tmp_path):
    import json
    residual_model().save(tmp_path / "model")
    config = json.loads((tmp_path / "model" / "config.json").read_text())
    assert config["class_name"] == "Functional"
    add = [l for l in config["config"]["layers"] if l["class_name"] == "Add"]
    args = add[0]["inbound_nodes"][0]["args"]
    assert len(args) == 1 and len(args[0]) == 2
    assert args[0][0]["class_name"] == "__keras_tensor__"


class RecordModel(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seen = self.model


def test_a_callback_sees_the_functional_model_fit_was_called_on(tmp_path):
    x, y = regression_data()
    model = residual_model()
    model.compile(optimizer="adam", loss="mse")
    record = RecordModel()
    checkpoint = keras.callbacks.ModelCheckpoint(
        str(tmp_path / "ckpt_{epoch}"))
    model.fit(x, y, epochs=1, verbose=0, callbacks=[record, checkpoint])
    assert record.seen is model
    loaded = keras.models.load_model(tmp_path / "ckpt_1")
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))


def test_sequential_with_keras_input_still_works():
    model = keras.Sequential([keras.Input((4,)), layers.Dense(2)])
    assert model.predict(np.zeros((3, 4), np.float32)).shape == (3, 2)


def live_nodes():
    keras.collect()
    return keras.gc_stats()["live_nodes"]


def model_on(shared, features=4):
    inputs = keras.Input((features,))
    model = keras.Model(inputs, layers.Dense(1, seed=5)(shared(inputs)))
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_dropped_model_is_collected_but_a_shared_layer_stays():
    x, y = regression_data(features=4)
    baseline = live_nodes()
    shared = layers.Dense(4, seed=4)
    kept, dropped = model_on(shared), model_on(shared)
    kept.fit(x, y, verbose=0)
    dropped.fit(x, y, verbose=0)
    both = live_nodes()
    del dropped
    one = live_nodes()
    assert baseline < one < both
    weights = kept.get_weights()
    kept.fit(x, y, verbose=0)
    assert not np.array_equal(kept.get_weights()[0], weights[0])
    del kept, shared
    assert live_nodes() == baseline
