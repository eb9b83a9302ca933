"""graphgc.layers.Embedding and the global pooling layers: generated from
the C++ layer registry (models/layers/embedding.cc, global_*_pooling*d.cc)
with Keras 3's keyword arguments."""

import inspect

import numpy as np
import pytest

import graphgc
from graphgc import layers


def test_embedding_takes_keras_3_arguments():
    params = inspect.signature(layers.Embedding).parameters
    assert list(params)[:4] == ["input_dim", "output_dim",
                                "embeddings_initializer", "mask_zero"]
    assert params["embeddings_initializer"].default == "uniform"
    assert params["mask_zero"].default is False
    layer = layers.Embedding(input_dim=5, output_dim=3,
                             embeddings_initializer="uniform",
                             mask_zero=False, name="emb")
    model = graphgc.Sequential([layers.Input((2,)), layer])
    weights = model.get_weights()
    assert weights[0].shape == (5, 3)
    assert np.all(np.abs(weights[0]) <= 0.05)


def test_embedding_looks_up_float_ids_and_counts_keras_params():
    model = graphgc.Sequential([layers.Input((3,)), layers.Embedding(4, 2)])
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    model.set_weights([table])
    out = model.predict(np.array([[3, 0, 1.5]], dtype=np.float32))
    np.testing.assert_array_equal(out, table[[3, 0, 1]][None])
    assert model.count_params() == 8


def test_embedding_mask_zero_is_refused():
    with pytest.raises(Exception, match="mask_zero=True is not implemented"):
        graphgc.Sequential([layers.Input((2,)),
                            layers.Embedding(4, 2, mask_zero=True)])


@pytest.mark.parametrize("cls,rank", [
    (layers.GlobalAveragePooling2D, 2), (layers.GlobalMaxPooling2D, 2),
    (layers.GlobalAveragePooling1D, 1), (layers.GlobalMaxPooling1D, 1)])
def test_global_pooling_takes_keras_3_arguments(cls, rank):
    params = inspect.signature(cls).parameters
    assert list(params) == ["data_format", "keepdims", "name"]
    shape = (3, 2, 4) if rank == 2 else (3, 4)
    model = graphgc.Sequential([
        layers.Input(shape),
        cls(data_format="channels_last", keepdims=False)])
    x = np.random.default_rng(0).normal(size=(2,) + shape).astype(np.float32)
    axes = tuple(range(1, rank + 1))
    want = x.max(axis=axes) if "Max" in cls.__name__ else x.mean(axis=axes)
    np.testing.assert_allclose(model.predict(x), want, rtol=1e-6, atol=1e-6)
