"""save_weights / load_weights (.weights.h5, Keras 3's rules), get_config /
from_config, to_json / model_from_json."""

import json

import numpy as np
import pytest

import graphgc
from conftest import make_model


def functional(hidden=5, name=None):
    x = graphgc.Input((4,))
    h = graphgc.layers.Dense(hidden, activation="relu", name=name)(x)
    y = graphgc.layers.Dense(2)(h)
    return graphgc.Model(x, y)


def same(a, b):
    return len(a) == len(b) and all(
        x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))


def test_sequential_weights_round_trip(tmp_path):
    saved, loaded = make_model(), make_model()
    loaded.set_weights([w + 1 for w in loaded.get_weights()])
    path = tmp_path / "w.weights.h5"
    saved.save_weights(path)
    loaded.load_weights(path)
    assert same(saved.get_weights(), loaded.get_weights())


def test_functional_weights_round_trip(tmp_path):
    saved, loaded = functional(), functional()
    path = str(tmp_path / "w.weights.h5")
    saved.save_weights(path)
    loaded.load_weights(path)
    assert same(saved.get_weights(), loaded.get_weights())


def test_save_weights_without_the_weights_h5_suffix_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"must end in `\.weights\.h5`"):
        make_model().save_weights(tmp_path / "w.h5")
    assert not (tmp_path / "w.h5").exists()


def test_load_weights_of_an_unknown_suffix_is_refused(tmp_path):
    with pytest.raises(ValueError, match="File format not supported"):
        make_model().load_weights(tmp_path / "w.bin")


def test_load_weights_of_legacy_h5_is_not_implemented(tmp_path):
    with pytest.raises(NotImplementedError, match="legacy"):
        make_model().load_weights(tmp_path / "w.h5")


def test_mismatched_shapes_are_refused_naming_the_layer_changing_nothing(
        tmp_path):
    path = tmp_path / "w.weights.h5"
    functional(hidden=5).save_weights(path)
    other = functional(hidden=6, name="hidden")
    before = other.get_weights()
    with pytest.raises(ValueError, match="layer 'hidden'"):
        other.load_weights(path)
    assert same(before, other.get_weights())


def test_a_file_of_more_layers_is_refused_changing_nothing(tmp_path):
    bigger = graphgc.Sequential([
        graphgc.layers.Input((10,)), graphgc.layers.Dense(16),
        graphgc.layers.Dense(10), graphgc.layers.Dense(10)])
    path = tmp_path / "w.weights.h5"
    bigger.save_weights(path)
    model = make_model()
    before = model.get_weights()
    with pytest.raises(ValueError, match="Layer count mismatch"):
        model.load_weights(path)
    assert same(before, model.get_weights())


def test_load_weights_of_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        make_model().load_weights(tmp_path / "none.weights.h5")


def test_load_weights_of_a_corrupt_file_is_os_error_changing_nothing(
        tmp_path):
    path = tmp_path / "w.weights.h5"
    path.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
    model = make_model()
    before = model.get_weights()
    with pytest.raises(OSError):
        model.load_weights(path)
    assert same(before, model.get_weights())


def unnamed(text):
    """A Sequential's JSON config without the names the graph uniques."""
    config = json.loads(text)
    del config["config"]["name"]
    for layer in config["config"]["layers"]:
        del layer["config"]["name"]
    return config


def test_to_json_is_keras_json_of_the_model():
    config = json.loads(make_model(name="mlp").to_json())
    assert config["class_name"] == "Sequential"
    assert config["config"]["name"] == "mlp"
    assert "compile_config" in config


def test_model_from_json_rebuilds_the_same_config_compiled():
    model = make_model(name="mlp")
    copy = graphgc.models.model_from_json(model.to_json())
    assert isinstance(copy, graphgc.Sequential)
    assert unnamed(copy.to_json()) == unnamed(model.to_json())
    assert copy._build().compiled


def test_model_from_json_of_a_functional_gives_a_model():
    copy = graphgc.models.model_from_json(functional().to_json())
    assert type(copy) is graphgc.Model
    assert [w.shape for w in copy.get_weights()] == [(4, 5), (5,), (5, 2),
                                                     (2,)]


def test_get_config_and_from_config_round_trip_a_sequential():
    model = make_model(compile=False)
    copy = graphgc.Sequential.from_config(model.get_config())
    assert isinstance(copy, graphgc.Sequential)
    assert [w.shape for w in copy.get_weights()] == [
        w.shape for w in model.get_weights()]
    assert not copy._build().compiled


def test_get_config_and_from_config_round_trip_a_functional():
    model = functional()
    copy = graphgc.Model.from_config(model.get_config())
    assert type(copy) is graphgc.Model
    assert [type(layer).__name__ for layer in copy.layers] == [
        type(layer).__name__ for layer in model.layers]
    assert [w.shape for w in copy.get_weights()] == [
        w.shape for w in model.get_weights()]


def test_model_from_config_of_a_sequential_config_is_refused():
    with pytest.raises(ValueError, match="Sequential.from_config"):
        graphgc.Model.from_config(make_model().get_config())


def test_model_from_json_of_bad_json_is_value_error():
    with pytest.raises(ValueError):
        graphgc.models.model_from_json('{"class_name": "Sequential"')


def test_branched_functional_weights_round_trip(tmp_path):
    def branched():
        x = graphgc.Input((4,))
        a = graphgc.layers.Dense(3)(x)
        b = graphgc.layers.Dense(3)(graphgc.layers.Dense(6)(x))
        y = graphgc.layers.Dense(2)(graphgc.layers.Add()([a, b]))
        return graphgc.Model(x, y)
    saved, loaded = branched(), branched()
    path = tmp_path / "w.weights.h5"
    saved.save_weights(path)
    loaded.load_weights(path)
    assert same(saved.get_weights(), loaded.get_weights())
