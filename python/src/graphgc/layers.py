"""Keras's layers: one class per layer kind graphgc's C++ registry holds
(InputLayer, Dense, Conv2D, MaxPooling2D, Flatten, Dropout,
BatchNormalization, Reshape, Activation, LeakyReLU, the merge layers Add,
Concatenate, ...), generated from each kind's keyword arguments
(_graphgc.layer_kinds()); Input() and KerasTensor, the functional API's
symbolic tensors; the merge layers' function forms (add, concatenate, ...).

Each object holds a C++ layer (a handle to its variables): a layer given to
two models is shared by them, as in Keras. A layer is made from its
arguments as a Keras config, by the reader load_model uses
(_graphgc.make_layer). Bad options are reported when a model is made from
the layer (ValueError), as graphgc's C++ does.
"""

import inspect
import json
import math
import threading
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


def _single(value, what):
    """Keras's one-value size tuple (1-D pool_size, strides): an int or a
    tuple of one."""
    out = _pair(value, what)
    if isinstance(value, int):
        return out[:1]
    if len(out) != 1:
        raise ValueError(f"{what} must be an int or a tuple of 1 int, "
                         f"not {value!r}")
    return out


def _padding(value, cls, name):
    """Keras's padding or cropping amounts: an int, a tuple of one per
    spatial axis, or (2-D) a (before, after) tuple per axis; as nested lists
    for the config."""
    if isinstance(value, int):
        return value
    try:
        if isinstance(value, str):
            raise TypeError
        out = [v if isinstance(v, int) else [int(w) for w in v]
               for v in value]
    except (TypeError, ValueError):
        raise ValueError(f"{cls}: {name} must be an int or a tuple, "
                         f"not {value!r}") from None
    return out


def _activation(activation):
    if activation is None or isinstance(activation, str):
        return activation
    raise ValueError("activation must be a name (\"relu\", \"softmax\", ...) "
                     f"or None, not {activation!r}")


def _axis(value, cls, name):
    # An int, or a list or tuple of ints (Keras's axis arguments).
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, (list, tuple)) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    raise ValueError(f"{cls}: {name} must be an int or a list of ints, "
                     f"not {value!r}")


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
    "tuple1": lambda v, cls, name: _single(v, f"{cls}: {name}"),
    "tuple1_or_none": lambda v, cls, name: (None if v is None
                                            else _single(v, f"{cls}: {name}")),
    # The C++ layer checks the count of amounts for its spatial rank.
    "padding1d": _padding,
    "padding2d": _padding,
    "shape": lambda v, cls, name: [int(d) for d in v],
    "float": _float,
    "float_or_none": lambda v, cls, name: (None if v is None
                                           else _float(v, cls, name)),
    "axis": _axis,
    "bool": lambda v, cls, name: bool(v),
    "str": lambda v, cls, name: v,
    "activation": lambda v, cls, name: _activation(v),
    "seed": lambda v, cls, name: _args.seed(v, f"{cls}: seed"),
    "name": lambda v, cls, name: v or None,
}


_tensor_count = 0
_tensor_count_lock = threading.Lock()


def _tensor_name():
    """Keras's automatic tensor names: keras_tensor, keras_tensor_1, ..."""
    global _tensor_count
    with _tensor_count_lock:
        count = _tensor_count
        _tensor_count += 1
    return "keras_tensor" + (f"_{count}" if count else "")


def _reset_tensor_names():
    """clear_session's: the next automatic tensor name is keras_tensor."""
    global _tensor_count
    with _tensor_count_lock:
        _tensor_count = 0


class KerasTensor:
    """A symbolic tensor of the functional API: what Input() returns and
    what calling a layer on symbolic tensors returns (Keras's KerasTensor).
    .shape is Keras's, with None for the batch; _keras_history is
    (layer, node_index, tensor_index), the call that made it. It holds its
    C++ value (models/functional.h), and so the layers it depends on."""

    def __init__(self, cpp, layer, node_index, inbound, name=None):
        self._tensor = cpp
        self._keras_history = (layer, node_index, 0)
        self._inbound = tuple(inbound)
        self.name = name or _tensor_name()

    @property
    def shape(self):
        return (None, *self._tensor.shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        return "float32"

    @property
    def sparse(self):
        return False

    def __repr__(self):
        return (f"<KerasTensor shape={self.shape}, dtype={self.dtype}, "
                f"sparse=False, ragged=False, name={self.name}>")


class Layer:
    """Base of graphgc's layers."""

    # The name a layer of the class gets when given none (each registered
    # kind's class sets its own).
    _default_name = ""

    def __init__(self, cpp):
        self._layer = cpp
        self._call_count = 0

    def __call__(self, inputs):
        """The layer's call on a symbolic tensor, or on a list of them for
        a merge layer: a KerasTensor. Bad shapes raise ValueError at once;
        a layer called twice is one layer with one set of weights."""
        if isinstance(inputs, KerasTensor):
            cpp = _graphgc.call_layer(self._layer, inputs._tensor)
            inbound = [inputs]
        elif (isinstance(inputs, (list, tuple)) and inputs
              and all(isinstance(x, KerasTensor) for x in inputs)):
            cpp = _graphgc.call_layer_on_list(
                self._layer, [x._tensor for x in inputs])
            inbound = list(inputs)
        else:
            raise ValueError(
                f"{type(self).__name__}: graphgc layers are called on "
                "keras.Input() tensors or tensors made from them (a list of "
                "them for a merge layer), not "
                f"{type(inputs).__name__}; use a model's predict() for data")
        node_index = self._call_count
        self._call_count += 1
        out = KerasTensor(cpp, self, node_index, inbound)
        # How the call was given its inputs, for a model called as a layer
        # to make it again (graphgc/_nested.py).
        out._on_list = not isinstance(inputs, KerasTensor)
        return out

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


def _input_shape_arg(kwargs, class_name, own_input_dim=False):
    """Takes input_dim and input_shape out of kwargs: the shape they ask for
    (input_dim wins, as in Keras), or None; warns as Keras 3 does when there
    is one. A Sequential whose first layer has one starts with an
    InputLayer of that shape (models.Sequential._append)."""
    # A kind whose own argument is input_dim (Embedding) keeps it.
    input_dim = None if own_input_dim else kwargs.pop("input_dim", None)
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


def _make_class(class_name, default_name, fields):
    """A Layer subclass whose __init__ takes the kind's keyword arguments
    (and, but for InputLayer, input_shape and input_dim, which Keras's
    Layer takes through **kwargs, out of the signature as there);
    _default_name is the name a layer of it gets when given none."""
    params = [inspect.Parameter("self",
                                inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name, _, default in fields:
        params.append(inspect.Parameter(
            name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=(inspect.Parameter.empty if default == ""
                     else json.loads(default))))
    signature = inspect.Signature(params)

    def __init__(self, *args, **kwargs):
        shape = (None if class_name == "InputLayer"
                 else _input_shape_arg(
                     kwargs, class_name,
                     any(f[0] == "input_dim" for f in fields)))
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
        "_default_name": default_name,
        "__doc__": f"Keras's {class_name} layer."})


_KINDS = {name: _make_class(name, default_name, fields)
          for name, default_name, fields in _graphgc.layer_kinds()}
globals().update(_KINDS)
__all__ = ["Layer", "Input", "KerasTensor", "add", "average",
           "concatenate", "dot", "maximum", "minimum", "multiply", "subtract",
           *_KINDS]

_KINDS["Dense"].units = property(lambda self: self._layer.units)
_KINDS["Conv2D"].filters = property(lambda self: self._layer.units)
_KINDS["Conv2DTranspose"].filters = property(lambda self: self._layer.units)


def Input(shape=None, batch_size=None, dtype=None, sparse=None,  # noqa: N802
          ragged=None, batch_shape=None, name=None, tensor=None,
          optional=False):
    """The model's input, keras.Input's arguments; shape leaves out the
    batch dimension (batch_shape includes it).

    Returns a KerasTensor of shape (None, *shape) for layers to be called
    on (the functional API, graphgc.Model) or to start a Sequential.
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
        raise ValueError("Input: `tensor` is not supported by graphgc")
    try:
        dims = [int(d) for d in shape]
    except (TypeError, ValueError):
        raise ValueError("Input: shape must be a tuple of ints (graphgc has "
                         f"no unknown dimensions but the batch), not "
                         f"{shape!r}") from None
    cpp = _graphgc.input(dims, name or "")
    layer = Layer._wrap(cpp.layer)
    layer._call_count = 1
    return KerasTensor(cpp, layer, 0, [], name=name)


def _merge_function(kind, what):
    """Keras's function form of a merge layer: add([a, b]) is
    Add()([a, b])."""
    def merge(inputs, **kwargs):
        return _KINDS[kind](**kwargs)(inputs)

    merge.__name__ = merge.__qualname__ = kind.lower()
    merge.__doc__ = f"{kind}()(inputs): {what}."
    return merge


add = _merge_function("Add", "the elementwise sum of tensors of one shape")
subtract = _merge_function("Subtract",
                           "the first of two tensors minus the second")
multiply = _merge_function("Multiply", "the elementwise product")
average = _merge_function("Average", "the elementwise mean")
maximum = _merge_function("Maximum", "the elementwise maximum")
minimum = _merge_function("Minimum", "the elementwise minimum")


def concatenate(inputs, axis=-1, **kwargs):
    """Concatenate(axis)(inputs): the tensors joined along axis (counting
    the batch, so -1 is the last)."""
    return _KINDS["Concatenate"](axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    """Dot(axes)(inputs): the dot product of two samples along axes
    (normalize=True: their cosine proximity)."""
    return _KINDS["Dot"](axes=axes, **kwargs)(inputs)
