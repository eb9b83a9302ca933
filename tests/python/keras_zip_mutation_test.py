"""load_model / load_weights of randomly damaged .keras files: every
mutation of a valid file (bytes changed, inserted, deleted, the file cut
short) either loads or raises ValueError, and a failed load_weights
changes no weight. Seeded, so a failure reproduces."""

import random

import numpy as np
import pytest

import graphgc


def functional():
    x = graphgc.Input((4,))
    y = graphgc.layers.Dense(3)(graphgc.layers.Dense(5)(x))
    model = graphgc.Model(x, y)
    model.compile(optimizer="adam", loss="mse")
    return model


def mutate(data, rng):
    d = bytearray(data)
    op = rng.randrange(4)
    if op == 0:
        for _ in range(rng.randrange(1, 8)):
            d[rng.randrange(len(d))] = rng.randrange(256)
    elif op == 1:
        del d[rng.randrange(len(d)):]
    elif op == 2:
        at = rng.randrange(len(d))
        d[at:at] = bytes(rng.randrange(256)
                         for _ in range(rng.randrange(1, 64)))
    else:
        at = rng.randrange(len(d))
        del d[at:at + rng.randrange(1, 256)]
    return bytes(d)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("zip") / "m.keras"
    functional().save(path)
    return path.read_bytes()


@pytest.mark.parametrize("seed", range(4))
def test_damaged_file_loads_or_raises_value_error(tmp_path, saved, seed):
    rng = random.Random(seed)
    path = tmp_path / "damaged.keras"
    for _ in range(100):
        path.write_bytes(mutate(saved, rng))
        try:
            graphgc.models.load_model(path)
        except ValueError:
            pass


@pytest.mark.parametrize("seed", range(2))
def test_damaged_file_load_weights_changes_nothing_on_error(tmp_path, saved,
                                                           seed):
    rng = random.Random(100 + seed)
    model = functional()
    before = model.get_weights()
    path = tmp_path / "damaged.keras"
    for _ in range(100):
        path.write_bytes(mutate(saved, rng))
        try:
            model.load_weights(path)
            before = model.get_weights()
        except ValueError:
            for a, b in zip(before, model.get_weights()):
                np.testing.assert_array_equal(a, b)
