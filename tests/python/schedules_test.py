"""graphgc.optimizers.schedules (Keras 3's keras.optimizers.schedules):
each schedule against its Keras formula, get_config / from_config /
serialize, Keras's argument errors; a schedule as an optimizer's
learning_rate through fit; optimizer.iterations."""

import json
import math
import os

import numpy as np
import pytest

import graphgc
from conftest import make_model

schedules = graphgc.optimizers.schedules


# Keras 3's formulas (keras/src/optimizers/schedules/learning_rate_schedule.py)
def _exponential(init, decay_steps, rate, staircase, step):
    p = step / decay_steps
    return init * rate ** (math.floor(p) if staircase else p)


def _inverse_time(init, decay_steps, rate, staircase, step):
    p = step / decay_steps
    return init / (1 + rate * (math.floor(p) if staircase else p))


def _polynomial(init, decay_steps, end, power, cycle, step):
    if cycle:
        decay_steps *= 1 if step == 0 else math.ceil(step / decay_steps)
    else:
        step = min(step, decay_steps)
    return (init - end) * (1 - step / decay_steps) ** power + end


def _cosine(init, decay_steps, alpha, warmup_target, warmup_steps, step):
    def decay(s, start):
        c = 0.5 * (1 + math.cos(math.pi * s / decay_steps))
        return start * ((1 - alpha) * c + alpha)
    if warmup_target is None:
        return decay(min(step, decay_steps), init)
    step = min(step, decay_steps + warmup_steps)
    if step < warmup_steps:
        return (warmup_target - init) * (step / warmup_steps) + init
    return decay(step - warmup_steps, warmup_target)


def _restarts(init, first, t_mul, m_mul, alpha, step):
    f = step / first
    if t_mul == 1.0:
        i = math.floor(f)
        f -= i
    else:
        i = math.floor(math.log(1 - f * (1 - t_mul)) / math.log(t_mul))
        f = (f - (1 - t_mul ** i) / (1 - t_mul)) / t_mul ** i
    c = 0.5 * m_mul ** i * (1 + math.cos(math.pi * f))
    return init * ((1 - alpha) * c + alpha)


def _piecewise(boundaries, values, step):
    for b, v in zip(boundaries, values):
        if step <= b:
            return v
    return values[-1]


CASES = [
    (schedules.ExponentialDecay(0.1, 10, 0.5),
     lambda s: _exponential(0.1, 10, 0.5, False, s)),
    (schedules.ExponentialDecay(0.1, 10, 0.5, staircase=True),
     lambda s: _exponential(0.1, 10, 0.5, True, s)),
    (schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1]),
     lambda s: _piecewise([10, 20], [1.0, 0.5, 0.1], s)),
    (schedules.InverseTimeDecay(0.1, 10, 0.5),
     lambda s: _inverse_time(0.1, 10, 0.5, False, s)),
    (schedules.InverseTimeDecay(0.1, 10, 0.5, staircase=True),
     lambda s: _inverse_time(0.1, 10, 0.5, True, s)),
    (schedules.PolynomialDecay(0.1, 10, end_learning_rate=0.01, power=2.0),
     lambda s: _polynomial(0.1, 10, 0.01, 2.0, False, s)),
    (schedules.PolynomialDecay(0.1, 10, 0.01, cycle=True),
     lambda s: _polynomial(0.1, 10, 0.01, 1.0, True, s)),
    (schedules.CosineDecay(0.1, 10, alpha=0.1),
     lambda s: _cosine(0.1, 10, 0.1, None, 0, s)),
    (schedules.CosineDecay(0.0, 10, warmup_target=0.1, warmup_steps=5),
     lambda s: _cosine(0.0, 10, 0.0, 0.1, 5, s)),
    (schedules.CosineDecayRestarts(0.1, 10, m_mul=0.5),
     lambda s: _restarts(0.1, 10, 2.0, 0.5, 0.0, s)),
    (schedules.CosineDecayRestarts(0.1, 10, t_mul=1.0, alpha=0.1),
     lambda s: _restarts(0.1, 10, 1.0, 1.0, 0.1, s)),
]


@pytest.mark.parametrize("schedule,formula", CASES,
                         ids=[type(c[0]).__name__ for c in CASES])
def test_schedule_is_keras_formula_at_each_step(schedule, formula):
    for step in (0, 1, 4, 5, 9, 10, 11, 15, 19, 20, 21, 30, 45, 70, 100):
        got = schedule(step)
        assert isinstance(got, np.float32)
        assert float(got) == pytest.approx(formula(step), rel=1e-6,
                                           abs=1e-12), step


def test_get_config_has_keras_fields_and_from_config_rebuilds():
    s = schedules.CosineDecay(0.1, 1000, warmup_target=0.2, warmup_steps=10)
    assert s.get_config() == {
        "initial_learning_rate": 0.1, "decay_steps": 1000, "alpha": 0.0,
        "name": "CosineDecay", "warmup_target": 0.2, "warmup_steps": 10}
    back = schedules.CosineDecay.from_config(s.get_config())
    assert back(500) == s(500)
    r = schedules.CosineDecayRestarts(0.1, 10)
    assert r.get_config() == {
        "initial_learning_rate": 0.1, "first_decay_steps": 10, "t_mul": 2.0,
        "m_mul": 1.0, "alpha": 0.0, "name": "SGDRDecay"}
    assert schedules.PiecewiseConstantDecay([1], [1.0, 0.5]).get_config() == {
        "boundaries": [1], "values": [1.0, 0.5], "name": "PiecewiseConstant"}


def test_serialize_is_keras_and_deserialize_reads_it():
    s = schedules.ExponentialDecay(0.1, 100000, 0.96, staircase=True)
    data = schedules.serialize(s)
    assert data == {"module": "keras.optimizers.schedules",
                    "class_name": "ExponentialDecay",
                    "config": {"initial_learning_rate": 0.1,
                               "decay_steps": 100000, "decay_rate": 0.96,
                               "staircase": True,
                               "name": "ExponentialDecay"},
                    "registered_name": None}
    back = schedules.deserialize(data)
    assert isinstance(back, schedules.ExponentialDecay)
    assert back(250000) == s(250000)


@pytest.mark.parametrize("make", [
    lambda: schedules.ExponentialDecay(0.1, 0, 0.5),
    lambda: schedules.InverseTimeDecay(0.1, -1, 0.5),
    lambda: schedules.PolynomialDecay(0.1, 0),
    lambda: schedules.CosineDecay(0.1, 0)])
def test_decay_steps_must_be_positive_as_keras_says(make):
    with pytest.raises(ValueError, match="Argument `decay_steps` must be > 0"):
        make()


def test_first_decay_steps_must_be_positive():
    with pytest.raises(ValueError, match="first_decay_steps"):
        schedules.CosineDecayRestarts(0.1, 0)


def test_piecewise_lengths_must_match_as_keras_says():
    with pytest.raises(ValueError, match="The length of boundaries should be "
                                         "1 less than the length of values"):
        schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5])


def test_a_bad_argument_names_the_schedule_and_the_argument():
    with pytest.raises(ValueError, match="ExponentialDecay.*decay_rate"):
        schedules.ExponentialDecay(0.1, 10, float("nan"))
    with pytest.raises(TypeError, match="initial_learning_rate"):
        schedules.ExponentialDecay("fast", 10, 0.5)


def test_schedules_is_a_submodule_of_optimizers():
    from graphgc.optimizers.schedules import ExponentialDecay
    assert ExponentialDecay is schedules.ExponentialDecay
    assert issubclass(ExponentialDecay, schedules.LearningRateSchedule)


class _RecordsRate(graphgc.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.rates, self.iterations = [], []

    def on_train_batch_begin(self, batch, logs=None):
        self.rates.append(float(self.model.optimizer.learning_rate))
        self.iterations.append(int(self.model.optimizer.iterations))


@pytest.mark.parametrize("kind", [graphgc.optimizers.Adam,
                                  graphgc.optimizers.SGD,
                                  graphgc.optimizers.RMSprop])
def test_fit_with_a_schedule_changes_the_rate_every_step(kind, data):
    schedule = schedules.ExponentialDecay(0.01, decay_steps=2, decay_rate=0.5)
    model = make_model(compile=False)
    model.compile(optimizer=kind(learning_rate=schedule),
                  loss="sparse_categorical_crossentropy")
    record = _RecordsRate()
    model.fit(*data, batch_size=64, epochs=2, verbose=0, callbacks=[record])
    # 256 samples in batches of 64: 4 steps an epoch.
    assert record.iterations == list(range(8))
    assert record.rates == pytest.approx(
        [0.01 * 0.5 ** (k / 2) for k in range(8)], rel=1e-6)
    assert int(model.optimizer.iterations) == 8
    assert float(model.optimizer.learning_rate) == pytest.approx(
        0.01 * 0.5 ** 4, rel=1e-6)


def test_a_schedule_trains_as_the_same_rates_set_by_hand(data):
    schedule = schedules.PiecewiseConstantDecay([1, 2], [0.05, 0.01, 0.002])
    scheduled = make_model(compile=False)
    scheduled.compile(optimizer=graphgc.optimizers.SGD(learning_rate=schedule),
                      loss="sparse_categorical_crossentropy")
    scheduled.fit(*data, batch_size=64, epochs=1, shuffle=False, verbose=0)

    class SetsRate(graphgc.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            self.model.optimizer.learning_rate = float(schedule(batch))

    by_hand = make_model(compile=False)
    by_hand.compile(optimizer=graphgc.optimizers.SGD(),
                    loss="sparse_categorical_crossentropy")
    by_hand.fit(*data, batch_size=64, epochs=1, shuffle=False, verbose=0,
                callbacks=[SetsRate()])
    for a, b in zip(scheduled.get_weights(), by_hand.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_the_rate_of_a_scheduled_optimizer_is_not_settable_as_keras():
    opt = graphgc.optimizers.Adam(
        learning_rate=schedules.InverseTimeDecay(0.01, 10, 1.0))
    with pytest.raises(TypeError, match="hence its learning rate is not "
                                        "settable"):
        opt.learning_rate = 0.1
    model = make_model(compile=False)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    with pytest.raises(TypeError, match="not settable"):
        model.optimizer.learning_rate = 0.1


def test_learning_rate_reads_the_schedule_before_compile():
    opt = graphgc.optimizers.SGD(
        learning_rate=schedules.CosineDecay(0.0, 10, warmup_target=0.1,
                                            warmup_steps=5))
    assert float(opt.learning_rate) == 0.0
    assert int(opt.iterations) == 0


def test_a_schedule_of_your_own_is_refused_at_compile():
    class Halving(schedules.LearningRateSchedule):
        def __call__(self, step):
            return 0.1 / (step + 1)

    model = make_model(compile=False)
    with pytest.raises(TypeError, match="built-in learning-rate schedules"):
        model.compile(optimizer=graphgc.optimizers.SGD(
                          learning_rate=Halving()),
                      loss="sparse_categorical_crossentropy")


def test_iterations_counts_steps_and_reads_as_an_int(data):
    model = make_model(compile=False)
    opt = graphgc.optimizers.Adam()
    assert int(opt.iterations) == 0
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    assert int(model.optimizer.iterations) == 0
    model.fit(*data, batch_size=100, epochs=2, verbose=0)  # 3 steps each
    it = model.optimizer.iterations
    assert int(it) == 6 and it == 6 and it.numpy() == np.int64(6)
    assert it.numpy().dtype == np.int64
    assert np.asarray(it) == 6
    assert it + 1 == 7 and it / 4 == 1.5


def test_a_saved_schedule_is_kerass_in_compile_config(tmp_path, data):
    schedule = schedules.ExponentialDecay(0.01, 100, 0.9, staircase=True)
    model = make_model(compile=False)
    model.compile(optimizer=graphgc.optimizers.Adam(learning_rate=schedule),
                  loss="sparse_categorical_crossentropy")
    model.fit(*data, epochs=1, verbose=0)
    path = tmp_path / "m"
    model.save(str(path))
    with open(os.path.join(path, "config.json")) as f:
        config = json.load(f)
    rate = config["compile_config"]["optimizer"]["config"]["learning_rate"]
    assert rate == schedules.serialize(schedule)
    loaded = graphgc.load_model(str(path))
    # The step count is not saved: the schedule starts again from step 0.
    assert float(loaded.learning_rate) == pytest.approx(0.01)
    loaded.fit(*data, epochs=1, verbose=0)
