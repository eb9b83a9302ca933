"""A model called as a layer (graphgc/_nested.py): calling a functional
model or a Sequential on symbolic tensors calls its layers again on them,
sharing their weights, as keras-io's guides/functional_api.py nests models."""

import numpy as np
import pytest

import graphgc as keras
from graphgc import layers


def small_model(features=8, seed=1, name=None):
    inputs = keras.Input((features,))
    outputs = layers.Dense(1, seed=seed)(inputs)
    return keras.Model(inputs, outputs, name=name)


def data(samples=64, features=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((samples, features), dtype=np.float32)
    return x, x.sum(axis=1, keepdims=True)


def live_nodes():
    keras.collect()
    return keras.gc_stats()["live_nodes"]


def test_autoencoder_of_an_encoder_and_a_decoder_model_has_the_image_shape():
    encoder_input = keras.Input(shape=(28, 28, 1), name="img")
    x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
    x = layers.MaxPooling2D(3)(x)
    x = layers.Conv2D(16, 3, activation="relu")(x)
    encoder_output = layers.GlobalMaxPooling2D()(x)
    encoder = keras.Model(encoder_input, encoder_output, name="encoder")
    decoder_input = keras.Input(shape=(16,), name="encoded_img")
    x = layers.Dense(7 * 7 * 4, activation="relu")(decoder_input)
    x = layers.Reshape((7, 7, 4))(x)
    x = layers.UpSampling2D(2)(x)
    x = layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    x = layers.UpSampling2D(2)(x)
    decoder_output = layers.Conv2D(1, 3, padding="same",
                                   activation="sigmoid")(x)
    decoder = keras.Model(decoder_input, decoder_output, name="decoder")

    autoencoder_input = keras.Input(shape=(28, 28, 1), name="img")
    encoded_img = encoder(autoencoder_input)
    decoded_img = decoder(encoded_img)
    autoencoder = keras.Model(autoencoder_input, decoded_img,
                              name="autoencoder")

    assert encoded_img.shape == (None, 16)
    assert autoencoder.output_shape == (None, 28, 28, 1)
    images = np.zeros((2, 28, 28, 1), np.float32)
    assert autoencoder.predict(images).shape == (2, 28, 28, 1)


def test_ensemble_of_three_models_predicts_the_mean_of_their_predictions():
    model1, model2, model3 = (small_model(128, seed=s) for s in (1, 2, 3))
    inputs = keras.Input(shape=(128,))
    outputs = layers.average([model1(inputs), model2(inputs),
                              model3(inputs)])
    ensemble_model = keras.Model(inputs=inputs, outputs=outputs)

    x = np.random.default_rng(0).random((10, 128), dtype=np.float32)
    expected = (model1.predict(x) + model2.predict(x)
                + model3.predict(x)) / 3
    np.testing.assert_allclose(ensemble_model.predict(x), expected,
                               rtol=1e-5, atol=1e-6)


def test_fitting_the_outer_model_trains_the_inner_models_weights():
    inner = small_model()
    inputs = keras.Input((8,))
    outer = keras.Model(inputs, layers.Dense(1, seed=9)(inner(inputs)))
    outer.compile(optimizer="sgd", loss="mse")
    before = inner.get_weights()

    outer.fit(*data(), epochs=2, verbose=0)

    after = inner.get_weights()
    assert not np.array_equal(before[0], after[0])
    np.testing.assert_array_equal(outer.get_weights()[0], after[0])


def test_a_model_called_twice_has_one_set_of_weights():
    inner = small_model(name="shared")
    first, second = keras.Input((8,)), keras.Input((8,))
    outer = keras.Model([first, second],
                        layers.add([inner(first), inner(second)]))

    assert outer.count_params() == inner.count_params()
    x = data()[0]
    np.testing.assert_allclose(outer.predict([x, x]), 2 * inner.predict(x),
                               rtol=1e-5)


def test_the_outer_model_lists_the_inner_models_layers_flattened():
    inner = small_model(name="encoder")
    inputs = keras.Input((8,))
    outer = keras.Model(inputs, inner(inputs))

    assert len(outer.layers) == 2
    assert outer.layers[1] is inner.layers[1]
    assert "encoder" not in [layer.name for layer in outer.layers]


def test_a_sequential_called_on_a_tensor_calls_its_layers():
    inner = keras.Sequential([keras.Input((8,)), layers.Dense(4, seed=1),
                              layers.Dense(1, seed=2)])
    inputs = keras.Input((8,))
    outer = keras.Model(inputs, inner(inputs))

    x = data()[0]
    np.testing.assert_allclose(outer.predict(x), inner.predict(x), rtol=1e-5)


def test_a_sequential_without_an_input_is_built_for_the_tensor():
    inner = keras.Sequential([layers.Dense(3, seed=1)])

    out = inner(keras.Input((6,)))

    assert out.shape == (None, 3)
    assert inner.built


def test_a_loaded_model_called_as_a_layer_computes_what_it_predicts(
        tmp_path):
    inputs = keras.Input((8,))
    shared = layers.Dense(8, seed=1)
    once = shared(inputs)
    saved = keras.Model(inputs, layers.Dense(1, seed=2)(
        layers.concatenate([once, shared(once)])))
    saved.save(tmp_path / "inner.keras")
    inner = keras.models.load_model(tmp_path / "inner.keras")
    outer_input = keras.Input((8,))
    outer = keras.Model(outer_input, inner(outer_input))

    x = data()[0]
    np.testing.assert_allclose(outer.predict(x), inner.predict(x), rtol=1e-5)


def test_outputs_come_back_in_the_models_output_structure():
    inputs = keras.Input((8,))
    inner = keras.Model(inputs, {"a": layers.Dense(1)(inputs),
                                 "b": layers.Dense(2)(inputs)})

    out = inner(keras.Input((8,)))

    assert sorted(out) == ["a", "b"]
    assert out["b"].shape == (None, 2)


def test_a_model_of_two_inputs_takes_them_as_a_dict_keyed_like_its_inputs():
    a, b = keras.Input((3,)), keras.Input((5,))
    inner = keras.Model({"a": a, "b": b},
                        layers.concatenate([a, b]))

    out = inner({"b": keras.Input((5,)), "a": keras.Input((3,))})

    assert out.shape == (None, 8)


def test_a_wrong_number_of_inputs_is_value_error_naming_the_model():
    inner = small_model(name="encoder")
    with pytest.raises(ValueError, match='"encoder" expects 1 input'):
        inner([keras.Input((8,)), keras.Input((8,))])


def test_a_wrong_input_shape_is_value_error_naming_the_model():
    inner = small_model(name="encoder")
    with pytest.raises(ValueError, match="layer 'encoder' is incompatible"):
        inner(keras.Input((5,)))


def test_a_sequential_given_a_wrong_shape_is_value_error_naming_it():
    inner = keras.Sequential([keras.Input((8,)), layers.Dense(1)],
                             name="stack")
    with pytest.raises(ValueError, match="layer 'stack' is incompatible"):
        inner(keras.Input((5,)))


def test_the_inner_model_works_after_the_outer_model_is_dropped():
    inner = small_model()
    x = data()[0]
    expected = inner.predict(x)
    inputs = keras.Input((8,))
    outer = keras.Model(inputs, inner(inputs))
    outer.predict(x)

    del outer, inputs
    keras.collect()

    np.testing.assert_allclose(inner.predict(x), expected, rtol=1e-6)


def test_outer_models_around_one_sub_model_leave_the_live_graph_bounded():
    inner = small_model()
    x = data()[0]

    def outer_model():
        inputs = keras.Input((8,))
        outer = keras.Model(inputs, layers.Dense(1)(inner(inputs)))
        outer.predict(x)

    outer_model()
    after_one = live_nodes()
    for _ in range(199):
        outer_model()

    assert live_nodes() == after_one
