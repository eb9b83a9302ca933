"""Keras's keras.utils array helpers: to_categorical and normalize.

Both take and return NumPy arrays, as Keras 3 does for NumPy input.
graphgc has no backend tensors in Python, so any other input (a list, a
scalar) is read with NumPy first and takes the same path.
"""

import numpy as np

__all__ = ["normalize", "to_categorical"]


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
    """x divided by its `order`-norm along `axis` (np.linalg.norm), as
    Keras 3's keras.utils.normalize for NumPy input: a zero norm divides by
    1, so all-zero slices stay zero. Returns a new array; a float32 array
    stays float32, an integer one becomes float64. axis=None takes
    np.linalg.norm's norm of the whole array (for a matrix and order=2, its
    largest singular value), as Keras does.
    """
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    if axis is None:
        axis = -1
    return x / np.expand_dims(norm, axis)
