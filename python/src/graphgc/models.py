"""Keras's Model (the functional API) and Sequential, History and
load_model.

Model(inputs, outputs) is a model from keras.Input() tensors to the
tensors layer calls made from them (graphgc.layers.KerasTensor); it is
also the base of Sequential, which shares its training methods, as in
Keras. A model may have several inputs and outputs, given as lists or
dicts (graphgc/_multi_io.py reads the nested arguments); saving a model
of several inputs or outputs raises NotImplementedError.

A model holds its C++ model, a handle: while the Python object lives
(referenced from a list, a callback, anything), its graph nodes live; when
its last reference goes, the next safe point collects them. Calls that run
or wait for the model (compile, fit, evaluate, predict, get_weights,
set_weights, summary, save, learning_rate) release the GIL while C++ works,
so Python threads can train different models at once and a fit's Python
callbacks run while another thread waits for that fit (docs/python.md).
Bad input raises ValueError (InvalidArgument), OSError for file errors, or
RuntimeError, and leaves the model and its weights as they were.
"""

import json
import os
import warnings
import weakref

import numpy as _np

from graphgc import _args, _graphgc, _multi_io, _nested
from graphgc._fit_args import fit_args as _fit_args
from graphgc import callbacks as _callbacks
from graphgc import layers as _layers
from graphgc import losses as _losses
from graphgc import metrics as _metrics
from graphgc import optimizers as _optimizers
from graphgc import _saving


class History(_callbacks.Callback):
    """What fit returns: .history maps "loss", "accuracy", "val_loss", ...
    to one value per epoch run; .epoch lists those epochs; .params and
    .model as Keras's, except that .model is a weak reference: None once
    the model's last other reference goes (docs/python.md)."""

    def __init__(self, history, epoch, params, model):
        super().__init__()
        self.history = history
        self.epoch = epoch
        self.params = params
        # A weak reference: the model keeps its last History
        # (model.history), which must not keep the model alive in a cycle.
        self._model_ref = weakref.ref(model)

    @property
    def model(self):
        return self._model_ref() if hasattr(self, "_model_ref") else None

    @model.setter
    def model(self, value):
        if value is not None:
            self._model_ref = weakref.ref(value)


class Model:
    """Keras's functional model: Model(inputs, outputs, name=None), from
    keras.Input() tensors to tensors made by calling layers on them; inputs
    and outputs may be lists or dicts (flattened in sorted key order, as
    Keras's tree.flatten), for a model of several of each. Its C++ model
    (models/functional.h) is made, and checked, at once; a layer shared
    with another model keeps one set of weights. Base of Sequential."""

    def __init__(self, inputs=None, outputs=None, name=None):
        if inputs is None or outputs is None:
            raise NotImplementedError(
                "graphgc's Model is the functional API: Model(inputs, "
                "outputs); subclassed models are not supported")
        self._inputs, self._input_keys = _multi_io.flatten_tensors(
            inputs, "inputs")
        self._outputs, self._output_keys = _multi_io.flatten_tensors(
            outputs, "outputs")
        self._nested_inputs = inputs
        self._nested_outputs = outputs
        self._model = _graphgc.Functional(
            [t._tensor for t in self._inputs],
            [t._tensor for t in self._outputs], name or "")
        self._compile_config = None
        reached = _layers_reached(self._outputs)
        self._layers = [next((p for p in reached if p._layer == cpp), None)
                        or _layers.Layer._wrap(cpp)
                        for cpp in self._model.layers]

    def _build(self):
        return self._model

    def _build_for(self, x):
        """The C++ model, built for data x by a model that defers its build
        (a Sequential without an Input)."""
        del x  # a functional model is built when it is made
        return self._build()

    def _defers_build(self):
        """Whether the model waits for its input shape to be built."""
        return False

    @classmethod
    def _wrap(cls, cpp):
        """A Model on a C++ functional model (what load_model read)."""
        model = cls.__new__(cls)
        model._model = cpp
        model._compile_config = None
        model._layers = [_layers.Layer._wrap(layer) for layer in cpp.layers]
        # Its tensors have no history: a call of it as a layer reads its
        # graph of calls from its config (graphgc/_nested.py).
        model._calls_known = False

        def tensor(t):
            layer = next(p for p in model._layers if p._layer == t.layer)
            return _layers.KerasTensor(t, layer, 0, [])

        model._inputs = [tensor(t) for t in cpp.inputs]
        model._outputs = [tensor(t) for t in cpp.outputs]
        # A saved model's inputs and outputs are lists (or one).
        model._input_keys = model._output_keys = None
        model._nested_inputs = (model._inputs[0] if len(model._inputs) == 1
                                else list(model._inputs))
        model._nested_outputs = (model._outputs[0]
                                 if len(model._outputs) == 1
                                 else list(model._outputs))
        return model

    @property
    def name(self):
        return self._build().name

    @property
    def layers(self):
        """Each layer once, in the order of its first call, Input layers
        included (Keras's functional model.layers)."""
        return list(self._layers)

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def input_names(self):
        return list(self._build().input_names)

    @property
    def output_names(self):
        """Each output's layer name, in output order (Keras's
        model.output_names): the keys of loss, metrics and y dicts."""
        return list(self._build().output_names)

    def _multi_io(self):
        """Whether the list methods are needed: several inputs or outputs."""
        return (not isinstance(self, Sequential)
                and (len(self._inputs) > 1 or len(self._outputs) > 1))

    @property
    def input(self):
        return self._nested_inputs

    @property
    def output(self):
        return self._nested_outputs

    @property
    def input_shape(self):
        shapes = [t.shape for t in self._inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = [t.shape for t in self._outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def stop_training(self):
        return self._build().stop_training

    @stop_training.setter
    def stop_training(self, value):
        self._build().stop_training = bool(value)

    @property
    def learning_rate(self):
        """The compiled optimizer's learning rate (a variable: setting it
        takes effect from the next step)."""
        return self._build().learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._build().learning_rate = float(value)

    def compile(self, optimizer="rmsprop", loss=None, metrics=None,
                loss_weights=None):
        """optimizer: "rmsprop" (Keras's default), "adam", "sgd" or a
        graphgc.optimizers object, which becomes model.optimizer, the live
        optimizer (setting its learning_rate changes the next step's); loss:
        "sparse_categorical_crossentropy", "categorical_crossentropy",
        "mse" or a graphgc.losses object; metrics: names ("accuracy",
        "mae", "precision", ...) or graphgc.metrics objects, logged under
        the name as given or the object's name."""
        if loss is None:
            raise ValueError("compile() needs a loss")
        opt = _optimizers.get(optimizer)
        if isinstance(self, Sequential) and (
                isinstance(loss, (list, tuple, dict))
                or loss_weights is not None):
            raise ValueError("a Sequential model has one output: give one "
                             "loss and no loss_weights")
        if self._defers_build():
            # As Keras: compile now, build (and compile the graph) on the
            # first data; the names are checked here all the same.
            loss_obj = _losses.get(loss)
            _metrics._compile_args(metrics)
            self._pending_compile = {"optimizer": opt, "loss": loss,
                                     "metrics": metrics}
            self.optimizer = opt
            self.loss = loss_obj
            return
        if (self._multi_io() or isinstance(loss, (list, tuple, dict))
                or loss_weights is not None):
            return self._compile_outputs(opt, loss, loss_weights, metrics)
        loss_obj = _losses.get(loss)
        names, configured, keys = _metrics._compile_args(metrics)
        model = self._build()
        model.compile(opt._cpp(), loss_obj._cpp(), names, configured)
        self._metric_names = keys
        self._bind_optimizer(opt, model)
        self.loss = loss_obj

    def _compile_outputs(self, opt, loss, loss_weights, metrics):
        """compile with one loss, weight and metric list per output."""
        model = self._build()
        names = model.output_names
        keys = self._output_keys
        loss_objs = _multi_io.losses(loss, names, keys)
        weights = _multi_io.loss_weights(
            loss_weights, names, keys,
            sum(1 for item in loss_objs if item is not None))
        per_output = _multi_io.metrics(metrics, names, keys)
        model.compile_outputs(
            opt._cpp(), [None if item is None else item._cpp()
                         for item in loss_objs], weights, per_output)
        self._trained = [i for i, item in enumerate(loss_objs)
                         if item is not None]
        self._bind_optimizer(opt, model)
        self.loss = loss

    def _bind_optimizer(self, opt, model):
        previous = getattr(self, "optimizer", None)
        if previous is not None and previous is not opt:
            previous._bind(None)  # no longer drives this model
        opt._bind(model)
        self.optimizer = opt

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1,
            callbacks=None, validation_split=0.0, validation_data=None,
            shuffle=True, class_weight=None, sample_weight=None,
            initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1, seed=0):
        """Trains the model; returns a History. x, y: NumPy arrays (or
        anything np.asarray takes); verbose 0, 1 (progress bar on stderr)
        or 2 (a line per epoch). validation_split: as Keras, the last
        fraction of x and y (taken before shuffling) is validated on, not
        trained on; validation_data, when given, overrides it. In C++
        (FitOptions::validation_split), reading the rows in place.
        initial_epoch, steps_per_epoch, validation_steps,
        validation_batch_size, validation_freq (an int or a list of
        1-based epochs), class_weight and sample_weight as Keras 3
        (FitOptions names them the same); validation_data may be
        (x_val, y_val, sample_weight_val)."""
        model = self._build_for(x)
        # Keras: a falsy split (0, None) is no split.
        validation_split = float(validation_split or 0.0)
        if verbose == "auto":
            verbose = 1
        given = list(callbacks or [])
        for callback in given:
            if not isinstance(callback, _callbacks.Callback):
                raise ValueError("callbacks must be graphgc.callbacks."
                                 f"Callback objects, not "
                                 f"{type(callback).__name__}")
            callback.set_model(self)
        cpp = [getattr(c, "_cpp", None) or c for c in given]
        epochs = _args.int32(epochs, "epochs")
        batch_size = _args.int32(32 if batch_size is None else batch_size,
                                 "batch_size")
        verbose = _args.int32(verbose, "verbose")
        fit_args = _fit_args(initial_epoch, steps_per_epoch,
                             validation_steps, validation_batch_size,
                             validation_freq, class_weight, sample_weight)
        if validation_data is not None and len(validation_data) == 3:
            fit_args["validation_sample_weight"] = validation_data[2]
            validation_data = tuple(validation_data[:2])
        lists = self._lists_for(x, y)
        if lists and validation_data is not None:
            pair = tuple(validation_data)
            if len(pair) != 2:
                raise ValueError("validation_data must be a pair "
                                 "(x_val, y_val) or a triple (x_val, "
                                 "y_val, sample_weight_val), got "
                                 f"{len(pair)} items")
            validation_data = (self._x_list(pair[0]),
                               self._y_list(pair[1]))
        history, epoch, warned = self._run_fit(
            model, lists, x, y, epochs, batch_size, bool(shuffle), verbose,
            cpp, validation_data, _args.seed(seed), validation_split,
            fit_args)
        for text in warned:
            warnings.warn(text, stacklevel=2)
        for callback in given:
            # What a Python callback adds to the epoch logs, which Keras's
            # History records (LearningRateScheduler's "learning_rate").
            for key, values in getattr(callback, "_history_added",
                                       {}).items():
                history[key] = list(values)
        params = {"epochs": epochs, "verbose": verbose}
        self.history = History(history, list(epoch), params, self)
        return self.history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto",
                 sample_weight=None, return_dict=False):
        """The loss and metrics over (x, y): a dict with return_dict, else
        [loss, metric, ...] in compile order (the loss alone, a float, when
        there are no metrics), as Keras. sample_weight weighs each
        sample's loss as Keras's does (metrics stay unweighted). verbose
        as Keras's: 0 silent, 1 ("auto") fit's progress bar over the steps
        with the loss and metrics, 2 its one final line, on stderr."""
        batch_size = _args.int32(32 if batch_size is None else batch_size,
                                 "batch_size")
        verbose = _args.int32(1 if verbose == "auto" else verbose,
                              "verbose")
        lists = self._lists_for(x, y)
        if lists:
            out = self._build_for(x).evaluate_lists(
                self._x_list(x), self._y_list(y), batch_size, sample_weight,
                verbose)
        else:
            out = self._build_for(x).evaluate(x, y, batch_size,
                                              sample_weight, verbose)
        return self._logs_result(out, lists, return_dict)

    def _logs_result(self, out, lists, return_dict):
        """evaluate's (and the batch methods') result from logs `out`: a
        dict with return_dict, else the values in Keras's order, the loss
        alone (a float) when it is the only one."""
        if return_dict:
            return dict(out)
        if lists:
            return _multi_io.ordered_logs(
                out, self.output_names,
                getattr(self, "_trained", range(len(self._outputs))))
        # Keras's order: the loss, then the metrics in compile order.
        order = getattr(self, "_metric_names", [])
        names = ["loss"] + [k for k in order if k in out]
        names += [k for k in out if k not in names]
        if len(names) == 1:
            return out["loss"]
        return [out[k] for k in names]

    def predict(self, x, batch_size=None, verbose="auto"):
        """The model's outputs for x as a NumPy array; for a model of
        several outputs a list of arrays in output order, or a dict when
        its outputs were given as a dict (as Keras 3). verbose as
        evaluate's (the bar without metrics)."""
        batch_size = _args.int32(32 if batch_size is None else batch_size,
                                 "batch_size")
        verbose = _args.int32(1 if verbose == "auto" else verbose,
                              "verbose")
        if not self._lists_for(x, None):
            return self._build_for(x).predict(x, batch_size, verbose)
        out = self._build_for(x).predict_lists(self._x_list(x), batch_size,
                                               verbose)
        if self._output_keys is not None:
            return dict(zip(self._output_keys, out))
        return out[0] if len(out) == 1 else out

    def train_on_batch(self, x, y=None, sample_weight=None,
                       class_weight=None, return_dict=False):
        """One optimizer step on exactly the batch (x, y), as Keras 3's:
        all of its rows at once, in order, no callbacks. Returns the loss
        and metrics of that batch (computed before the step, as in fit),
        as evaluate returns them: the loss alone (a float), [loss, metric,
        ...], or a dict with return_dict. sample_weight and class_weight
        as fit's (not both)."""
        model = self._build_for(x)
        lists = self._lists_for(x, y)
        fit_args = _fit_args(0, None, None, None, 1, class_weight,
                             sample_weight)
        rows = self._batch_rows(self._x_list(x)[0] if lists else x)
        history, _, _ = self._run_fit(model, lists, x, y, 1, rows, False, 0,
                                      [], None, 0, 0.0, fit_args)
        out = {key: values[-1] for key, values in history.items()}
        return self._logs_result(out, lists, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """The loss and metrics of the batch (x, y), all of its rows at
        once, without training: evaluate's values for that batch alone, in
        evaluate's forms."""
        lists = self._lists_for(x, y)
        rows = self._batch_rows(self._x_list(x)[0] if lists else x)
        return self.evaluate(x, y, batch_size=rows, verbose=0,
                             sample_weight=sample_weight,
                             return_dict=return_dict)

    def predict_on_batch(self, x):
        """The model's outputs for the batch x, all of its rows at once,
        as predict returns them."""
        lists = self._lists_for(x, None)
        rows = self._batch_rows(self._x_list(x)[0] if lists else x)
        return self.predict(x, batch_size=rows, verbose=0)

    def _run_fit(self, model, lists, x, y, epochs, batch_size, shuffle,
                 verbose, cpp, validation_data, seed, validation_split,
                 fit_args):
        """The C++ fit (fit_lists for several inputs or outputs, with x, y
        and validation_data as lists): (history, epochs, warnings)."""
        if lists:
            return model.fit_lists(
                self._x_list(x), self._y_list(y), epochs, batch_size,
                shuffle, verbose, cpp, validation_data, seed,
                _callbacks.Callback, validation_split, fit_args)
        return model.fit(x, y, epochs, batch_size, shuffle, verbose, cpp,
                         validation_data, seed, _callbacks.Callback,
                         validation_split, fit_args)

    @staticmethod
    def _batch_rows(x):
        """The rows of one batch's array (at least 1: an empty batch is
        refused by the data checks, naming it)."""
        shape = _np.shape(x)
        return _args.int32(max(shape[0] if shape else 1, 1), "batch rows")

    def _lists_for(self, x, y):
        """Whether x and y go to the C++ list methods: a functional model of
        several inputs or outputs, or data given as lists or dicts."""
        if isinstance(self, Sequential):
            return False
        nested = (list, tuple, dict)
        return (self._multi_io() or isinstance(x, nested)
                or isinstance(y, nested))

    def _x_list(self, x):
        return _multi_io.flatten_data(x, self.input_names, self._input_keys,
                                      "input")

    def _y_list(self, y):
        """y in output order; only the trained outputs' when some output has
        no loss and its labels are not given."""
        ys = _multi_io.flatten_data(y, self.output_names, self._output_keys,
                                    "output", optional=True)
        trained = getattr(self, "_trained", None)
        if trained is not None and any(item is None for item in ys):
            ys = [ys[i] for i in trained]
        missing = [self.output_names[i] for i, item in enumerate(ys)
                   if item is None]
        if missing:
            raise ValueError(f"Missing data for output {missing[0]!r}")
        return ys

    def __call__(self, x):
        """On symbolic tensors (one, a list, or a dict keyed like the
        model's inputs), the model as a layer: its layers called again on
        them, sharing their weights, with the outputs in the model's output
        structure (graphgc/_nested.py); on data, predict(x) without a
        progress bar."""
        if _nested.is_symbolic(x):
            if isinstance(self, Sequential):
                return _nested.call_sequential(self, x)
            return _nested.call_model(self, x)
        return self.predict(x, verbose=0)

    def get_weights(self):
        """Every weight as a NumPy array (copies the caller owns), in layer
        order: Dense/Conv2D kernel and bias, BatchNormalization gamma, beta,
        moving mean and variance."""
        return self._build().get_weights()

    def set_weights(self, weights):
        """Sets every weight, all or none (a wrong count, shape or dtype
        raises ValueError and changes nothing)."""
        self._build().set_weights(list(weights))

    def summary(self, print_fn=None):
        """Prints Keras's summary table (or passes it to print_fn)."""
        text = self._build().summary()
        (print_fn or print)(text.rstrip("\n"))

    def save(self, filepath, overwrite=True):
        """Writes the model, atomically: a path ending in ".keras" as Keras
        3's single-file zip (graphgc/_saving.py), any other as graphgc's
        model directory (config.json, model.weights.h5, model.pb,
        signature.json). Keras's legacy ".h5"/".hdf5" is refused
        (ValueError); overwrite=False refuses an existing path
        (FileExistsError) where Keras would ask."""
        if _saving.is_legacy_h5(filepath):
            raise _saving.legacy_h5_save_error(filepath)
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"{filepath} exists and overwrite=False")
        if str(filepath).endswith(".keras"):
            _saving.save_keras(self._build(), filepath)
        else:
            self._build().save(str(filepath))

    def save_weights(self, filepath, overwrite=True, max_shard_size=None):
        """Writes the weights alone to filepath, which must end in
        ".weights.h5" (Keras 3's HDF5 layout), atomically."""
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"{filepath} exists and overwrite=False")
        _saving.save_weights(self._build(), filepath, max_shard_size)

    def load_weights(self, filepath, skip_mismatch=False):
        """Sets the weights from a ".weights.h5" file, or a ".keras" file's
        model.weights.h5. Every layer's weight count and shapes are checked
        first: a mismatch raises ValueError naming the layer and changes
        nothing."""
        _saving.load_weights(self._build(), filepath, skip_mismatch)

    def to_json(self, **kwargs):
        """The model's Keras JSON config (class_name, config, compile_config
        when compiled), as Keras's to_json; kwargs go to json.dumps."""
        text = _graphgc.model_to_json(self._build())
        return json.dumps(json.loads(text), **kwargs) if kwargs else text

    def get_config(self):
        """The model's Keras config dict (what from_config takes)."""
        return json.loads(_graphgc.model_to_json(self._build()))["config"]

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new, uncompiled model with fresh weights from get_config()'s
        dict: a functional Model, or a Sequential from Sequential's."""
        if custom_objects:
            raise NotImplementedError(
                "from_config: custom_objects are not supported by graphgc")
        functional = all(key in config for key in
                         ("layers", "input_layers", "output_layers"))
        if cls is Sequential and functional:
            raise ValueError("Sequential.from_config takes a Sequential's "
                             "config; use Model.from_config for a functional "
                             "model's")
        if cls is Model and not functional:
            raise ValueError("Model.from_config takes a functional model's "
                             "config (layers, input_layers, output_layers); "
                             "use Sequential.from_config for a Sequential's")
        class_name = "Functional" if functional else "Sequential"
        text = json.dumps({"class_name": class_name, "config": config})
        return _wrap_loaded(_graphgc.model_from_json(text, False))

    def count_params(self):
        """The number of weights, each shared weight once (the summary's
        "Total params")."""
        return sum(int(w.size) for w in self.get_weights())

    def get_layer(self, name=None, index=None):
        """The layer called name, or the one at index in self.layers."""
        if index is not None and name is not None:
            raise ValueError("Provide only a layer name or a layer index. "
                             f"Received: index={index}, name={name}.")
        if index is not None:
            if len(self.layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index "
                                 f"{index} but model only has "
                                 f"{len(self.layers)} layers.")
            return self.layers[index]
        if name is not None:
            for layer in self.layers:
                if layer.name == name:
                    return layer
            raise ValueError(f"No such layer: {name}. Existing layers are: "
                             f"{[layer.name for layer in self.layers]}.")
        raise ValueError("Provide either a layer name or layer index at "
                         "`get_layer`.")

    def __repr__(self):
        return f"<graphgc.{type(self).__name__} name={self.name!r}>"


class Sequential(Model):
    """A linear stack of layers: Sequential([Input((10,)), Dense(10)]); a
    Model, with its training methods.

    Layers may also be added with add() (and removed with pop()) until the
    model is compiled; the C++ model is made (and checked) once it is
    needed. As in Keras, a model whose first layer is not an Input is
    built on its first data (fit, evaluate, predict, a call, the batch
    methods) or by build(input_shape); compile() before that is kept and
    applied then."""

    def __init__(self, layers=None, name=None):
        self._layers = []
        self._requested_name = name or ""
        self._model = None
        self._compile_config = None
        self._pending_compile = None
        for layer in layers or []:
            self._append(layer)
        if self._has_input():
            self._build()

    @staticmethod
    def _check_layer(layer):
        # What keras.Input returns: a symbolic tensor stands for the
        # InputLayer that made it, as Keras's Sequential reads it from the
        # tensor's _keras_history.
        history = getattr(layer, "_keras_history", None)
        if history is not None and isinstance(history[0], _layers.InputLayer):
            layer = history[0]
        if not isinstance(layer, _layers.Layer):
            raise ValueError("Sequential takes graphgc.layers objects, not "
                             f"{type(layer).__name__}")
        return layer

    def _append(self, layer):
        """Appends a checked layer; a first layer given input_shape or
        input_dim gets an InputLayer of that shape before it, as Keras 3
        does."""
        layer = self._check_layer(layer)
        if isinstance(layer, _layers.InputLayer) and self._layers:
            raise ValueError("an Input can only be the first layer of a "
                             "Sequential model")
        shape = getattr(layer, "_input_shape_arg", None)
        if not self._layers and shape is not None:
            self._layers.append(_layers.InputLayer(shape))
        self._layers.append(layer)

    def _has_input(self):
        return bool(self._layers) and isinstance(self._layers[0],
                                                 _layers.InputLayer)

    def _defers_build(self):
        return self._model is None and not self._has_input()

    def _build(self, input_shape=None):
        """The C++ model, made on first need. A model without an Input gets
        one of input_shape (the shape of one sample) first; without
        input_shape it is not built yet, and says so as Keras does."""
        if self._model is None:
            if not self._layers:
                raise ValueError("the model has no layers; give it an Input "
                                 "and at least one layer")
            added = not self._has_input()
            if added:
                if input_shape is None:
                    raise ValueError(
                        "This model has not yet been built. Build the model "
                        "first by calling `build()` or by calling the model "
                        "on a batch of data.")
                self._layers.insert(0, _layers.InputLayer(tuple(input_shape)))
            try:
                self._model = _graphgc.Sequential(
                    [layer._layer for layer in self._layers],
                    self._requested_name)
            except Exception:
                if added:
                    del self._layers[0]
                raise
            pending, self._pending_compile = self._pending_compile, None
            if pending is not None:
                Model.compile(self, **pending)
        return self._model

    def _compiled(self):
        """Whether compile() was called: on the built model, or kept for
        the build."""
        return self._pending_compile is not None or (
            self._model is not None and self._model.compiled)

    def _build_for(self, x):
        if self._defers_build() and x is not None:
            return self._build(_np.shape(x)[1:])
        return self._build()

    def build(self, input_shape=None):
        """Builds a model whose first layer is not an Input for batches of
        input_shape (the batch size first, None or a number; the model takes
        any), as Keras 3's Sequential.build. Like Keras's, it does nothing
        when input_shape is not one tensor's shape."""
        if not isinstance(input_shape, (tuple, list)):
            return
        if input_shape and not (input_shape[0] is None
                                or isinstance(input_shape[0], int)):
            return
        self._build(tuple(input_shape[1:]))

    @property
    def built(self):
        return self._model is not None

    @classmethod
    def _wrap(cls, cpp):
        model = cls.__new__(cls)
        model._layers = [_layers.Layer._wrap(layer) for layer in cpp.layers]
        model._requested_name = cpp.name
        model._model = cpp
        model._compile_config = None
        model._pending_compile = None
        return model

    def add(self, layer):
        """Appends a layer; only before compile (the model is rebuilt)."""
        self._check_layer(layer)
        if self._compiled():
            raise RuntimeError("add() after compile(); build the model "
                               "with all its layers, then compile it")
        kept = list(self._layers)
        self._append(layer)
        self._rebuild(kept)

    def pop(self):
        """Removes the last layer and returns it, as Keras's pop(); only
        before compile (the model is rebuilt, or left unbuilt when no
        layer follows its Input)."""
        if self._compiled():
            raise RuntimeError("pop() after compile(); build the model "
                               "with the layers it needs, then compile it")
        if not self._layers:
            raise IndexError("pop from a Sequential model with no layers")
        kept = list(self._layers)
        layer = self._layers.pop()
        self._rebuild(kept)
        return layer

    def _rebuild(self, kept):
        """Rebuilds after a change to the layers when the model has an Input
        (and layers after it); on failure the layers are `kept` again."""
        self._model = None
        if not self._has_input() or len(self._layers) < 2:
            return
        try:
            self._build()
        except Exception:
            self._layers = kept
            self._model = None
            if self._has_input():
                self._build()
            raise

    @property
    def layers(self):
        """The layers after the Input, as Keras lists them."""
        return [layer for layer in self._layers
                if not isinstance(layer, _layers.InputLayer)]

    @property
    def name(self):
        if self._defers_build():
            return self._requested_name or "sequential"
        return self._build().name

    def summary(self, print_fn=None):
        """Prints Keras's summary table; before the model is built, its
        layers with "?" shapes and "0 (unbuilt)" parameters, as Keras 3."""
        if not self._defers_build():
            return Model.summary(self, print_fn)
        rule = "_" * 65
        lines = [f'Model: "{self.name}"', rule,
                 f"{'Layer (type)':<29}{'Output Shape':<26}Param #", "=" * 65]
        for i, layer in enumerate(self._layers):
            kind = type(layer).__name__
            name = layer.name or layer._default_name
            lines.append(f"{f'{name} ({kind})':<29}{'?':<26}0 (unbuilt)")
            lines.append(rule if i + 1 < len(self._layers) else "=" * 65)
        lines += ["Total params: 0", "Trainable params: 0",
                  "Non-trainable params: 0", rule]
        (print_fn or print)("\n".join(lines))
        return None


def _layers_reached(outputs):
    """The Python layers whose calls made outputs, through their inputs."""
    seen, found, stack = set(), [], list(outputs)
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen:
            continue
        seen.add(id(tensor))
        found.append(tensor._keras_history[0])
        stack.extend(tensor._inbound)
    return found


def _wrap_loaded(cpp):
    if isinstance(cpp, _graphgc.Functional):
        return Model._wrap(cpp)
    return Sequential._wrap(cpp)


def load_model(filepath, compile=True):  # noqa: A002 (Keras's spelling)
    """A model saved with save(), compiled when it was: a Sequential, or a
    functional Model, as the saved model was (Keras's load_model). A
    ".keras" file is read as Keras 3's zip (graphgc/_saving.py says what is
    refused); a directory as graphgc's model directory; Keras's legacy
    ".h5" is refused."""
    path = str(filepath)
    if path.endswith(".keras") and not os.path.isdir(path):
        if not os.path.exists(path):
            raise ValueError(f"File not found: filepath={path}. Please ensure "
                             "the file is an accessible `.keras` zip file.")
        return _wrap_loaded(_saving.load_keras(path, compile))
    if _saving.is_legacy_h5(path):
        raise NotImplementedError(
            "load_model: legacy H5 model files (`.h5`) are not supported by "
            "graphgc; save models as `.keras` files. "
            f"Received: filepath={path}")
    return _wrap_loaded(_graphgc.load_model(path, bool(compile)))


def model_from_json(json_string, custom_objects=None):
    """A new model with fresh weights from to_json()'s text, compiled when
    the text has a compile_config (Keras's model_from_json)."""
    if custom_objects:
        raise NotImplementedError(
            "model_from_json: custom_objects are not supported by graphgc")
    return _wrap_loaded(_graphgc.model_from_json(str(json_string), True))
