"""Keras's losses SparseCategoricalCrossentropy, CategoricalCrossentropy and
MeanSquaredError; compile() also takes their names
("sparse_categorical_crossentropy", "categorical_crossentropy", "mse" or
"mean_squared_error")."""

from graphgc import _args, _graphgc


class Loss:
    def _cpp(self):
        raise NotImplementedError


class SparseCategoricalCrossentropy(Loss):
    def __init__(self, from_logits=False):
        self.from_logits = from_logits

    def _cpp(self):
        return _graphgc.sparse_categorical_crossentropy(bool(self.from_logits))


class CategoricalCrossentropy(Loss):
    def __init__(self, from_logits=False):
        self.from_logits = from_logits

    def _cpp(self):
        return _graphgc.categorical_crossentropy(bool(self.from_logits))


class MeanSquaredError(Loss):
    def _cpp(self):
        return _graphgc.mean_squared_error()


_BY_NAME = {
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "mse": MeanSquaredError,
    "mean_squared_error": MeanSquaredError,
}


def get(identifier):
    """A Loss from a name or a Loss."""
    return _args.get(identifier, Loss, _BY_NAME, "loss",
                       ", ".join(repr(k) for k in _BY_NAME)
                       + " and the graphgc.losses classes")
