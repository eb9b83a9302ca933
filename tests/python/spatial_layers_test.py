"""graphgc.layers' spatial layers (AveragePooling2D, MaxPooling1D,
AveragePooling1D, ZeroPadding2D/1D, Cropping2D/1D, UpSampling2D, Conv1D):
generated from the C++ layer registry with Keras 3's keyword arguments;
values, save/load and refusals."""

import inspect

import numpy as np
import pytest

import graphgc
from graphgc import layers


def _params(cls):
    return list(inspect.signature(cls).parameters)


def test_classes_take_keras_3_arguments():
    assert _params(layers.AveragePooling2D) == [
        "pool_size", "strides", "padding", "data_format", "name"]
    pool_size = inspect.signature(layers.AveragePooling2D).parameters[
        "pool_size"]
    assert pool_size.default is inspect.Parameter.empty
    assert inspect.signature(layers.MaxPooling1D).parameters[
        "pool_size"].default == 2
    assert _params(layers.ZeroPadding2D) == ["padding", "data_format", "name"]
    assert _params(layers.Cropping2D) == ["cropping", "data_format", "name"]
    assert _params(layers.Cropping1D) == ["cropping", "name"]
    assert _params(layers.UpSampling2D) == [
        "size", "data_format", "interpolation", "name"]
    assert _params(layers.Conv1D)[:6] == [
        "filters", "kernel_size", "strides", "padding", "data_format",
        "activation"]


def test_average_pooling2d_same_matches_keras_example():
    model = graphgc.Sequential([
        layers.Input((3, 3, 1)),
        layers.AveragePooling2D(pool_size=(2, 2), strides=(1, 1),
                                padding="same")])
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    want = np.array([[3, 4, 4.5], [6, 7, 7.5], [7.5, 8.5, 9]],
                    dtype=np.float32).reshape(1, 3, 3, 1)
    np.testing.assert_allclose(model.predict(x), want, rtol=1e-6)


@pytest.mark.parametrize("cls,reduce", [
    (layers.MaxPooling1D, np.max), (layers.AveragePooling1D, np.mean)])
def test_1d_pooling_pools_windows_of_steps(cls, reduce):
    model = graphgc.Sequential([layers.Input((6, 2)), cls(pool_size=2)])
    x = np.random.default_rng(0).normal(size=(3, 6, 2)).astype(np.float32)
    want = reduce(x.reshape(3, 3, 2, 2), axis=2)
    np.testing.assert_allclose(model.predict(x), want, rtol=1e-6, atol=1e-6)


def test_padding_and_cropping_take_keras_forms():
    model = graphgc.Sequential([
        layers.Input((2, 3, 1)),
        layers.ZeroPadding2D(padding=((1, 0), (2, 1))),
        layers.Cropping2D(cropping=(0, 1))])
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 2, 3, 1)
    padded = np.pad(x, ((0, 0), (1, 0), (2, 1), (0, 0)))
    np.testing.assert_array_equal(model.predict(x), padded[:, :, 1:-1, :])
    seq = graphgc.Sequential([layers.Input((4, 1)), layers.ZeroPadding1D(2),
                              layers.Cropping1D((1, 3))])
    y = np.arange(4, dtype=np.float32).reshape(1, 4, 1) + 1
    np.testing.assert_array_equal(
        seq.predict(y), np.pad(y, ((0, 0), (2, 2), (0, 0)))[:, 1:-3])


def test_up_sampling2d_repeats_pixels_and_refuses_bilinear():
    model = graphgc.Sequential([layers.Input((2, 2, 1)),
                                layers.UpSampling2D(size=(2, 3))])
    x = np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1)
    want = x.repeat(2, axis=1).repeat(3, axis=2)
    np.testing.assert_array_equal(model.predict(x), want)
    # A layer's refusal reaches Sequential as ValueError, as Embedding's.
    with pytest.raises(ValueError, match="bilinear.*not implemented"):
        graphgc.Sequential([layers.Input((2, 2, 1)),
                            layers.UpSampling2D(interpolation="bilinear")])


def test_conv1d_has_keras_kernel_shape_and_causal_padding():
    model = graphgc.Sequential([
        layers.Input((5, 2)),
        layers.Conv1D(3, 2, padding="causal", use_bias=False)])
    (kernel,) = model.get_weights()
    assert kernel.shape == (2, 2, 3)
    x = np.random.default_rng(1).normal(size=(1, 5, 2)).astype(np.float32)
    xp = np.pad(x, ((0, 0), (1, 0), (0, 0)))
    want = np.stack([xp[0, t:t + 2].reshape(-1) @ kernel.reshape(4, 3)
                     for t in range(5)])[None]
    np.testing.assert_allclose(model.predict(x), want, rtol=1e-5, atol=1e-5)


def test_spatial_model_trains_saves_and_loads(tmp_path):
    model = graphgc.Sequential([
        layers.Input((8, 2)),
        layers.Conv1D(4, 3, padding="same", activation="relu"),
        layers.MaxPooling1D(),
        layers.Reshape((2, 2, 4)),
        layers.ZeroPadding2D(1),
        layers.AveragePooling2D(2),
        layers.UpSampling2D(2),
        layers.Cropping2D(((1, 0), (0, 1))),
        layers.Flatten(),
        layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 8, 2)).astype(np.float32)
    y = rng.normal(size=(4, 1)).astype(np.float32)
    history = model.fit(x, y, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    model.save(tmp_path / "model")
    loaded = graphgc.models.load_model(tmp_path / "model")
    assert [type(layer).__name__ for layer in loaded.layers][:4] == [
        "Conv1D", "MaxPooling1D", "Reshape", "ZeroPadding2D"]
    np.testing.assert_allclose(loaded.predict(x), model.predict(x),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("make,what", [
    (lambda: layers.AveragePooling2D(0), "pool_size"),
    (lambda: layers.AveragePooling2D(2, padding="SAME"), "padding"),
    (lambda: layers.ZeroPadding2D(-1), "padding"),
    (lambda: layers.Cropping2D(5), "cropping"),
    (lambda: layers.UpSampling2D(interpolation="closest"), "interpolation"),
])
def test_bad_arguments_are_value_errors_naming_layer_and_argument(make, what):
    with pytest.raises(ValueError, match=what):
        graphgc.Sequential([layers.Input((4, 4, 1)), make()])


def test_bad_1d_arguments_are_value_errors():
    with pytest.raises(ValueError, match="kernel_size"):
        graphgc.Sequential([layers.Input((4, 1)), layers.Conv1D(2, 0)])
    with pytest.raises(ValueError, match="pool_size"):
        layers.MaxPooling1D(pool_size=(2, 2))
