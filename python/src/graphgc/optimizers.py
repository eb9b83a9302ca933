"""Keras's optimizers Adam and SGD (with its defaults); compile() also
takes their names, "adam" and "sgd"."""

from graphgc import _args, _graphgc


class Optimizer:
    def _cpp(self):
        raise NotImplementedError


class Adam(Optimizer):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7):
        self.learning_rate = learning_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def _cpp(self):
        return _graphgc.adam(float(self.learning_rate), float(self.beta_1),
                             float(self.beta_2), float(self.epsilon))


class SGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False):
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.nesterov = nesterov

    def _cpp(self):
        return _graphgc.sgd(float(self.learning_rate), float(self.momentum),
                            bool(self.nesterov))


_BY_NAME = {"adam": Adam, "sgd": SGD}


def get(identifier):
    """An Optimizer from a name ("adam", "sgd") or an Optimizer."""
    return _args.get(identifier, Optimizer, _BY_NAME, "optimizer",
                       "\"adam\", \"sgd\", graphgc.optimizers.Adam(...) "
                       "and graphgc.optimizers.SGD(...)")
