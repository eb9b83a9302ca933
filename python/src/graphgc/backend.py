"""Keras's keras.backend functions graphgc has: clear_session.

graphgc has one process-wide graph instead of a backend session: a model's
nodes live while its Python object does, and a collection frees the rest.
clear_session is that collection, asked for now.
"""

from graphgc import collector as _collector
from graphgc import layers as _layers

__all__ = ["clear_session"]


def clear_session(free_memory=True):
    """Keras 3's clear_session: frees what dropped models left and restarts
    automatic names, without touching live models.

    Runs a full collection of the default graph (with free_memory, Python's
    cycle collector first, as Keras's gc.collect()), so every model and
    layer no longer referenced is swept and its names ("sequential_1",
    "dense_3") are free again; the next layers and models take the first
    free names, "dense" and "sequential" when nothing live holds them, as
    after Keras's clear_session. Symbolic tensors are named from
    "keras_tensor" again. A model still referenced keeps its nodes, weights,
    optimizer state and names, and trains and predicts as before. Names are
    graph scopes and stay unique in the process: where a live model holds
    "dense", a new Dense is "dense_1" (Keras would name it "dense" again),
    so every model saves under its own names. Returns None.
    """
    _layers._reset_tensor_names()
    _collector.collect(python_gc=bool(free_memory))
