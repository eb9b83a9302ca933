"""The collector of graphgc's default graph, from Python."""

import gc as _python_gc

from graphgc import _graphgc


def collect(python_gc=True):
    """Collects the default graph now; returns {"marked", "swept",
    "pause_ns", "minor"}.

    With python_gc (the default) Python's own cycle collector runs first,
    so a model kept only by a reference cycle (a callback holding its model
    that the model's fit left in a cycle, say) is dropped before graphgc
    looks for unreachable nodes.
    """
    if python_gc:
        _python_gc.collect()
    return _graphgc.collect()


def gc_stats():
    """GcStats of the default graph as a dict: collections, swept_total,
    pause_ns_total, last_pause_ns, live_nodes, peak_nodes,
    minor_collections."""
    return _graphgc.gc_stats()


def leak_report():
    """Live nodes grouped by the owner that holds them, largest first, one
    line each: "Sequential 'sequential_3': 42 nodes, 9120 bytes"."""
    return _graphgc.leak_report()


def explain_retention(name):
    """Who keeps node `name` alive: the holding root's owner label, then the
    chain of node names down to it. An unknown name raises RuntimeError
    (NOT_FOUND)."""
    return _graphgc.explain_retention(str(name))


def gc_policy():
    """The default graph's GcPolicy as a dict."""
    return _graphgc.gc_policy()


def set_gc_policy(automatic=None, growth_ratio=None, min_new_nodes=None,
                  save_garbage=None, promote_after=None):
    """Changes the fields given (the others keep their value), e.g.
    set_gc_policy(automatic=False) to collect only on collect()."""
    policy = _graphgc.gc_policy()
    given = {"automatic": automatic, "growth_ratio": growth_ratio,
             "min_new_nodes": min_new_nodes, "save_garbage": save_garbage,
             "promote_after": promote_after}
    for key, value in given.items():
        if value is not None:
            policy[key] = value
    _graphgc.set_gc_policy(**policy)
