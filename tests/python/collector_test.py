"""graphgc's collector from Python, and Python ownership of models: a
model's nodes live exactly as long as Python references to the model."""

import threading

import numpy as np
import pytest

import graphgc
from conftest import make_model


def live_nodes():
    graphgc.collect()
    return graphgc.gc_stats()["live_nodes"]


def test_dropped_model_is_collected_back_to_baseline(data):
    baseline = live_nodes()
    model = make_model()
    model.fit(*data, verbose=0)
    assert live_nodes() > baseline
    del model
    assert live_nodes() == baseline


def test_model_in_a_list_stays_alive(data):
    baseline = live_nodes()
    kept = [make_model()]
    kept[0].fit(*data, verbose=0)
    held = live_nodes()
    assert held > baseline
    assert kept[0].predict(data[0]).shape == (256, 10)
    assert live_nodes() == held
    kept.clear()
    assert live_nodes() == baseline


def test_model_referenced_from_a_callback_stays_alive(data):
    baseline = live_nodes()
    callback = graphgc.callbacks.Callback()
    model = make_model()
    model.fit(*data, verbose=0, callbacks=[callback])
    del model
    assert live_nodes() > baseline
    assert callback.model.predict(data[0][:2]).shape == (2, 10)
    callback.model = None
    assert live_nodes() == baseline


def test_collect_returns_marked_and_swept():
    stats = graphgc.collect()
    assert sorted(stats) == ["marked", "minor", "pause_ns", "swept"]


def test_gc_stats_has_the_keys_of_gc_stats():
    assert sorted(graphgc.gc_stats()) == sorted([
        "collections", "swept_total", "pause_ns_total", "last_pause_ns",
        "live_nodes", "peak_nodes", "minor_collections"])


def test_leak_report_names_the_owning_model():
    model = make_model(name="leaky")
    assert f"Sequential '{model.name}'" in graphgc.leak_report()


def test_explain_retention_starts_at_the_holding_model():
    model = make_model(name="held")
    chain = graphgc.explain_retention(model.layers[0].name + "/MatMul")
    assert chain[0].startswith(f"Sequential '{model.name}'")
    assert chain[-1] == model.layers[0].name + "/MatMul"


def test_explain_retention_of_unknown_node_is_runtime_error():
    with pytest.raises(RuntimeError, match="no_such_node"):
        graphgc.explain_retention("no_such_node")


def test_set_gc_policy_changes_only_the_fields_given():
    before = graphgc.gc_policy()
    try:
        graphgc.set_gc_policy(automatic=False, min_new_nodes=1000)
        policy = graphgc.gc_policy()
        assert policy["automatic"] is False
        assert policy["min_new_nodes"] == 1000
        assert policy["promote_after"] == before["promote_after"]
    finally:
        graphgc.set_gc_policy(**before)
    assert graphgc.gc_policy() == before


def test_set_gc_policy_refuses_bad_values():
    with pytest.raises(ValueError, match="promote_after"):
        graphgc.set_gc_policy(promote_after=1000)


def test_a_refused_policy_leaves_the_policy_as_it_was():
    before = graphgc.gc_policy()
    with pytest.raises(ValueError):
        graphgc.set_gc_policy(min_new_nodes=5, promote_after=1000)
    assert graphgc.gc_policy() == before


def test_with_automatic_off_only_collect_frees_a_dropped_model(data):
    before = graphgc.gc_policy()
    graphgc.collect()
    baseline = graphgc.gc_stats()["live_nodes"]
    try:
        graphgc.set_gc_policy(automatic=False, min_new_nodes=1)
        dropped = make_model()
        dropped.fit(*data, verbose=0)
        del dropped
        kept = make_model()
        collections = graphgc.gc_stats()["collections"]
        kept.fit(*data, verbose=0)  # its steps would collect if automatic
        assert graphgc.gc_stats()["collections"] == collections
        live_with_both = graphgc.gc_stats()["live_nodes"]
        graphgc.collect()
        assert graphgc.gc_stats()["live_nodes"] < live_with_both
        del kept
        graphgc.collect()
        assert graphgc.gc_stats()["live_nodes"] == baseline
    finally:
        graphgc.set_gc_policy(**before)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_thousand_models_in_a_loop_keep_rss_flat():
    rng = np.random.default_rng(1)
    x = rng.random((64, 10), dtype=np.float32)
    y = rng.integers(0, 10, 64)
    rss = []
    for _ in range(1000):
        model = make_model()
        model.fit(x, y, verbose=0)
        del model
        rss.append(rss_bytes())
    assert rss[-1] / rss[9] <= 1.05, (rss[9], rss[-1])


@pytest.mark.threads
def test_two_threads_fit_with_python_callbacks_while_a_third_collects(data):
    x, y = data
    models = [make_model(), make_model()]
    results, errors = {}, []
    done = threading.Event()

    class CountBatches(graphgc.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.batches = 0

        def on_batch_end(self, batch, logs=None):
            self.batches += 1  # takes the GIL from C++ on the fit's thread

    counters = [CountBatches(), CountBatches()]

    def fit(i):
        try:
            results[i] = models[i].fit(x, y, epochs=5, verbose=0,
                                       callbacks=[counters[i]])
        except Exception as e:  # reported below
            errors.append(e)

    def collect():
        while not done.is_set():
            graphgc.collect(python_gc=False)

    fitters = [threading.Thread(target=fit, args=(i,)) for i in range(2)]
    collector = threading.Thread(target=collect)
    collector.start()
    for t in fitters:
        t.start()
    for t in fitters:
        t.join()
    done.set()
    collector.join()
    assert errors == []
    for i in range(2):
        assert counters[i].batches == 5 * 8
        assert len(results[i].history["loss"]) == 5
        assert np.isfinite(results[i].history["loss"][-1])
