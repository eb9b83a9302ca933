"""keras-io's examples/vision/mnist_convnet.py ("Simple MNIST convnet") on
graphgc, with only its imports and its download changed.

Two tests:
- test_mnist_convnet_example_runs_every_statement runs the example itself
  when GRAPHGC_KERAS_IO names a keras-io checkout (it reads
  $GRAPHGC_KERAS_IO/examples/vision/mnist_convnet.py; skipped otherwise):
  statement by statement (tests/python/conformance/runner.py), after
  exactly three substitutions, each required to match once:
      from tensorflow import keras          -> import graphgc as keras
      from tensorflow.keras import layers   -> from graphgc import layers
      keras.datasets.mnist.load_data()      -> synthetic_mnist()
  synthetic_mnist() gives what load_data() gives (uint8 images of 28x28,
  uint8 labels in [0, 10)), 256 training and 64 test samples, so that
  the example's 15 epochs take seconds. The example is not vendored here:
  it stays in keras-io (Apache 2.0).
- test_mnist_convnet_steps_run_on_graphgc makes the example's calls, in
  its order and with its arguments, on the same synthetic data, so the
  suite covers them without the checkout.
"""

import os
import pathlib

import numpy as np
import pytest

import graphgc as keras
from conformance import runner
from graphgc import layers

SUBSTITUTIONS = [
    ("from tensorflow import keras", "import graphgc as keras"),
    ("from tensorflow.keras import layers", "from graphgc import layers"),
    ("keras.datasets.mnist.load_data()", "synthetic_mnist()"),
]


def synthetic_mnist(train=256, test=64):
    """keras.datasets.mnist.load_data()'s shapes and dtypes, random."""
    rng = np.random.default_rng(0)

    def split(n):
        return (rng.integers(0, 256, (n, 28, 28), dtype=np.uint8),
                rng.integers(0, 10, n, dtype=np.uint8))

    return split(train), split(test)


def test_mnist_convnet_example_runs_every_statement(capsys):
    root = os.environ.get("GRAPHGC_KERAS_IO")
    if not root:
        pytest.skip("set GRAPHGC_KERAS_IO to a keras-io checkout")
    path = pathlib.Path(root) / "examples" / "vision" / "mnist_convnet.py"
    source = runner.substitute(path.read_text(), SUBSTITUTIONS)
    namespace = {"__name__": "__main__", "synthetic_mnist": synthetic_mnist}
    ran, total, error = runner.run(source, str(path), namespace)
    assert error is None, error
    assert (ran, total) == (24, 24)
    loss, accuracy = namespace["score"]
    assert np.isfinite(loss) and 0 <= accuracy <= 1
    assert "Test accuracy:" in capsys.readouterr().out


def test_mnist_convnet_steps_run_on_graphgc(capsys):
    num_classes = 10
    input_shape = (28, 28, 1)
    (x_train, y_train), (x_test, y_test) = synthetic_mnist()
    x_train = np.expand_dims(x_train.astype("float32") / 255, -1)
    x_test = np.expand_dims(x_test.astype("float32") / 255, -1)
    y_train = keras.utils.to_categorical(y_train, num_classes)
    y_test = keras.utils.to_categorical(y_test, num_classes)
    model = keras.Sequential([
        keras.Input(shape=input_shape),
        layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(num_classes, activation="softmax"),
    ])
    model.summary()
    assert "Total params: 34,826" in capsys.readouterr().out  # Keras's count
    model.compile(loss="categorical_crossentropy", optimizer="adam",
                  metrics=["accuracy"])
    history = model.fit(x_train, y_train, batch_size=128, epochs=15,
                        validation_split=0.1)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy",
                                       "val_loss"]
    assert len(history.history["val_loss"]) == 15
    score = model.evaluate(x_test, y_test, verbose=0)
    assert isinstance(score, list) and len(score) == 2
    assert np.isfinite(score[0]) and 0 <= score[1] <= 1
