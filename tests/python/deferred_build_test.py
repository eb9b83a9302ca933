"""Sequential models without an Input: built on their first data or by
build(input_shape), as Keras 3's delayed-build pattern; and pop()."""

import numpy as np
import pytest

import graphgc
from graphgc import layers


def _unbuilt(name=None):
    return graphgc.Sequential([layers.Dense(8, activation="relu"),
                               layers.Dense(4)], name=name)


def _data(rows=16, features=6):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, features)).astype(np.float32)
    y = rng.normal(size=(rows, 4)).astype(np.float32)
    return x, y


def test_a_model_without_an_input_is_not_built_and_has_no_weights_yet():
    model = _unbuilt()
    assert not model.built
    assert len(model.layers) == 2
    with pytest.raises(ValueError, match="has not yet been built"):
        model.get_weights()


def test_summary_of_an_unbuilt_model_shows_unknown_shapes_and_no_params():
    lines = []
    _unbuilt(name="later").summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert 'Model: "later"' in text
    assert text.count("0 (unbuilt)") == 2
    assert "dense (Dense)" in text
    assert "Total params: 0" in text


def test_build_takes_the_batch_shape_and_makes_the_weights():
    model = _unbuilt()
    model.build((None, 16))
    assert model.built
    shapes = [w.shape for w in model.get_weights()]
    assert shapes == [(16, 8), (8,), (8, 4), (4,)]


def test_build_with_something_other_than_a_shape_does_nothing():
    model = _unbuilt()
    model.build(None)
    model.build(("a", 3))
    assert not model.built


def test_predict_and_call_build_from_the_data_shape():
    x, _ = _data(features=5)
    model = _unbuilt()
    out = model(x)
    assert out.shape == (16, 4)
    assert model.get_weights()[0].shape == (5, 8)
    np.testing.assert_allclose(model.predict(x), out, rtol=1e-6)


def test_compile_before_the_build_is_applied_when_fit_builds():
    x, y = _data()
    model = _unbuilt()
    model.compile(optimizer=graphgc.optimizers.SGD(0.05), loss="mse",
                  metrics=["mae"])
    assert not model.built
    history = model.fit(x, y, epochs=5, batch_size=16, verbose=0)
    assert model.built
    assert sorted(history.history) == ["loss", "mae"]
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert model.optimizer.iterations == 5


def test_compile_checks_the_loss_name_before_the_build():
    with pytest.raises(ValueError):
        _unbuilt().compile(optimizer="sgd", loss="no_such_loss")


def test_data_the_layers_refuse_leaves_the_model_unbuilt_for_other_data():
    model = graphgc.Sequential([layers.Conv2D(2, 3), layers.Flatten()])
    with pytest.raises(ValueError):
        model.predict(np.zeros((2, 6), np.float32))
    assert not model.built and len(model.layers) == 2
    out = model.predict(np.zeros((2, 5, 5, 1), np.float32))
    assert out.shape == (2, 18)


def test_an_input_after_other_layers_is_refused():
    model = graphgc.Sequential([layers.Dense(3)])
    with pytest.raises(ValueError, match="first layer"):
        model.add(layers.Input((4,)))
    assert len(model.layers) == 1


def test_pop_returns_the_last_layer_and_the_others_keep_their_weights():
    model = graphgc.Sequential([layers.Input((4,)), layers.Dense(2),
                                layers.Dense(3)])
    last = model.layers[-1]
    kernel, bias = model.get_weights()[:2]
    assert model.pop() is last
    assert len(model.layers) == 1
    assert model.predict(np.zeros((1, 4), np.float32)).shape == (1, 2)
    kept_kernel, kept_bias = model.get_weights()
    np.testing.assert_array_equal(kept_kernel, kernel)
    np.testing.assert_array_equal(kept_bias, bias)


def test_pop_of_an_unbuilt_model_keeps_it_unbuilt():
    model = _unbuilt()
    model.pop()
    assert len(model.layers) == 1 and not model.built


def test_pop_after_compile_is_refused():
    model = graphgc.Sequential([layers.Input((4,)), layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(RuntimeError, match="pop"):
        model.pop()
    assert len(model.layers) == 1


def test_add_after_a_compile_that_waits_for_the_build_is_refused():
    model = _unbuilt()
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(RuntimeError, match="after compile"):
        model.add(layers.Dense(2))
    assert len(model.layers) == 2


def test_summary_of_an_unbuilt_model_names_layers_as_they_will_be_named():
    lines = []
    graphgc.Sequential([layers.Conv2D(2, 3), layers.MaxPooling2D(),
                        layers.GlobalAveragePooling1D()]).summary(
                            print_fn=lines.append)
    text = "\n".join(lines)
    assert "conv2d (Conv2D)" in text
    assert "max_pooling2d (MaxPooling2D)" in text
    assert "global_average_pooling1d (GlobalAveragePooling1D)" in text
