"""Keras's optimizers SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, Nadam,
Adadelta and Lion, with Keras 3's keyword names and defaults; compile()
also takes their names ("adam", "adamw", "sgd", ...). Every optimizer takes
Keras's base keywords weight_decay, clipnorm, clipvalue and
global_clipnorm (at most one of the clipping ones); an unknown keyword is a
TypeError naming it.

Once compiled, an optimizer is the model's live optimizer (model.optimizer):
its learning_rate reads the rate the model's next step uses, and assigning
it (``opt.learning_rate = 0.01`` or ``opt.learning_rate.assign(0.01)``)
changes that rate without rebuilding anything, as Keras's variable does.

learning_rate may also be a schedule (graphgc.optimizers.schedules, Keras's
keras.optimizers.schedules): fit then sets each step's rate from it at the
optimizer's step count, learning_rate reads the schedule's rate at
optimizer.iterations, and assigning a rate is Keras's TypeError."""

import sys as _sys

import numpy as _np

from graphgc import _args, _graphgc
from graphgc import schedules

# `import graphgc.optimizers.schedules` and `from graphgc.optimizers.schedules
# import ...` find the module, as Keras's submodule.
_sys.modules[__name__ + ".schedules"] = schedules

_NOT_SETTABLE = (
    "This optimizer was created with a `LearningRateSchedule` object as its "
    "`learning_rate` constructor argument, hence its learning rate is not "
    "settable. If you need the learning rate to be settable, you should "
    "instantiate the optimizer with a float `learning_rate` argument.")


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


class Iterations:
    """Keras's optimizer.iterations: the training steps the optimizer has
    taken (0 before compile and after it). int(), numpy(), np.array(),
    arithmetic and comparisons read its current value; read-only."""

    def __init__(self, optimizer):
        self._optimizer = optimizer

    def numpy(self):
        return _np.int64(int(self))

    @property
    def value(self):
        return int(self)

    @property
    def dtype(self):
        return "int64"

    @property
    def shape(self):
        return ()

    def __int__(self):
        return self._optimizer._get_iterations()

    __index__ = __int__

    def __float__(self):
        return float(int(self))

    def __array__(self, dtype=None, copy=None):
        return _np.asarray(int(self), dtype=dtype or _np.int64)

    def __repr__(self):
        return f"<Iterations value={int(self)!r}>"

    def __format__(self, spec):
        return format(int(self), spec)

    def __bool__(self):
        return bool(int(self))

    def __neg__(self):
        return -int(self)

    def __hash__(self):
        return id(self)


def _binary(name, convert):
    op = getattr(convert, name)

    def method(self, other):
        if isinstance(other, (LearningRate, Iterations)):
            other = convert(other)
        result = op(convert(self), other)
        if result is NotImplemented and convert is int:
            # int + 0.5: as float arithmetic
            return getattr(float, name)(float(self), other)
        return result

    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
              "__rmul__", "__truediv__", "__rtruediv__", "__pow__",
              "__rpow__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__",
              "__ne__"):
    setattr(LearningRate, _name, _binary(_name, float))
    setattr(Iterations, _name, _binary(_name, int))


def _rate(value):
    """A learning rate as a float (a LearningRate, NumPy scalar, ...)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError("learning_rate must be a number, not "
                         f"{value!r}") from None


def _optional(value, what):
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number or None, not "
                         f"{value!r}") from None


class Optimizer:
    """The base of graphgc's optimizers, with Keras's base keywords:
    learning_rate is live once the optimizer is compiled into a model."""

    _kind = None  # the C++ kind's Keras string name
    _default_name = None  # Keras's default `name`, when not _kind

    def __init__(self, learning_rate, *, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None,
                 name=None):
        if sum(a is not None
               for a in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` "
                f"can be set. Received: clipnorm={clipnorm}, "
                f"clipvalue={clipvalue}, global_clipnorm={global_clipnorm}")
        for what, value, default in (
                ("use_ema", use_ema, False),
                ("ema_overwrite_frequency", ema_overwrite_frequency, None),
                ("loss_scale_factor", loss_scale_factor, None),
                ("gradient_accumulation_steps",
                 gradient_accumulation_steps, None)):
            if value != default:
                raise ValueError(f"graphgc's optimizers do not implement "
                                 f"{what}={value!r} (only {default!r})")
        self._schedule = None
        if isinstance(learning_rate, schedules.LearningRateSchedule):
            self._schedule = learning_rate
            learning_rate = learning_rate(0)
        self._learning_rate = _rate(learning_rate)
        self.weight_decay = _optional(weight_decay, "weight_decay")
        self.clipnorm = _optional(clipnorm, "clipnorm")
        self.clipvalue = _optional(clipvalue, "clipvalue")
        self.global_clipnorm = _optional(global_clipnorm, "global_clipnorm")
        self.use_ema = use_ema
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.name = (name if name is not None
                     else self._default_name or self._kind)
        self._model = None  # the C++ model it drives, once compiled

    @property
    def learning_rate(self):
        return LearningRate(self)

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(value, schedules.LearningRateSchedule):
            if self._model is not None:
                raise TypeError("graphgc cannot change a compiled "
                                "optimizer's schedule: compile the model "
                                "again with it")
            self._schedule = value
            self._learning_rate = _rate(value(0))
            return
        if self._schedule is not None:
            raise TypeError(_NOT_SETTABLE)
        rate = _rate(value)
        if self._model is not None:
            self._model.learning_rate = rate  # ValueError when negative
        self._learning_rate = rate

    @property
    def iterations(self):
        """Keras's optimizer.iterations: the steps taken (int() reads it)."""
        return Iterations(self)

    def _get_iterations(self):
        if self._model is not None:
            return int(self._model.iterations)
        return 0

    # Keras 2's spelling, still common in callbacks.
    lr = learning_rate

    def _get_learning_rate(self):
        if self._model is not None:
            return float(self._model.learning_rate)
        if self._schedule is not None:
            return float(self._schedule(0))
        return self._learning_rate

    def _bind(self, model):
        """Makes this the live optimizer of the C++ `model`."""
        self._model = model

    def _options(self):
        """The kind's own options, as make_optimizer reads them."""
        raise NotImplementedError

    def _cpp(self):
        schedule = self._schedule
        if schedule is not None and not isinstance(schedule,
                                                   schedules._Builtin):
            raise TypeError(
                f"graphgc runs the built-in learning-rate schedules only "
                f"({', '.join(sorted(schedules._BY_NAME))}), not "
                f"{type(schedule).__name__}")
        return _graphgc.make_optimizer(
            self._kind,
            {"learning_rate": self._get_learning_rate(), **self._options()},
            self.weight_decay, self.clipnorm, self.clipvalue,
            self.global_clipnorm,
            None if schedule is None else schedule._cpp)


class Adam(Optimizer):
    _kind = "adam"

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = amsgrad

    def _options(self):
        return {"beta_1": float(self.beta_1), "beta_2": float(self.beta_2),
                "epsilon": float(self.epsilon),
                "amsgrad": bool(self.amsgrad)}


class AdamW(Adam):
    """Adam with decoupled weight decay, 0.004 unless given."""

    _kind = "adamw"

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9,
                 beta_2=0.999, epsilon=1e-7, amsgrad=False, **kwargs):
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. "
                             "Received: weight_decay=None")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad,
                         weight_decay=weight_decay, **kwargs)


class SGD(Optimizer):
    _kind = "sgd"
    _default_name = "SGD"

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False,
                 **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum = momentum
        self.nesterov = nesterov

    def _options(self):
        return {"momentum": float(self.momentum),
                "nesterov": bool(self.nesterov)}


class RMSprop(Optimizer):
    """Keras 3's RMSprop: velocity = rho * velocity + (1 - rho) * g^2;
    w -= lr * g / sqrt(velocity + epsilon) (centered: velocity minus the
    squared moving average of g; momentum: through a momentum slot)."""

    _kind = "rmsprop"

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0,
                 epsilon=1e-7, centered=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered

    def _options(self):
        return {"rho": float(self.rho), "momentum": float(self.momentum),
                "epsilon": float(self.epsilon),
                "centered": bool(self.centered)}


class Adagrad(Optimizer):
    _kind = "adagrad"

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1,
                 epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def _options(self):
        return {"initial_accumulator_value":
                float(self.initial_accumulator_value),
                "epsilon": float(self.epsilon)}


class _Betas(Optimizer):
    """Adamax and Nadam: beta_1, beta_2 and epsilon."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def _options(self):
        return {"beta_1": float(self.beta_1), "beta_2": float(self.beta_2),
                "epsilon": float(self.epsilon)}


class Adamax(_Betas):
    _kind = "adamax"


class Nadam(_Betas):
    _kind = "nadam"


class Adadelta(Optimizer):
    _kind = "adadelta"

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7,
                 **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def _options(self):
        return {"rho": float(self.rho), "epsilon": float(self.epsilon)}


class Lion(Optimizer):
    _kind = "lion"

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99,
                 **kwargs):
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError(
                "Argument for `beta_1` must be in the [0, 1] range, "
                "otherwise the optimizer degenerates to SignSGD. "
                f"Received: beta_1={beta_1}.")
        super().__init__(learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2

    def _options(self):
        return {"beta_1": float(self.beta_1), "beta_2": float(self.beta_2)}


_BY_NAME = {"adam": Adam, "adamw": AdamW, "sgd": SGD, "rmsprop": RMSprop,
            "adagrad": Adagrad, "adamax": Adamax, "nadam": Nadam,
            "adadelta": Adadelta, "lion": Lion}


def get(identifier):
    """An Optimizer from a name ("adam", "adamw", "sgd", "rmsprop",
    "adagrad", "adamax", "nadam", "adadelta", "lion") or an Optimizer."""
    return _args.get(identifier, Optimizer, _BY_NAME, "optimizer",
                     ", ".join(f'"{n}"' for n in _BY_NAME) +
                     " and graphgc.optimizers.Adam(...), SGD(...), ...")
