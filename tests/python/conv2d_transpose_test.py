"""graphgc.layers.Conv2DTranspose: Keras 3's keyword arguments, kernel
shape and values (against a NumPy scatter-add), the functional_api.py
decoder's shapes, training, save/load and refusals."""

import inspect

import numpy as np
import pytest

import graphgc as keras
from graphgc import layers


def _transpose_conv(x, kernel, stride, padding):
    """y[b, i*s + ky - top, j*s + kx - left, f] += x[b, i, j, c] *
    kernel[ky, kx, f, c], the output sized as Keras computes it."""
    n, h, w, _ = x.shape
    kh, kw, f, _ = kernel.shape

    def side(size, k):
        return size * stride if padding == "same" else (
            (size - 1) * stride + max(k, stride))

    oh, ow = side(h, kh), side(w, kw)
    # The padding TensorFlow puts in front of the convolution transposed.
    top = max((h - 1) * stride + kh - oh, 0) // 2 if padding == "same" else 0
    left = max((w - 1) * stride + kw - ow, 0) // 2 if padding == "same" else 0
    full = np.zeros((n, (h - 1) * stride + kh, (w - 1) * stride + kw, f))
    for i in range(h):
        for j in range(w):
            full[:, i * stride:i * stride + kh, j * stride:j * stride + kw] += (
                np.einsum("bc,yxfc->byxf", x[:, i, j], kernel))
    out = np.zeros((n, oh, ow, f))
    rows = min(oh, full.shape[1] - top)
    cols = min(ow, full.shape[2] - left)
    out[:, :rows, :cols] = full[:, top:top + rows, left:left + cols]
    return out


def test_class_takes_keras_3_arguments():
    assert list(inspect.signature(layers.Conv2DTranspose).parameters)[:10] == [
        "filters", "kernel_size", "strides", "padding", "output_padding",
        "data_format", "dilation_rate", "activation", "use_bias", "name"]


@pytest.mark.parametrize("stride,padding", [
    (1, "valid"), (2, "valid"), (1, "same"), (2, "same")])
def test_values_match_a_numpy_scatter_add(stride, padding):
    layer = layers.Conv2DTranspose(3, 3, strides=stride, padding=padding,
                                   seed=7)
    model = keras.Sequential([layers.Input((3, 4, 2)), layer])
    kernel, bias = model.get_weights()
    assert kernel.shape == (3, 3, 3, 2)
    assert layer.filters == 3
    x = np.random.default_rng(0).normal(size=(2, 3, 4, 2)).astype(np.float32)
    want = _transpose_conv(x, kernel, stride, padding) + bias
    np.testing.assert_allclose(model.predict(x, verbose=0), want,
                               rtol=1e-5, atol=1e-5)


def test_functional_api_decoder_gives_28_by_28_images():
    decoder_input = keras.Input(shape=(16,), name="encoded_img")
    x = layers.Reshape((4, 4, 1))(decoder_input)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    assert x.shape == (None, 6, 6, 16)
    x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
    x = layers.UpSampling2D(3)(x)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)
    assert decoder_output.shape == (None, 28, 28, 1)
    decoder = keras.Model(decoder_input, decoder_output, name="decoder")
    x = np.random.default_rng(1).normal(size=(3, 16)).astype(np.float32)
    assert decoder.predict(x, verbose=0).shape == (3, 28, 28, 1)
    assert "(Conv2DTran" in _summary(decoder)


def _summary(model):
    lines = []
    model.summary(print_fn=lines.append)
    return "\n".join(lines)


def test_model_trains_saves_and_loads(tmp_path):
    model = keras.Sequential([
        layers.Input((3, 3, 2)),
        layers.Conv2DTranspose(4, 2, strides=2, activation="relu"),
        layers.Conv2DTranspose(2, 3, padding="same"),
        layers.Flatten(),
        layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 3, 3, 2)).astype(np.float32)
    y = rng.normal(size=(4, 1)).astype(np.float32)
    history = model.fit(x, y, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    model.save(tmp_path / "model")
    loaded = keras.models.load_model(tmp_path / "model")
    assert type(loaded.layers[0]).__name__ == "Conv2DTranspose"
    np.testing.assert_allclose(loaded.predict(x, verbose=0),
                               model.predict(x, verbose=0),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kwargs,what", [
    ({"output_padding": 1}, "output_padding"),
    ({"dilation_rate": 2}, "dilation_rate"),
    ({"data_format": "channels_first"}, "data_format"),
    ({"padding": "causal"}, "padding"),
])
def test_what_graphgc_lacks_is_a_value_error_naming_it(kwargs, what):
    with pytest.raises(ValueError, match=what):
        keras.Sequential([layers.Input((4, 4, 1)),
                          layers.Conv2DTranspose(2, 3, **kwargs)])
