"""Keras's callbacks.

Subclass Callback and override any of on_train_begin(logs),
on_train_end(logs), on_epoch_begin(epoch, logs), on_epoch_end(epoch, logs),
on_batch_begin(batch, logs), on_batch_end(batch, logs) (and
on_train_batch_begin/_end, Keras's other spelling): fit calls them as Keras
does, with self.model the model being fit and self.params its settings.
Methods not overridden are never called (no per-batch cost). An exception
raised in one stops the fit and propagates out of fit(); setting
self.model.stop_training = True ends the fit cleanly.

The stock callbacks (TensorBoard, EarlyStopping, ModelCheckpoint,
CSVLogger, ReduceLROnPlateau, TerminateOnNaN) run in C++;
LearningRateScheduler and LambdaCallback are Python callbacks.
"""

import numpy as _np

from graphgc import _graphgc


class Callback:
    """Base class of callbacks; every hook is a no-op."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    # What fit calls; as in Keras they call the older names above.
    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs)


class _Stock(Callback):
    """A C++ callback (self._cpp) that fit hands to C++ as it is."""

    def __init__(self, cpp):
        super().__init__()
        self._cpp = cpp


class TensorBoard(_Stock):
    """Writes log_dir/train/events.out.tfevents.*: the model's graph and
    batch_loss / epoch_loss scalars. update_freq: "epoch", "batch" or a
    number of batches."""

    def __init__(self, log_dir="logs", update_freq="epoch", write_graph=True):
        super().__init__(_graphgc.TensorBoard(str(log_dir), update_freq,
                                              bool(write_graph)))

    @property
    def train_path(self):
        return self._cpp.train_path

    @property
    def graph_nodes(self):
        return self._cpp.graph_nodes


class EarlyStopping(_Stock):
    def __init__(self, monitor="val_loss", min_delta=0, patience=0,
                 verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__(_graphgc.EarlyStopping(
            monitor, float(min_delta), int(patience), mode,
            bool(restore_best_weights), int(verbose),
            None if baseline is None else float(baseline),
            int(start_from_epoch)))

    @property
    def stopped_epoch(self):
        return self._cpp.stopped_epoch

    @property
    def best(self):
        return self._cpp.best

    @property
    def wait(self):
        return self._cpp.wait


class ModelCheckpoint(_Stock):
    def __init__(self, filepath, monitor="val_loss", verbose=0,
                 save_best_only=False, save_weights_only=False, mode="auto",
                 save_freq="epoch", initial_value_threshold=None):
        if save_freq != "epoch":
            raise ValueError("ModelCheckpoint: only save_freq='epoch' is "
                             f"supported, got {save_freq!r}")
        super().__init__(_graphgc.ModelCheckpoint(
            str(filepath), monitor, bool(save_best_only),
            bool(save_weights_only), mode,
            None if initial_value_threshold is None
            else float(initial_value_threshold), int(verbose)))

    @property
    def best(self):
        return self._cpp.best


class CSVLogger(_Stock):
    def __init__(self, filename, separator=",", append=False):
        if separator != "," or append:
            raise ValueError("CSVLogger: only separator=',' and append=False "
                             "are supported")
        super().__init__(_graphgc.CSVLogger(str(filename)))


class ReduceLROnPlateau(_Stock):
    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0,
                 mode="auto", min_delta=1e-4, cooldown=0, min_lr=0.0):
        super().__init__(_graphgc.ReduceLROnPlateau(
            monitor, float(factor), int(patience), mode, float(min_delta),
            int(cooldown), float(min_lr), int(verbose)))

    @property
    def reductions(self):
        return self._cpp.reductions


class TerminateOnNaN(_Stock):
    def __init__(self):
        super().__init__(_graphgc.TerminateOnNaN())


# The hooks fit calls and the older names Keras's Callback forwards to.
_HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
          "on_train_batch_begin", "on_train_batch_end", "on_batch_begin",
          "on_batch_end")


def _instance_hook(name):
    def hook(self, *args, **kwargs):
        return self.__dict__[name](*args, **kwargs)

    hook.__name__ = name
    return hook


class LambdaCallback(Callback):
    """Keras's LambdaCallback: the functions given are the hooks
    (on_epoch_begin(epoch, logs), on_epoch_end(epoch, logs),
    on_train_begin(logs), on_train_end(logs), on_train_batch_begin(batch,
    logs), on_train_batch_end(batch, logs); any other Callback method by
    keyword). Hooks not given are never called."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None,
                 on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None,
                 **kwargs):
        super().__init__()
        self.__dict__.update(kwargs)
        given = {"on_epoch_begin": on_epoch_begin,
                 "on_epoch_end": on_epoch_end,
                 "on_train_begin": on_train_begin,
                 "on_train_end": on_train_end,
                 "on_train_batch_begin": on_train_batch_begin,
                 "on_train_batch_end": on_train_batch_end}
        for name, fn in given.items():
            if fn is not None:
                setattr(self, name, fn)
        # fit calls a hook only when the object's class overrides it: a
        # class of this object's own does, for each hook given.
        hooks = [name for name in _HOOKS if name in self.__dict__]
        if hooks:
            self.__class__ = type(
                "LambdaCallback", (LambdaCallback,),
                {name: _instance_hook(name) for name in hooks})


class LearningRateScheduler(Callback):
    """Keras's LearningRateScheduler: at each epoch's start, sets the
    optimizer's learning rate to schedule(epoch, lr) (or schedule(epoch),
    Keras's older form, when that call raises TypeError), which must be a
    float; verbose > 0 prints Keras's message. Each epoch's rate is added
    to the history as "learning_rate", as Keras's on_epoch_end adds it to
    the logs."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose
        self._history_added = {}

    def set_params(self, params):
        super().set_params(params)
        self._history_added = {"learning_rate": []}

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if not hasattr(optimizer, "learning_rate"):
            raise ValueError(
                'Optimizer must have a "learning_rate" attribute.')
        try:
            learning_rate = float(optimizer.learning_rate)
            learning_rate = self.schedule(epoch, learning_rate)
        except TypeError:  # Keras's older one-argument schedule
            learning_rate = self.schedule(epoch)
        if not isinstance(learning_rate, (float, _np.float32, _np.float64)):
            raise ValueError("The output of the `schedule` function should be "
                             f"a float. Got: {learning_rate}")
        optimizer.learning_rate = learning_rate
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting "
                  f"learning rate to {learning_rate}.")

    def on_epoch_end(self, epoch, logs=None):
        rate = float(self.model.optimizer.learning_rate)
        if logs is not None:
            logs["learning_rate"] = rate
        self._history_added.setdefault("learning_rate", []).append(rate)
