"""NumPy's data allocator (NEP 49) for the arrays graphgc reads in place.

fit, evaluate and predict read a C-contiguous float32 (int32, int64 for
labels) array without a copy when its data is 64-byte aligned. By default
`import graphgc` makes NumPy's allocator "graphgc_aligned64", which aligns
every new array so, for the importing thread's context; with the
environment variable GRAPHGC_NUMPY_ALLOCATOR=default at import, NumPy keeps
its own and such arrays are copied instead.

NumPy's allocator is a context variable: another thread starts with NumPy's
own, and calls use_aligned_numpy_allocator() itself to opt in. Arrays keep
the allocator that made them and are freed by it, so switching never
invalidates an array.
"""

import os

from graphgc import _graphgc

ENVIRONMENT_VARIABLE = "GRAPHGC_NUMPY_ALLOCATOR"
_CHOICES = {"aligned64": True, "default": False}


def use_aligned_numpy_allocator(enabled=True):
    """Makes "graphgc_aligned64" NumPy's allocator for the calling context
    (enabled=True), or puts back the very handler it replaced there
    (enabled=False). Returns whether the aligned allocator was in use in
    this context before the call."""
    if not isinstance(enabled, bool):
        raise TypeError(
            f"use_aligned_numpy_allocator: enabled must be a bool, not "
            f"{type(enabled).__name__}")
    return _graphgc._use_aligned_numpy_allocator(enabled)


def _use_allocator_from_environment():
    """At import: the aligned allocator unless GRAPHGC_NUMPY_ALLOCATOR says
    "default"; any other value than those two is refused."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "aligned64")
    if value not in _CHOICES:
        raise ValueError(
            f"{ENVIRONMENT_VARIABLE}={value!r}: expected 'aligned64' (the "
            f"default) or 'default' (NumPy's own allocator)")
    if _CHOICES[value]:
        use_aligned_numpy_allocator(True)
