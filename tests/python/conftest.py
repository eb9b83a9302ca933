"""Shared fixtures of the graphgc Python suites (run with PYTHONPATH set to
bazel-bin/python; see run_tests.sh)."""

import numpy as np
import pytest

import graphgc


@pytest.fixture
def data():
    """The seed program's shape of data: 256 samples of 10 features, labels
    in [0, 10)."""
    rng = np.random.default_rng(0)
    x = rng.random((256, 10), dtype=np.float32)
    y = rng.integers(0, 10, 256).astype(np.int32)
    return x, y


def make_model(name=None, compile=True, metrics=("accuracy",)):
    model = graphgc.Sequential([
        graphgc.layers.Input((10,)),
        graphgc.layers.Dense(16, activation="relu", seed=1),
        graphgc.layers.Dense(10, activation="softmax", seed=2),
    ], name=name)
    if compile:
        model.compile(optimizer="adam",
                      loss="sparse_categorical_crossentropy",
                      metrics=list(metrics))
    return model


@pytest.fixture
def model():
    return make_model()


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "threads: uses several threads; also run under ThreadSanitizer "
        "(tests/python/tsan_stage.sh)")
