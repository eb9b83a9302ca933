"""Keras 3's learning-rate schedules (keras.optimizers.schedules), also
reachable as graphgc.optimizers.schedules: ExponentialDecay,
PiecewiseConstantDecay, InverseTimeDecay, PolynomialDecay, CosineDecay and
CosineDecayRestarts, with Keras's arguments, defaults, get_config(),
from_config() and __call__(step). Pass one as any optimizer's
learning_rate: fit sets each step's rate from it in C++
(models/learning_rate_schedule.h) at the optimizer's step count
(optimizer.iterations). serialize() and deserialize() are Keras's."""

import numpy as _np

from graphgc import _graphgc


class LearningRateSchedule:
    """The base class of schedules. graphgc's optimizers run the built-in
    subclasses below in C++; an optimizer given a schedule of your own
    (or a built-in one whose __call__ you override) refuses it."""

    def __call__(self, step):
        raise NotImplementedError(
            f"Learning rate schedule '{self.__class__.__name__}' "
            "must override `__call__(self, step)`.")

    def get_config(self):
        raise NotImplementedError(
            f"Learning rate schedule '{self.__class__.__name__}' "
            "must override `get_config()` in order to be serializable.")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class _Builtin(LearningRateSchedule):
    """A schedule computed by graphgc's C++ (self._cpp)."""

    _config_keys = ()

    def _init(self, **config):
        """Keeps the arguments as attributes, as Keras's, and checks them."""
        self.__dict__.update(config)
        # The built-in class (a subclass of one computes as it does).
        name = next(c.__name__ for c in type(self).__mro__
                    if c.__name__ in _BY_NAME)
        self._cpp = _graphgc.make_schedule(name, self.get_config())

    def __call__(self, step):
        return _np.float32(self._cpp.learning_rate_at(int(step)))

    def get_config(self):
        return {key: getattr(self, key) for key in self._config_keys}


class _RateDecay(_Builtin):
    """A decay of initial_learning_rate by decay_rate over decay_steps
    (ExponentialDecay, InverseTimeDecay: the same arguments)."""

    _config_keys = ("initial_learning_rate", "decay_steps", "decay_rate",
                    "staircase", "name")

    def __init__(self, initial_learning_rate, decay_steps, decay_rate,
                 staircase=False, name=None):
        self._init(initial_learning_rate=initial_learning_rate,
                   decay_steps=decay_steps, decay_rate=decay_rate,
                   staircase=staircase,
                   name=self._default_name if name is None else name)


class ExponentialDecay(_RateDecay):
    """initial_learning_rate * decay_rate ^ (step / decay_steps), the
    exponent floored with staircase."""

    _default_name = "ExponentialDecay"


class PiecewiseConstantDecay(_Builtin):
    """values[0] while step <= boundaries[0], values[i] while
    boundaries[i-1] < step <= boundaries[i], values[-1] after."""

    _config_keys = ("boundaries", "values", "name")

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length "
                f"of values. Received: boundaries={boundaries} of length "
                f"{len(boundaries)}, and values={values} of length "
                f"{len(values)}.")
        self._init(boundaries=boundaries, values=values, name=name)


class InverseTimeDecay(_RateDecay):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps), the
    quotient floored with staircase."""

    _default_name = "InverseTimeDecay"


class PolynomialDecay(_Builtin):
    """(initial - end) * (1 - step / decay_steps) ^ power + end, the step
    capped at decay_steps (cycle: over the next multiple of decay_steps)."""

    _config_keys = ("initial_learning_rate", "decay_steps",
                    "end_learning_rate", "power", "cycle", "name")

    def __init__(self, initial_learning_rate, decay_steps,
                 end_learning_rate=0.0001, power=1.0, cycle=False,
                 name="PolynomialDecay"):
        self._init(initial_learning_rate=initial_learning_rate,
                   decay_steps=decay_steps,
                   end_learning_rate=end_learning_rate, power=power,
                   cycle=cycle, name=name)


class CosineDecay(_Builtin):
    """A cosine decay from initial_learning_rate (or, after a linear warmup
    of warmup_steps, from warmup_target) to alpha times it over
    decay_steps."""

    _config_keys = ("initial_learning_rate", "decay_steps", "alpha", "name",
                    "warmup_target", "warmup_steps")

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0,
                 name="CosineDecay", warmup_target=None, warmup_steps=0):
        self._init(initial_learning_rate=initial_learning_rate,
                   decay_steps=decay_steps, alpha=alpha, name=name,
                   warmup_steps=warmup_steps, warmup_target=warmup_target)


class CosineDecayRestarts(_Builtin):
    """The cosine decay restarted after first_decay_steps, each period t_mul
    times longer and m_mul times higher (SGDR)."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0,
                 m_mul=1.0, alpha=0.0, name="SGDRDecay"):
        self._init(initial_learning_rate=initial_learning_rate,
                   first_decay_steps=first_decay_steps, _t_mul=t_mul,
                   _m_mul=m_mul, alpha=alpha, name=name)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps,
                "t_mul": self._t_mul, "m_mul": self._m_mul,
                "alpha": self.alpha, "name": self.name}


_BY_NAME = {cls.__name__: cls for cls in (
    ExponentialDecay, PiecewiseConstantDecay, InverseTimeDecay,
    PolynomialDecay, CosineDecay, CosineDecayRestarts)}


def serialize(learning_rate_schedule):
    """Keras's serialised schedule: {"module": "keras.optimizers.schedules",
    "class_name", "config", "registered_name": None}."""
    return {"module": "keras.optimizers.schedules",
            "class_name": type(learning_rate_schedule).__name__,
            "config": learning_rate_schedule.get_config(),
            "registered_name": None}


def deserialize(config, custom_objects=None):
    """The schedule a serialised one ({"class_name", "config"}) describes;
    custom_objects maps other class names to classes."""
    name = config["class_name"]
    cls = dict(custom_objects or {}).get(name) or _BY_NAME.get(name)
    if cls is None:
        raise ValueError(f"Could not locate class '{name}'. Known "
                         f"schedules: {', '.join(sorted(_BY_NAME))}")
    return cls.from_config(dict(config.get("config", {})))
