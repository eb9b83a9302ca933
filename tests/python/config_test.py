"""graphgc.config: the process-wide intra-op thread count."""

import os

import numpy as np
import pytest

import graphgc
from graphgc import layers


@pytest.fixture(autouse=True)
def automatic_threads():
    """Every test starts and ends with the automatic count."""
    graphgc.config.set_intra_op_threads(0)
    yield
    graphgc.config.set_intra_op_threads(0)


def test_the_default_is_at_least_one_and_at_most_the_affinity():
    n = graphgc.config.get_intra_op_threads()
    assert 1 <= n <= len(os.sched_getaffinity(0))


def test_a_set_count_is_what_get_returns():
    graphgc.config.set_intra_op_threads(3)
    assert graphgc.config.get_intra_op_threads() == 3


def test_zero_restores_the_automatic_count():
    automatic = graphgc.config.get_intra_op_threads()
    graphgc.config.set_intra_op_threads(5)
    graphgc.config.set_intra_op_threads(0)
    assert graphgc.config.get_intra_op_threads() == automatic


def test_tf_spelling_sets_the_same_count_and_reads_zero_while_automatic():
    threading = graphgc.config.threading
    assert threading.get_intra_op_parallelism_threads() == 0
    threading.set_intra_op_parallelism_threads(2)
    assert threading.get_intra_op_parallelism_threads() == 2
    assert graphgc.config.get_intra_op_threads() == 2


def test_a_negative_count_is_value_error_and_changes_nothing():
    graphgc.config.set_intra_op_threads(2)
    with pytest.raises(ValueError, match="-1 threads"):
        graphgc.config.set_intra_op_threads(-1)
    assert graphgc.config.get_intra_op_threads() == 2


@pytest.mark.parametrize("bad", [1.5, "2", True, None])
def test_a_count_that_is_not_an_int_is_type_error(bad):
    with pytest.raises(TypeError):
        graphgc.config.set_intra_op_threads(bad)


def convnet():
    model = graphgc.Sequential([
        layers.Input((16, 16, 4)),
        layers.Conv2D(16, 3, padding="same", activation="relu", seed=1),
        layers.MaxPooling2D(2),
        layers.Flatten(),
        layers.Dense(10, activation="softmax", seed=2),
    ])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    return model


def test_a_model_made_with_four_threads_trains_as_one_made_with_one():
    rng = np.random.default_rng(0)
    x = rng.random((64, 16, 16, 4), dtype=np.float32)
    y = rng.integers(0, 10, 64).astype(np.int32)
    graphgc.config.set_intra_op_threads(1)
    one = convnet()
    graphgc.config.set_intra_op_threads(4)
    four = convnet()
    h1 = one.fit(x, y, epochs=2, shuffle=False, verbose=0)
    h4 = four.fit(x, y, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(h4.history["loss"], h1.history["loss"],
                               rtol=1e-5)
    for w4, w1 in zip(four.get_weights(), one.get_weights()):
        np.testing.assert_allclose(w4, w1, rtol=1e-4, atol=1e-5)
