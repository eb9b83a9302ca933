"""Keras's layers: Input, Dense, Conv2D, MaxPooling2D, Flatten, Dropout,
BatchNormalization, Reshape, Activation.

Each object holds a C++ layer (a handle to its variables): a layer given to
two models is shared by them, as in Keras. Bad options are reported when a
model is made from the layer (ValueError), as graphgc's C++ does.
"""

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


class InputLayer(Layer):
    def __init__(self, shape, name=None):
        super().__init__(_graphgc.input_layer([int(d) for d in shape],
                                              name or ""))


def Input(shape, name=None, **kwargs):  # noqa: N802 (Keras's spelling)
    """The model's input; shape leaves out the batch dimension."""
    return InputLayer(shape, name=name)


class Dense(Layer):
    def __init__(self, units, activation=None, use_bias=True, name=None,
                 seed=None):
        super().__init__(_graphgc.dense(
            _args.int32(units, "Dense: units", low=-_args._INT32_MAX),
            _activation(activation), bool(use_bias), name or "",
            _args.seed(seed, "Dense: seed")))

    @property
    def units(self):
        return self._layer.units


class Conv2D(Layer):
    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 activation=None, use_bias=True, name=None, seed=None):
        super().__init__(_graphgc.conv2d(
            int(filters), _pair(kernel_size, "kernel_size"),
            _pair(strides, "strides"), padding, _activation(activation),
            bool(use_bias), name or "", _args.seed(seed, "Conv2D: seed")))

    @property
    def filters(self):
        return self._layer.units


class MaxPooling2D(Layer):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid",
                 name=None):
        super().__init__(_graphgc.max_pooling2d(
            _pair(pool_size, "pool_size"),
            [] if strides is None else _pair(strides, "strides"), padding,
            name or ""))


class Flatten(Layer):
    def __init__(self, name=None):
        super().__init__(_graphgc.flatten(name or ""))


class Dropout(Layer):
    def __init__(self, rate, seed=None, name=None):
        super().__init__(_graphgc.dropout(float(rate), name or "",
                                          _args.seed(seed, "Dropout: seed")))


class BatchNormalization(Layer):
    def __init__(self, momentum=0.99, epsilon=1e-3, name=None):
        super().__init__(_graphgc.batch_normalization(
            float(momentum), float(epsilon), name or ""))


class Reshape(Layer):
    def __init__(self, target_shape, name=None):
        super().__init__(_graphgc.reshape([int(d) for d in target_shape],
                                          name or ""))


class Activation(Layer):
    def __init__(self, activation, name=None):
        if not isinstance(activation, str):
            _activation(activation)
        super().__init__(_graphgc.activation(activation, name or ""))


_KINDS = {
    "InputLayer": InputLayer, "Dense": Dense, "Conv2D": Conv2D,
    "MaxPooling2D": MaxPooling2D, "Flatten": Flatten, "Dropout": Dropout,
    "BatchNormalization": BatchNormalization, "Reshape": Reshape,
    "Activation": Activation,
}
