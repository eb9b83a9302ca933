"""graphgc.callbacks.LambdaCallback and LearningRateScheduler, as Keras 3's
(keras/src/callbacks/lambda_callback.py, learning_rate_scheduler.py)."""

import math

import numpy as np
import pytest

import graphgc
from conftest import make_model


def test_lambda_callback_calls_each_function_given_as_its_hook(data):
    calls = []
    callback = graphgc.callbacks.LambdaCallback(
        on_train_begin=lambda logs: calls.append(("train_begin",)),
        on_epoch_begin=lambda epoch, logs: calls.append(
            ("epoch_begin", epoch)),
        on_train_batch_begin=lambda batch, logs: calls.append(
            ("batch_begin", batch)),
        on_train_batch_end=lambda batch, logs: calls.append(
            ("batch_end", batch, sorted(logs))),
        on_epoch_end=lambda epoch, logs: calls.append(
            ("epoch_end", epoch, sorted(logs))),
        on_train_end=lambda logs: calls.append(("train_end", sorted(logs))))
    make_model().fit(*data, batch_size=128, epochs=2, verbose=0,
                     callbacks=[callback])
    keys = ["accuracy", "loss", "size"]
    batch = [("batch_begin", 0), ("batch_end", 0, keys),
             ("batch_begin", 1), ("batch_end", 1, keys)]
    assert calls == (
        [("train_begin",), ("epoch_begin", 0)] + batch +
        [("epoch_end", 0, ["accuracy", "loss"]), ("epoch_begin", 1)] + batch +
        [("epoch_end", 1, ["accuracy", "loss"]),
         ("train_end", ["accuracy", "loss"])])


def test_lambda_callback_with_one_hook_runs_only_that_one(data):
    ends = []
    callback = graphgc.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: ends.append(epoch))
    # fit calls the hooks the object's class overrides: this one only.
    base = graphgc.callbacks.Callback
    assert type(callback).on_epoch_end is not base.on_epoch_end
    assert type(callback).on_epoch_begin is base.on_epoch_begin
    assert type(callback).on_train_batch_end is base.on_train_batch_end
    make_model().fit(*data, epochs=3, verbose=0, callbacks=[callback])
    assert ends == [0, 1, 2]


def test_lambda_callback_takes_other_hooks_by_keyword(data):
    batches = []
    callback = graphgc.callbacks.LambdaCallback(
        on_batch_end=lambda batch, logs: batches.append(batch))
    make_model().fit(*data, batch_size=128, epochs=1, verbose=0,
                     callbacks=[callback])
    assert batches == [0, 1]


def test_lambda_callback_is_a_callback_with_the_model_set(data):
    seen = []
    callback = graphgc.callbacks.LambdaCallback(
        on_train_begin=lambda logs: seen.append(callback.model))
    model = make_model()
    model.fit(*data, epochs=1, verbose=0, callbacks=[callback])
    assert isinstance(callback, graphgc.callbacks.Callback)
    assert seen == [model]


def test_scheduler_sets_the_rate_at_each_epochs_start(data):
    seen = []
    model = make_model(compile=False)
    model.compile(optimizer=graphgc.optimizers.SGD(learning_rate=0.1),
                  loss="sparse_categorical_crossentropy")
    scheduler = graphgc.callbacks.LearningRateScheduler(
        lambda epoch, lr: lr * 0.5 if epoch > 0 else lr)
    reader = graphgc.callbacks.LambdaCallback(
        on_epoch_begin=lambda epoch, logs: seen.append(
            float(model.optimizer.learning_rate)))
    history = model.fit(*data, epochs=3, verbose=0,
                        callbacks=[scheduler, reader])
    assert seen == pytest.approx([0.1, 0.05, 0.025])
    # Keras's on_epoch_end adds the rate to the logs History records.
    assert history.history["learning_rate"] == pytest.approx(
        [0.1, 0.05, 0.025])


def test_scheduler_keras_example_decays_after_ten_epochs():
    def scheduler(epoch, lr):
        return lr if epoch < 10 else lr * math.exp(-0.1)

    model = graphgc.Sequential([graphgc.layers.Input((20,)),
                                graphgc.layers.Dense(10)])
    model.compile(graphgc.optimizers.SGD(), loss="mse")
    assert round(model.optimizer.learning_rate, 5) == 0.01
    model.fit(np.arange(100, dtype=np.float32).reshape(5, 20) / 100,
              np.zeros((5, 10), np.float32), epochs=15, verbose=0,
              callbacks=[graphgc.callbacks.LearningRateScheduler(scheduler)])
    assert round(model.optimizer.learning_rate, 5) == 0.00607


def test_scheduler_takes_keras_older_one_argument_schedule(data):
    model = make_model()
    model.fit(*data, epochs=2, verbose=0, callbacks=[
        graphgc.callbacks.LearningRateScheduler(
            lambda epoch: 0.01 / (epoch + 1))])
    assert float(model.optimizer.learning_rate) == pytest.approx(0.005)


def test_scheduler_verbose_prints_kerass_message(data, capsys):
    model = make_model()
    model.fit(*data, epochs=2, verbose=0, callbacks=[
        graphgc.callbacks.LearningRateScheduler(
            lambda epoch, lr: 0.5 / (epoch + 1), verbose=1)])
    out = capsys.readouterr().out
    assert out == (
        "\nEpoch 1: LearningRateScheduler setting learning rate to 0.5.\n"
        "\nEpoch 2: LearningRateScheduler setting learning rate to 0.25.\n")


def test_scheduler_refuses_a_schedule_that_is_not_a_float(data):
    model = make_model()
    with pytest.raises(ValueError, match="The output of the `schedule` "
                                         "function should be a float. Got: 1"):
        model.fit(*data, epochs=1, verbose=0, callbacks=[
            graphgc.callbacks.LearningRateScheduler(lambda epoch, lr: 1)])


def test_scheduler_on_a_scheduled_optimizer_is_kerass_type_error(data):
    model = make_model(compile=False)
    model.compile(optimizer=graphgc.optimizers.Adam(
        learning_rate=graphgc.optimizers.schedules.ExponentialDecay(
            0.01, 10, 0.9)), loss="sparse_categorical_crossentropy")
    with pytest.raises(TypeError, match="not settable"):
        model.fit(*data, epochs=1, verbose=0, callbacks=[
            graphgc.callbacks.LearningRateScheduler(lambda epoch, lr: lr)])
