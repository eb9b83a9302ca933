"""graphgc.callbacks: Python subclasses called like Keras's, and the stock
C++ callbacks."""

import csv
import errno
import glob
import os

import numpy as np
import pytest

import graphgc
from conftest import make_model


class Recorder(graphgc.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs=None):
        self.calls.append(("train_begin", dict(self.params)))

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append(("epoch_begin", epoch))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch_end", epoch, dict(logs)))

    def on_batch_end(self, batch, logs=None):
        self.calls.append(("batch_end", batch))

    def on_train_end(self, logs=None):
        self.calls.append(("train_end",))


def test_python_callback_hooks_run_in_keras_order(model, data):
    recorder = Recorder()
    model.fit(*data, epochs=2, batch_size=128, verbose=0,
              callbacks=[recorder])
    names = [call[0] for call in recorder.calls]
    assert names == ["train_begin",
                     "epoch_begin", "batch_end", "batch_end", "epoch_end",
                     "epoch_begin", "batch_end", "batch_end", "epoch_end",
                     "train_end"]
    assert recorder.calls[0][1]["epochs"] == 2
    assert recorder.calls[0][1]["steps"] == 2


def test_on_epoch_end_gets_epoch_and_logs(model, data):
    recorder = Recorder()
    history = model.fit(*data, epochs=2, verbose=0, callbacks=[recorder])
    ends = [call for call in recorder.calls if call[0] == "epoch_end"]
    assert [call[1] for call in ends] == [0, 1]
    assert ends[1][2]["loss"] == pytest.approx(history.history["loss"][1])
    assert "accuracy" in ends[1][2]


def test_callback_gets_the_model(model, data):
    recorder = Recorder()
    model.fit(*data, verbose=0, callbacks=[recorder])
    assert recorder.model is model


def test_only_on_epoch_end_overridden_is_enough(model, data):
    class EpochsOnly(graphgc.callbacks.Callback):
        epochs = 0

        def on_epoch_end(self, epoch, logs=None):
            EpochsOnly.epochs += 1

    model.fit(*data, epochs=3, verbose=0, callbacks=[EpochsOnly()])
    assert EpochsOnly.epochs == 3


def test_stop_training_from_a_callback_ends_the_fit(model, data):
    class StopAfterTwo(graphgc.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                self.model.stop_training = True

    history = model.fit(*data, epochs=10, verbose=0,
                        callbacks=[StopAfterTwo()])
    assert history.epoch == [0, 1]


def test_exception_in_a_callback_propagates_out_of_fit(model, data):
    class Boom(graphgc.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            raise KeyError("boom at epoch %d" % epoch)

    with pytest.raises(KeyError, match="boom at epoch 0"):
        model.fit(*data, epochs=3, verbose=0, callbacks=[Boom()])
    model.fit(*data, verbose=0)  # the model is usable afterwards


def test_callback_may_predict_with_its_model_during_fit(model, data):
    class Predicts(graphgc.callbacks.Callback):
        shapes = []

        def on_epoch_end(self, epoch, logs=None):
            Predicts.shapes.append(self.model.predict(data[0][:4]).shape)

    model.fit(*data, epochs=2, verbose=0, callbacks=[Predicts()])
    assert Predicts.shapes == [(4, 10), (4, 10)]


def test_non_callback_is_value_error(model, data):
    with pytest.raises(ValueError, match="Callback"):
        model.fit(*data, verbose=0, callbacks=[print])


def test_tensorboard_writes_an_event_file(model, data, tmp_path):
    tensorboard = graphgc.callbacks.TensorBoard(log_dir=tmp_path / "logs")
    model.fit(*data, verbose=0, callbacks=[tensorboard])
    files = glob.glob(str(tmp_path / "logs/train/events.out.tfevents.*"))
    assert files == [tensorboard.train_path]
    assert os.path.getsize(files[0]) > 0
    assert tensorboard.graph_nodes > 0


def test_tensorboard_with_empty_log_dir_is_value_error(model, data):
    with pytest.raises(ValueError, match="log_dir"):
        model.fit(*data, verbose=0,
                  callbacks=[graphgc.callbacks.TensorBoard(log_dir="")])


def test_tensorboard_log_dir_under_a_file_is_not_a_directory_error(
        model, data, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    before = model.get_weights()
    with pytest.raises(NotADirectoryError, match="file") as raised:
        model.fit(*data, verbose=0, callbacks=[
            graphgc.callbacks.TensorBoard(log_dir=blocker / "logs")])
    assert raised.value.errno == errno.ENOTDIR
    for b, a in zip(before, model.get_weights()):
        np.testing.assert_array_equal(b, a)


def test_csv_logger_into_a_missing_directory_is_file_not_found_error(
        model, data, tmp_path):
    path = tmp_path / "missing" / "log.csv"
    with pytest.raises(FileNotFoundError, match="log.csv"):
        model.fit(*data, verbose=0,
                  callbacks=[graphgc.callbacks.CSVLogger(path)])


def test_early_stopping_stops_when_the_monitor_stalls(model, data):
    x, y = data
    stopper = graphgc.callbacks.EarlyStopping(monitor="loss", min_delta=10.0,
                                              patience=1)
    history = model.fit(x, y, epochs=20, verbose=0, callbacks=[stopper])
    assert history.epoch == [0, 1]
    assert stopper.stopped_epoch == 1


def test_early_stopping_on_missing_monitor_is_value_error(model, data):
    with pytest.raises(ValueError, match="val_loss"):
        model.fit(*data, epochs=2, verbose=0,
                  callbacks=[graphgc.callbacks.EarlyStopping()])


def test_model_checkpoint_saves_each_epoch(model, data, tmp_path):
    path = str(tmp_path / "ckpt_{epoch:02d}")
    model.fit(*data, epochs=2, verbose=0,
              callbacks=[graphgc.callbacks.ModelCheckpoint(path,
                                                           monitor="loss")])
    assert sorted(os.listdir(tmp_path)) == ["ckpt_01", "ckpt_02"]
    graphgc.models.load_model(tmp_path / "ckpt_02")


def test_csv_logger_writes_a_row_per_epoch(model, data, tmp_path):
    path = tmp_path / "log.csv"
    model.fit(*data, epochs=3, verbose=0,
              callbacks=[graphgc.callbacks.CSVLogger(path)])
    rows = list(csv.reader(open(path, newline="")))
    assert rows[0] == ["epoch", "accuracy", "loss"]
    assert [row[0] for row in rows[1:]] == ["0", "1", "2"]


def test_reduce_lr_on_plateau_lowers_the_rate(model, data):
    reducer = graphgc.callbacks.ReduceLROnPlateau(
        monitor="loss", factor=0.5, patience=0, min_delta=10.0)
    model.fit(*data, epochs=3, verbose=0, callbacks=[reducer])
    assert reducer.reductions >= 1
    assert model.learning_rate < 0.001


def test_terminate_on_nan_stops_a_diverging_fit(data):
    x, y = data
    model = graphgc.Sequential([graphgc.layers.Input((10,)),
                                graphgc.layers.Dense(1)])
    model.compile(optimizer=graphgc.optimizers.SGD(learning_rate=1e30),
                  loss="mse")
    with pytest.raises(RuntimeError, match="NaN|nan|inf"):
        model.fit(x * 1e10, y.astype(np.float32) * 1e10, epochs=5, verbose=0,
                  callbacks=[graphgc.callbacks.TerminateOnNaN()])
