"""graphgc from Python, with Keras's API.

Models live on graphgc's one process-wide graph; a model's graph nodes are
held by the Python model object (through its C++ handle), so when the last
Python reference to a model goes, the next safe point (a training step, an
export, or graphgc.collect()) frees its nodes. graphgc.backend.clear_session()
(Keras's) collects at once and restarts automatic names; it never destroys a
live model.

    import graphgc
    model = graphgc.Sequential([
        graphgc.layers.Input((10,)),
        graphgc.layers.Dense(64, activation="relu"),
        graphgc.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=2,
                        callbacks=[graphgc.callbacks.TensorBoard("logs/0")])

or, with the functional API, graphgc.Model(inputs, outputs) from
graphgc.Input() tensors and layer calls on them.
"""

from graphgc import (backend, callbacks, config, layers, losses, metrics,
                     models, numpy_allocator, optimizers, utils)
from graphgc.collector import (collect, explain_retention, gc_policy,
                               gc_stats, leak_report, set_gc_policy)
from graphgc.layers import Input
from graphgc.models import History, Model, Sequential, load_model
from graphgc.numpy_allocator import use_aligned_numpy_allocator

__all__ = [
    "History", "Input", "Model", "Sequential", "backend", "callbacks",
    "collect", "config", "explain_retention", "gc_policy", "gc_stats",
    "layers", "leak_report", "load_model", "losses", "metrics", "models",
    "numpy_allocator", "optimizers", "set_gc_policy",
    "use_aligned_numpy_allocator", "utils",
]

# Arrays made from here on (in this thread's context) are 64-byte aligned,
# so fit, evaluate and predict read them without a copy; see
# graphgc.numpy_allocator for GRAPHGC_NUMPY_ALLOCATOR and other threads.
numpy_allocator._use_allocator_from_environment()
