"""NumPy's allocator for graphgc's in-place reads
(python/src/graphgc/numpy_allocator.py, python/ext/numpy_allocator.h)."""

import contextvars
import ctypes
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from numpy.core.multiarray import get_handler_name

import graphgc
from graphgc import _graphgc

ALIGNED = "graphgc_aligned64"
NUMPYS = "default_allocator"
# Kept for the process: capsules made here point at these bytes.
CAPSULE_NAME = b"mem_handler"


@pytest.fixture(autouse=True)
def aligned_again_afterwards():
    yield
    graphgc.use_aligned_numpy_allocator(True)


def in_a_new_thread(fn):
    out, errors = [], []

    def run():
        try:
            out.append(fn())
        except BaseException as e:  # re-raised on the test's thread
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return out[0]


def numpys_context_variable():
    """NumPy's own ContextVar of the current handler (NEP 49)."""
    ctx = contextvars.Context()
    ctx.run(graphgc.use_aligned_numpy_allocator, True)
    [var] = [v for v in ctx if v.name == "current_allocator"]
    return var


def test_disabling_puts_numpys_allocator_back_and_says_it_was_on():
    assert graphgc.use_aligned_numpy_allocator(False) is True
    assert get_handler_name() == NUMPYS


def test_enabling_again_says_it_was_off():
    graphgc.use_aligned_numpy_allocator(False)
    assert graphgc.use_aligned_numpy_allocator(True) is False
    assert get_handler_name() == ALIGNED


def test_asking_for_the_state_in_place_changes_nothing():
    assert graphgc.use_aligned_numpy_allocator(True) is True
    assert graphgc.use_aligned_numpy_allocator(True) is True
    assert get_handler_name() == ALIGNED


def another_handler_capsule(var):
    """A new capsule, distinct from every other, over NumPy's own handler
    struct: a handler NumPy allocates with that is neither NumPy's default
    capsule nor graphgc's."""
    numpys = contextvars.Context().run(var.get)
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                  ctypes.c_void_p]
    handler = api.PyCapsule_GetPointer(numpys, CAPSULE_NAME)
    return api.PyCapsule_New(handler, CAPSULE_NAME, None)


def test_disabling_puts_back_the_very_handler_it_replaced():
    var = numpys_context_variable()
    foreign = another_handler_capsule(var)

    def set_enable_disable():
        var.set(foreign)
        assert get_handler_name() == NUMPYS
        assert graphgc.use_aligned_numpy_allocator(True) is False
        assert get_handler_name() == ALIGNED
        assert graphgc.use_aligned_numpy_allocator(False) is True
        return var.get()

    assert contextvars.Context().run(set_enable_disable) is foreign


def test_a_non_bool_is_refused():
    with pytest.raises(TypeError, match="enabled must be a bool, not str"):
        graphgc.use_aligned_numpy_allocator("no")
    assert get_handler_name() == ALIGNED


def test_arrays_keep_the_allocator_that_made_them_across_a_switch():
    aligned = np.arange(1000, dtype=np.float64)
    graphgc.use_aligned_numpy_allocator(False)
    numpys = np.arange(1000, dtype=np.float64)
    graphgc.use_aligned_numpy_allocator(True)
    assert get_handler_name(aligned) == ALIGNED
    assert get_handler_name(numpys) == NUMPYS
    assert aligned.sum() == numpys.sum() == 499500


def test_each_array_is_freed_by_the_allocator_that_made_it():
    aligned = [np.ones(1000) for _ in range(10)]
    graphgc.use_aligned_numpy_allocator(False)
    numpys = [np.ones(1000) for _ in range(10)]
    _, frees_before = _graphgc._aligned_allocator_counts_for_testing()
    del aligned
    _, frees_after_aligned = _graphgc._aligned_allocator_counts_for_testing()
    del numpys
    _, frees_after_numpys = _graphgc._aligned_allocator_counts_for_testing()
    assert frees_after_aligned - frees_before == 10
    assert frees_after_numpys == frees_after_aligned


def test_arrays_under_numpys_allocator_are_not_counted_as_aligned():
    graphgc.use_aligned_numpy_allocator(False)
    before = _graphgc._aligned_allocator_counts_for_testing()
    x = np.ones(1000)
    assert _graphgc._aligned_allocator_counts_for_testing() == before
    del x


@pytest.mark.threads
def test_a_new_thread_starts_with_numpys_allocator():
    assert in_a_new_thread(get_handler_name) == NUMPYS


@pytest.mark.threads
def test_a_thread_that_opts_in_makes_arrays_that_are_lent():
    def opt_in_and_lend():
        was_on = graphgc.use_aligned_numpy_allocator()
        x = np.ones((256, 10), np.float32)
        address, lent = _graphgc._features_tensor_for_testing(x)
        return was_on, get_handler_name(x), lent, address == x.ctypes.data

    assert in_a_new_thread(opt_in_and_lend) == (False, ALIGNED, True, True)


@pytest.mark.threads
def test_disabling_in_another_thread_leaves_this_one_aligned():
    def opt_in_then_out():
        graphgc.use_aligned_numpy_allocator(True)
        return graphgc.use_aligned_numpy_allocator(False), get_handler_name()

    assert in_a_new_thread(opt_in_then_out) == (True, NUMPYS)
    assert get_handler_name() == ALIGNED


def import_graphgc_with(value):
    env = dict(os.environ, GRAPHGC_NUMPY_ALLOCATOR=value)
    return subprocess.run(
        [sys.executable, "-c",
         "import graphgc; from numpy.core.multiarray import "
         "get_handler_name; print(get_handler_name())"],
        env=env, capture_output=True, text=True, timeout=60)


def test_environment_default_keeps_numpys_allocator_at_import():
    run = import_graphgc_with("default")
    assert (run.returncode, run.stdout.strip()) == (0, NUMPYS), run.stderr


def test_environment_aligned64_is_the_import_default():
    run = import_graphgc_with("aligned64")
    assert (run.returncode, run.stdout.strip()) == (0, ALIGNED), run.stderr


def test_an_unknown_environment_value_fails_the_import_by_name():
    run = import_graphgc_with("huge")
    assert run.returncode != 0
    assert "GRAPHGC_NUMPY_ALLOCATOR='huge': expected 'aligned64'" in run.stderr
