"""Process-wide settings, as tf.config's.

The intra-op thread count is how many threads each op of a model may split
its work across. By default it is every core this process may use (its CPU
affinity, capped by its cgroup's CPU quota), as TensorFlow's and PyTorch's
defaults are; small ops run on the calling thread whatever the count. A
change applies to the models created afterwards: a model keeps the count it
was created with.

    graphgc.config.set_intra_op_threads(1)   # new models: one thread
    graphgc.config.get_intra_op_threads()    # 1
    graphgc.config.set_intra_op_threads(0)   # back to every core

tf.config.threading's spelling works too:
graphgc.config.threading.set_intra_op_parallelism_threads(n) and
get_intra_op_parallelism_threads(), which, as TensorFlow's, answers 0 while
the count is automatic.
"""

import operator as _operator
import types as _types

from graphgc import _graphgc


def _thread_count(n):
    if isinstance(n, bool):
        raise TypeError("the thread count must be an int, got bool")
    try:
        return _operator.index(n)
    except TypeError:
        raise TypeError("the thread count must be an int, got "
                        f"{type(n).__name__}") from None


def set_intra_op_threads(n):
    """Sets the intra-op threads of the models created from now on.

    n >= 1 is that many threads; 0 restores the automatic count (every core
    this process may use). ValueError for a negative count or one above
    1024, leaving the count as it was.
    """
    _graphgc._set_intra_op_threads(_thread_count(n))


def get_intra_op_threads():
    """The intra-op threads a model created now gets (never 0)."""
    return _graphgc._intra_op_threads()


def _set_intra_op_parallelism_threads(num_threads):
    """tf.config.threading.set_intra_op_parallelism_threads: 0 lets graphgc
    choose (every core this process may use)."""
    set_intra_op_threads(num_threads)


def _get_intra_op_parallelism_threads():
    """tf.config.threading.get_intra_op_parallelism_threads: the count set,
    0 while graphgc chooses."""
    return _graphgc._intra_op_threads_setting()


threading = _types.SimpleNamespace(
    set_intra_op_parallelism_threads=_set_intra_op_parallelism_threads,
    get_intra_op_parallelism_threads=_get_intra_op_parallelism_threads,
)

__all__ = ["get_intra_op_threads", "set_intra_op_threads", "threading"]
