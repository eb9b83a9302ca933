"""Keras's optimizers Adam, SGD and RMSprop (with Keras 3's defaults);
compile() also takes their names, "adam", "sgd" and "rmsprop".

Once compiled, an optimizer is the model's live optimizer (model.optimizer):
its learning_rate reads the rate the model's next step uses, and assigning
it (``opt.learning_rate = 0.01`` or ``opt.learning_rate.assign(0.01)``)
changes that rate without rebuilding anything, as Keras's variable does."""

import numpy as _np

from graphgc import _args, _graphgc


class LearningRate:
    """The learning rate as Keras's optimizer variable shows it: float(),
    numpy(), np.array(), arithmetic and comparisons read its current value;
    assign(value) sets it."""

    def __init__(self, optimizer):
        self._optimizer = optimizer

    def assign(self, value):
        self._optimizer.learning_rate = value
        return self

    def numpy(self):
        return _np.float32(float(self))

    @property
    def value(self):
        return float(self)

    @property
    def dtype(self):
        return "float32"

    @property
    def shape(self):
        return ()

    def __float__(self):
        return self._optimizer._get_learning_rate()

    def __array__(self, dtype=None, copy=None):
        return _np.asarray(float(self), dtype=dtype or _np.float32)

    def __repr__(self):
        return f"<LearningRate value={float(self)!r}>"

    def __format__(self, spec):
        return format(float(self), spec)

    def __bool__(self):
        return bool(float(self))

    def __round__(self, ndigits=None):
        return round(float(self), ndigits)

    def __neg__(self):
        return -float(self)

    def __abs__(self):
        return abs(float(self))

    def __hash__(self):
        return id(self)


def _binary(name):
    op = getattr(float, name)

    def method(self, other):
        if isinstance(other, LearningRate):
            other = float(other)
        return op(float(self), other)

    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
              "__rmul__", "__truediv__", "__rtruediv__", "__pow__",
              "__rpow__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__",
              "__ne__"):
    setattr(LearningRate, _name, _binary(_name))


def _rate(value):
    """A learning rate as a float (a LearningRate, NumPy scalar, ...)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError("learning_rate must be a number, not "
                         f"{value!r}") from None


class Optimizer:
    """The base of graphgc's optimizers: learning_rate is live once the
    optimizer is compiled into a model."""

    def __init__(self, learning_rate):
        self._learning_rate = _rate(learning_rate)
        self._model = None  # the C++ model it drives, once compiled

    @property
    def learning_rate(self):
        return LearningRate(self)

    @learning_rate.setter
    def learning_rate(self, value):
        rate = _rate(value)
        if self._model is not None:
            self._model.learning_rate = rate  # ValueError when negative
        self._learning_rate = rate

    # Keras 2's spelling, still common in callbacks.
    lr = learning_rate

    def _get_learning_rate(self):
        if self._model is not None:
            return float(self._model.learning_rate)
        return self._learning_rate

    def _bind(self, model):
        """Makes this the live optimizer of the C++ `model`."""
        self._model = model

    def _cpp(self):
        raise NotImplementedError


class Adam(Optimizer):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7):
        super().__init__(learning_rate)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def _cpp(self):
        return _graphgc.adam(self._get_learning_rate(), float(self.beta_1),
                             float(self.beta_2), float(self.epsilon))


class SGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False):
        super().__init__(learning_rate)
        self.momentum = momentum
        self.nesterov = nesterov

    def _cpp(self):
        return _graphgc.sgd(self._get_learning_rate(), float(self.momentum),
                            bool(self.nesterov))


class RMSprop(Optimizer):
    """Keras 3's RMSprop: velocity = rho * velocity + (1 - rho) * g^2;
    w -= lr * g / sqrt(velocity + epsilon) (centered: velocity minus the
    squared moving average of g; momentum: through a momentum slot)."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0,
                 epsilon=1e-7, centered=False):
        super().__init__(learning_rate)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered

    def _cpp(self):
        return _graphgc.rmsprop(self._get_learning_rate(), float(self.rho),
                                float(self.momentum), float(self.epsilon),
                                bool(self.centered))


_BY_NAME = {"adam": Adam, "sgd": SGD, "rmsprop": RMSprop}


def get(identifier):
    """An Optimizer from a name ("adam", "sgd", "rmsprop") or an
    Optimizer."""
    return _args.get(identifier, Optimizer, _BY_NAME, "optimizer",
                     "\"adam\", \"sgd\", \"rmsprop\", "
                     "graphgc.optimizers.Adam(...), SGD(...) and "
                     "RMSprop(...)")
