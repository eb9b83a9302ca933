"""A fit with a Python callback against other Python threads and against
interpreter exit (docs/python.md, "Threads, the GIL and a running fit").

Each scenario runs in its own interpreter (sys.executable, this process's
environment, so PYTHONPATH and the TSan stage's preload carry over) under a
timeout: a binding that kept the GIL while it waited for the fit would
deadlock the whole interpreter, this one included, so only a child can
show it as a failure instead of a hang."""

import subprocess
import sys

import pytest

TIMEOUT_S = 120

# The model of conftest.make_model, fitting 20 epochs of 64 samples with a
# callback that takes the GIL after every batch.
PRELUDE = """
import sys, threading
import numpy as np
import graphgc

def make_model():
    model = graphgc.Sequential([
        graphgc.layers.Input((10,)),
        graphgc.layers.Dense(16, activation="relu", seed=1),
        graphgc.layers.Dense(10, activation="softmax", seed=2),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model

rng = np.random.default_rng(0)
x = rng.random((64, 10), dtype=np.float32)
y = rng.integers(0, 10, 64).astype(np.int32)
"""

# argv[1] names the call a second thread makes while the fit's first
# on_epoch_end waits for it to start; the fit's later hooks need the GIL, so
# the call must wait for the fit without holding it.
CALL_DURING_FIT = PRELUDE + """
import tempfile
model = make_model()
calls = {
    "get_weights": lambda: model.get_weights(),
    "summary": lambda: model.summary(print_fn=lambda text: None),
    "learning_rate": lambda: model.learning_rate,
    "set learning_rate": lambda: setattr(model, "learning_rate", 0.01),
    "evaluate": lambda: model.evaluate(x, y, verbose=0),
    "predict": lambda: model.predict(x),
    "set_weights": lambda: model.set_weights(model_weights),
    "save": lambda: model.save(tempfile.mkdtemp()),
}
model_weights = model.get_weights()
call = calls[sys.argv[1]]
calling, returned = threading.Event(), threading.Event()
errors = []

def second_thread():
    calling.set()
    try:
        call()
    except Exception as e:
        errors.append(e)
    returned.set()

class WaitForTheCall(graphgc.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 0:
            threading.Thread(target=second_thread, daemon=True).start()
            if not calling.wait(timeout=60):
                raise RuntimeError("the second thread never started its call")

    def on_batch_end(self, batch, logs=None):
        pass

history = model.fit(x, y, epochs=20, verbose=0, callbacks=[WaitForTheCall()])
assert len(history.history["loss"]) == 20, history.history
assert returned.wait(timeout=60), "the call did not return after the fit"
assert errors == [], errors
print("ok")
"""

# A daemon thread fits with a Python callback while the main thread
# returns: the interpreter exits during the fit. With argv[1] "waiting",
# another daemon thread is then waiting in get_weights for that fit.
EXIT_DURING_FIT = PRELUDE + """
model = make_model()
started, calling = threading.Event(), threading.Event()

class Started(graphgc.callbacks.Callback):
    def on_batch_end(self, batch, logs=None):
        started.set()

def fit():
    model.fit(x, y, epochs=1000000, verbose=0, callbacks=[Started()])

def wait_for_the_fit():
    calling.set()
    model.get_weights()

threading.Thread(target=fit, daemon=True).start()
assert started.wait(timeout=60), "the fit never called its callback"
if sys.argv[1:] == ["waiting"]:
    threading.Thread(target=wait_for_the_fit, daemon=True).start()
    assert calling.wait(timeout=60), "get_weights was never called"
print("exiting")
"""


def run_scenario(script, *args):
    try:
        return subprocess.run([sys.executable, "-c", script, *args],
                              capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"deadlocked: the scenario {args} did not finish in "
                    f"{TIMEOUT_S} s (stderr: {e.stderr!r})")


@pytest.mark.threads
@pytest.mark.parametrize("call", [
    "get_weights", "summary", "learning_rate", "set learning_rate",
    "evaluate", "predict", "set_weights", "save"])
def test_a_call_from_another_thread_waits_for_a_fit_without_the_gil(call):
    run = run_scenario(CALL_DURING_FIT, call)
    assert (run.returncode, run.stdout.strip()) == (0, "ok"), run.stderr


@pytest.mark.threads
def test_exiting_during_a_fit_with_a_python_callback_exits_cleanly():
    run = run_scenario(EXIT_DURING_FIT)
    assert (run.returncode, run.stdout.strip()) == (0, "exiting"), run.stderr


@pytest.mark.threads
def test_exiting_while_a_thread_waits_for_a_fit_exits_cleanly():
    run = run_scenario(EXIT_DURING_FIT, "waiting")
    assert (run.returncode, run.stdout.strip()) == (0, "exiting"), run.stderr
