"""Keras's keras.utils helpers graphgc has: the array helpers
to_categorical and normalize, set_random_seed, clear_session (also
graphgc.backend.clear_session), and plot_model and model_to_dot
(graphgc/_model_plot.py; they draw with Graphviz's `dot` program).

The array helpers return NumPy arrays. graphgc has no backend tensors in
Python: input Keras would take as a tensor is read with NumPy.
"""

import random

import numpy as np

from graphgc import _graphgc
from graphgc._model_plot import model_to_dot, plot_model
from graphgc.backend import clear_session

__all__ = ["clear_session", "model_to_dot", "normalize", "plot_model",
           "set_random_seed", "to_categorical"]

# keras.config.epsilon()'s default, the floor of normalize's norm for
# non-NumPy input.
_EPSILON = 1e-7


def to_categorical(x, num_classes=None):
    """Class ids to one-hot rows, as Keras 3's keras.utils.to_categorical.

    x: class ids (anything np.array reads; converted to int64, so floats
    are truncated toward zero). A trailing dimension of size 1 is dropped
    (shape (n, 1) gives (n, num_classes)). num_classes: the number of
    columns; None (or 0) takes max(x) + 1. Returns a float64 array of shape
    x.shape + (num_classes,) with a 1 in each id's column. As in Keras, an
    id of num_classes or more raises IndexError and a negative id counts
    from the last column (NumPy indexing).
    """
    x = np.array(x, dtype="int64")
    shape = x.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    ids = x.reshape(-1)
    if not num_classes:
        num_classes = np.max(ids) + 1
    out = np.zeros((ids.shape[0], num_classes))
    out[np.arange(ids.shape[0]), ids] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """x divided by its `order`-norm along `axis`, as Keras 3's
    keras.utils.normalize. Returns a new NumPy array.

    A NumPy array takes Keras's NumPy path: np.linalg.norm, a zero norm
    divides by 1 (all-zero slices stay zero); float32 stays float32, an
    integer array becomes float64; a 1-D array comes back as one row
    (shape (1, n)), and axis=None divides by np.linalg.norm of the whole
    array, both as Keras does. Anything else (a list, a scalar) takes the
    path Keras gives tensors (keras.ops.normalize), computed with NumPy in
    float32 (or the input's float dtype): x / max(norm, 1e-7), `order` an
    int >= 1, a scalar read as one value, the shape kept.
    """
    if isinstance(x, np.ndarray):
        norm = np.atleast_1d(np.linalg.norm(x, order, axis))
        norm[norm == 0] = 1
        if axis is None:
            axis = -1
        return x / np.expand_dims(norm, axis)
    if not isinstance(order, int) or not order >= 1:
        raise ValueError("Argument `order` must be an int >= 1. Received: "
                         f"order={order}")
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float32)
    if x.ndim == 0:
        x = np.expand_dims(x, 0)
    epsilon = x.dtype.type(_EPSILON)
    if order == 2:
        square_sum = np.sum(np.square(x), axis=axis, keepdims=True)
        return x / np.sqrt(np.maximum(square_sum, epsilon * epsilon))
    norm = np.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / np.maximum(norm, epsilon)


def set_random_seed(seed):
    """Keras 3's keras.utils.set_random_seed: seeds Python's random, NumPy's
    global generator and graphgc's stream of drawn seeds
    (models/random_seed.h). Initialisers and Dropout layers given no seed,
    and fit's shuffling at its default seed=0, take their seeds from that
    stream in the order they ask, so a program that builds and fits the
    same models in the same order gets the same weights and history.

    seed: an int (ValueError otherwise, with Keras's message); NumPy
    refuses one outside [0, 2**32), as under Keras.
    """
    if not isinstance(seed, int):
        raise ValueError("Expected `seed` argument to be an integer. "
                         f"Received: seed={seed} (of type {type(seed)})")
    np.random.seed(seed)  # first: it checks the range
    random.seed(seed)
    _graphgc._set_random_seed(seed)
