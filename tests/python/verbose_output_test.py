"""verbose of evaluate, predict and the stock callbacks: Keras 3's texts,
printed from C++ on stderr (the process's fd 2, so capfd sees them)."""

import re

import numpy as np
import pytest

import graphgc
from conftest import make_model

# 256 samples in batches of 32: 8 steps.
BAR = "8/8 " + "━" * 20 + " "
TIME = r"\d+s \d+(s|ms|us)/step"


def test_evaluate_verbose_one_prints_the_steps_bar_with_loss_and_accuracy(
        model, data, capfd):
    capfd.readouterr()
    logs = model.evaluate(*data, verbose=1, return_dict=True)
    err = capfd.readouterr().err
    assert re.fullmatch(re.escape(BAR) + TIME +
                        r" - accuracy: \S+ - loss: \S+\n", err), err
    assert err.endswith(f" - loss: {logs['loss']:.4f}\n"), err


def test_evaluate_verbose_two_prints_keras_threes_one_line(model, data,
                                                           capfd):
    capfd.readouterr()
    model.evaluate(*data, verbose=2)
    err = capfd.readouterr().err
    assert re.fullmatch(r"8/8 - \d+s - \d+(s|ms|us)/step - accuracy: \S+ "
                        r"- loss: \S+\n", err), err


def test_evaluate_and_predict_verbose_zero_print_nothing(model, data, capfd):
    capfd.readouterr()
    model.evaluate(*data, verbose=0)
    model.predict(data[0], verbose=0)
    assert capfd.readouterr() == ("", "")


def test_predict_verbose_one_prints_the_steps_bar_without_metrics(
        model, data, capfd):
    capfd.readouterr()
    model.predict(data[0], verbose=1)
    err = capfd.readouterr().err
    assert re.fullmatch(re.escape(BAR) + TIME + r"\n", err), err


def fit_quietly(model, data, callback, epochs=5):
    model.fit(*data, epochs=epochs, verbose=0, callbacks=[callback])


# min_delta=100: only the first watched epoch improves.
def test_early_stopping_verbose_prints_the_stop(model, data, capfd):
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.EarlyStopping(
        monitor="loss", min_delta=100, patience=1, verbose=1))
    assert capfd.readouterr().err == "Epoch 2: early stopping\n"


def test_early_stopping_verbose_prints_the_restored_epoch(model, data,
                                                          capfd):
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.EarlyStopping(
        monitor="loss", min_delta=100, patience=1, verbose=1,
        restore_best_weights=True))
    assert capfd.readouterr().err == (
        "Epoch 2: early stopping\n"
        "Restoring model weights from the end of the best epoch: 1.\n")


def test_early_stopping_is_silent_by_default(model, data, capfd):
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.EarlyStopping(
        monitor="loss", min_delta=100, patience=1))
    assert capfd.readouterr().err == ""


def test_early_stopping_unbeaten_baseline_keeps_the_wait_running(model,
                                                                 data):
    stop = graphgc.callbacks.EarlyStopping(monitor="loss", min_delta=100,
                                           patience=2, baseline=-1.0)
    fit_quietly(model, data, stop)
    assert stop.stopped_epoch == 1  # without the baseline: 2


def test_early_stopping_start_from_epoch_skips_the_warm_up(model, data,
                                                           capfd):
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.EarlyStopping(
        monitor="loss", min_delta=100, patience=0, verbose=1,
        start_from_epoch=3))
    assert capfd.readouterr().err == "Epoch 5: early stopping\n"


def test_model_checkpoint_verbose_prints_each_save(model, data, tmp_path,
                                                   capfd):
    path = str(tmp_path / "ckpt")
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.ModelCheckpoint(
        path, monitor="loss", verbose=1), epochs=2)
    assert capfd.readouterr().err == (
        f"\nEpoch 1: saving model to {path}\n"
        f"\nEpoch 2: saving model to {path}\n")


def test_model_checkpoint_verbose_prints_the_first_improvement_from_inf(
        model, data, tmp_path, capfd):
    path = str(tmp_path / "best")
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.ModelCheckpoint(
        path, monitor="loss", verbose=1, save_best_only=True), epochs=1)
    err = capfd.readouterr().err
    assert re.fullmatch(r"\nEpoch 1: loss improved from inf to \d+\.\d{5}, "
                        r"saving model to " + re.escape(path) + r"\n",
                        err), err


def test_model_checkpoint_verbose_prints_no_improvement_on_its_threshold(
        model, data, tmp_path, capfd):
    path = tmp_path / "best"
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.ModelCheckpoint(
        str(path), monitor="loss", verbose=1, save_best_only=True,
        initial_value_threshold=0.0), epochs=1)
    assert capfd.readouterr().err == (
        "\nEpoch 1: loss did not improve from 0.00000\n")
    assert not path.exists()


def test_model_checkpoint_mode_max_starts_from_minus_inf(model, data,
                                                         tmp_path, capfd):
    path = str(tmp_path / "best")
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.ModelCheckpoint(
        path, monitor="loss", verbose=1, save_best_only=True, mode="max"),
        epochs=1)
    assert "Epoch 1: loss improved from -inf to " in capfd.readouterr().err


def test_reduce_lr_on_plateau_verbose_prints_the_new_rate(model, data,
                                                          capfd):
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.ReduceLROnPlateau(
        monitor="loss", min_delta=100, patience=1, verbose=1), epochs=2)
    # Keras's arithmetic: the float32 rate as a Python float, times factor.
    new_lr = float(np.float32(0.001)) * 0.1
    assert capfd.readouterr().err == (
        "\nEpoch 2: ReduceLROnPlateau reducing learning rate to "
        f"{new_lr}.\n")


def test_reduce_lr_on_plateau_is_silent_by_default(model, data, capfd):
    capfd.readouterr()
    fit_quietly(model, data, graphgc.callbacks.ReduceLROnPlateau(
        monitor="loss", min_delta=100, patience=1), epochs=2)
    assert capfd.readouterr().err == ""


def test_evaluate_verbose_out_of_range_is_refused(data):
    with pytest.raises(ValueError, match="verbose must be 0, 1 or 2, got 3"):
        make_model().evaluate(*data, verbose=3)
