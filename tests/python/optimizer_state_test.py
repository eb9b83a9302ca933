"""model.save("m.keras") carries the optimizer's state (Keras 3's
optimizer/vars): a loaded model's fit continues where the saved one left
off."""

import numpy as np

import graphgc


def data():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (64, 4)).astype("float32")
    y = (np.arange(64) % 3).astype("int32")
    return x, y


def trained():
    model = graphgc.Sequential([
        graphgc.Input((4,)),
        graphgc.layers.Dense(8, activation="relu"),
        graphgc.layers.Dense(3, activation="softmax"),
    ])
    model.compile(optimizer=graphgc.optimizers.Adam(learning_rate=0.05),
                  loss="sparse_categorical_crossentropy")
    x, y = data()
    model.fit(x, y, batch_size=16, shuffle=False, verbose=0)
    return model


def test_keras_file_round_trip_continues_training(tmp_path):
    model = trained()
    model.save(tmp_path / "m.keras")
    loaded = graphgc.models.load_model(tmp_path / "m.keras")
    x, y = data()
    model.fit(x, y, batch_size=16, shuffle=False, verbose=0)
    loaded.fit(x, y, batch_size=16, shuffle=False, verbose=0)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
