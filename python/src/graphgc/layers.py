"""Keras's layers: one class per layer kind graphgc's C++ registry holds
(InputLayer, Dense, Conv2D, MaxPooling2D, Flatten, Dropout,
BatchNormalization, Reshape, Activation, LeakyReLU, ...), generated from
each kind's keyword arguments (_graphgc.layer_kinds()); Input().

Each object holds a C++ layer (a handle to its variables): a layer given to
two models is shared by them, as in Keras. A layer is made from its
arguments as a Keras config, by the reader load_model uses
(_graphgc.make_layer). Bad options are reported when a model is made from
the layer (ValueError), as graphgc's C++ does.
"""

import inspect
import json
import math
import warnings

from graphgc import _args, _graphgc


def _pair(value, what):
    if isinstance(value, int):
        return [value, value]
    try:
        if isinstance(value, str):
            raise TypeError
        out = [int(v) for v in value]
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be an int or a tuple of ints, "
                         f"not {value!r}") from None
    return out


def _activation(activation):
    if activation is None or isinstance(activation, str):
        return activation
    raise ValueError("activation must be a name (\"relu\", \"softmax\", ...) "
                     f"or None, not {activation!r}")


def _float(value, cls, name):
    # A config is JSON text, which has no NaN or infinity.
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{cls}: {name} must be a finite number, "
                         f"got {value!r}")
    return out


# How an argument becomes its config value, by the kind of argument the C++
# registry names (models/layer_registry.h, ConfigField::python).
_CONVERT = {
    "int32": lambda v, cls, name: _args.int32(v, f"{cls}: {name}",
                                              low=-_args._INT32_MAX),
    "int": lambda v, cls, name: int(v),
    "pair": lambda v, cls, name: _pair(v, name),
    "pair_or_none": lambda v, cls, name: None if v is None else _pair(v, name),
    "shape": lambda v, cls, name: [int(d) for d in v],
    "float": _float,
    "bool": lambda v, cls, name: bool(v),
    "str": lambda v, cls, name: v,
    "activation": lambda v, cls, name: _activation(v),
    "seed": lambda v, cls, name: _args.seed(v, f"{cls}: seed"),
    "name": lambda v, cls, name: v or None,
}


class Layer:
    """Base of graphgc's layers."""

    def __init__(self, cpp):
        self._layer = cpp

    @classmethod
    def _wrap(cls, cpp):
        layer = cls.__new__(_KINDS.get(cpp.kind, Layer))
        Layer.__init__(layer, cpp)
        return layer

    @property
    def name(self):
        return self._layer.name

    @property
    def built(self):
        return self._layer.built

    def __repr__(self):
        return f"<graphgc.layers.{type(self).__name__} name={self.name!r}>"


def _input_shape_arg(kwargs, class_name):
    """Takes input_dim and input_shape out of kwargs: the shape they ask for
    (input_dim wins, as in Keras), or None; warns as Keras 3 does when there
    is one. A Sequential whose first layer has one starts with an
    InputLayer of that shape (models.Sequential._append)."""
    input_dim = kwargs.pop("input_dim", None)
    input_shape = kwargs.pop("input_shape", None)
    shape = (input_dim,) if input_dim is not None else input_shape
    if shape is None:
        return None
    warnings.warn("Do not pass an `input_shape`/`input_dim` argument to a "
                  "layer. When using Sequential models, prefer using an "
                  "`Input(shape)` object as the first layer in the model "
                  "instead.", UserWarning, stacklevel=3)
    try:
        return tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise ValueError(f"{class_name}: input_shape must be a tuple of "
                         f"ints, not {shape!r}") from None


def _make_class(class_name, fields):
    """A Layer subclass whose __init__ takes the kind's keyword arguments
    (and, but for InputLayer, input_shape and input_dim, which Keras's
    Layer takes through **kwargs, out of the signature as there)."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name, _, default in fields:
        params.append(inspect.Parameter(
            name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=(inspect.Parameter.empty if default == ""
                     else json.loads(default))))
    signature = inspect.Signature(params)

    def __init__(self, *args, **kwargs):
        shape = (None if class_name == "InputLayer"
                 else _input_shape_arg(kwargs, class_name))
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        config = {}
        for name, convert, _ in fields:
            config[name] = _CONVERT[convert](bound.arguments[name], class_name,
                                             name)
        Layer.__init__(self, _graphgc.make_layer(class_name,
                                                 json.dumps(config)))
        if shape is not None:
            self._input_shape_arg = shape

    __init__.__signature__ = signature
    return type(class_name, (Layer,), {
        "__init__": __init__, "__module__": __name__,
        "__doc__": f"Keras's {class_name} layer."})


_KINDS = {name: _make_class(name, fields)
          for name, fields in _graphgc.layer_kinds()}
globals().update(_KINDS)
__all__ = ["Layer", "Input", *_KINDS]

_KINDS["Dense"].units = property(lambda self: self._layer.units)
_KINDS["Conv2D"].filters = property(lambda self: self._layer.units)


def Input(shape=None, batch_size=None, dtype=None, sparse=None,  # noqa: N802
          ragged=None, batch_shape=None, name=None, tensor=None,
          optional=False):
    """The model's input, keras.Input's arguments; shape leaves out the
    batch dimension (batch_shape includes it).

    Returns the InputLayer, which Sequential takes as its first element.
    Keras returns a symbolic tensor instead; until graphgc's functional API
    has them, anything Sequential is given with a _keras_history whose
    first item is an InputLayer (Keras's own test) stands for that layer,
    so Input can return such a tensor without Sequential changing.
    graphgc's inputs are float32 and dense, with any batch size: other
    dtype, sparse, ragged, tensor and optional values are refused.
    """
    if shape is not None and batch_shape is not None:
        raise ValueError("You cannot pass both `shape` and `batch_shape` at "
                         "the same time.")
    if batch_size is not None and batch_shape is not None:
        raise ValueError("You cannot pass both `batch_size` and "
                         "`batch_shape` at the same time.")
    if shape is None and batch_shape is None:
        raise ValueError("You must pass a `shape` argument.")
    if shape is None:
        shape = tuple(batch_shape)[1:]
    if dtype is not None and str(getattr(dtype, "name", dtype)) != "float32":
        raise ValueError(f"Input: graphgc's inputs are float32, not dtype="
                         f"{dtype!r}")
    for arg, value in (("sparse", sparse), ("ragged", ragged),
                       ("optional", optional)):
        if value:
            raise ValueError(f"Input: `{arg}=True` is not supported by "
                             "graphgc")
    if tensor is not None:
        raise ValueError("Input: `tensor` is not supported by graphgc (no "
                         "functional API yet)")
    return InputLayer(shape, name=name)  # noqa: F821 (generated)
