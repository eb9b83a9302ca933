"""graphgc.optimizers and graphgc.losses: names and objects compile."""

import pytest

import graphgc
from conftest import make_model


@pytest.mark.parametrize("optimizer", [
    "adam", "sgd", "Adam", graphgc.optimizers.Adam(learning_rate=0.01),
    graphgc.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=True)])
def test_optimizer_names_and_objects_compile(optimizer, data):
    model = make_model(compile=False)
    model.compile(optimizer=optimizer,
                  loss="sparse_categorical_crossentropy")
    model.fit(*data, verbose=0)


def test_adam_learning_rate_reaches_the_model():
    model = make_model(compile=False)
    model.compile(optimizer=graphgc.optimizers.Adam(learning_rate=0.02),
                  loss="sparse_categorical_crossentropy")
    assert model.learning_rate == pytest.approx(0.02)
    model.learning_rate = 0.005
    assert model.learning_rate == pytest.approx(0.005)


def test_unknown_optimizer_is_value_error():
    with pytest.raises(ValueError, match="rmsprop"):
        make_model(compile=False).compile(
            optimizer="rmsprop", loss="sparse_categorical_crossentropy")


def test_negative_learning_rate_is_value_error():
    with pytest.raises(ValueError, match="learning_rate"):
        make_model(compile=False).compile(
            optimizer=graphgc.optimizers.Adam(learning_rate=-1.0),
            loss="mse")
