"""The seed program in Python: 200 consecutive Keras-style models in one
process, each fit with a TensorBoard callback, with no clear_session().

In TensorFlow's Keras each model's ops pile up in the one global graph, so
every event file is bigger than the last. With graphgc a dropped model's
nodes are collected, so every event file has the same size and the live
graph stays bounded.

    ./bazelw build //python:graphgc
    PYTHONPATH=bazel-bin/python /usr/bin/python3 examples/seed_program.py
"""

import argparse
import glob
import os
import tempfile

import graphgc
from graphgc import _graphgc


def model_fn():
    model = graphgc.Sequential([
        graphgc.layers.Input((10,)),
        graphgc.layers.Dense(64, activation="relu"),
        graphgc.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer=graphgc.optimizers.Adam(),
                  loss=graphgc.losses.SparseCategoricalCrossentropy())
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--logdir", default=None,
                        help="a new or empty directory (default: a new "
                             "temporary one)")
    args = parser.parse_args()
    logdir = args.logdir or tempfile.mkdtemp(prefix="graphgc_seed_py_")
    os.makedirs(logdir, exist_ok=True)
    if os.listdir(logdir):
        parser.error(f"--logdir {logdir} is not empty")

    # The seed program's data: x [1000, 10] uniform in [0, 1), y labels in
    # [0, 10), drawn with std::mt19937(0) exactly as the C++ seed program.
    x, y = _graphgc._bench.seed_data(1000)

    sizes, live = [], []
    print(f"logs in {logdir}")
    print(f"{'model':>5} {'event bytes':>11} {'live nodes':>10} "
          f"{'loss':>8}")
    for i in range(args.models):
        model = model_fn()
        tensorboard = graphgc.callbacks.TensorBoard(
            log_dir=os.path.join(logdir, str(i)), update_freq=600)
        history = model.fit(x, y, verbose=0, callbacks=[tensorboard])
        files = glob.glob(os.path.join(logdir, str(i), "train",
                                       "events.out.tfevents.*"))
        assert len(files) == 1, files
        sizes.append(os.path.getsize(files[0]))
        live.append(graphgc.gc_stats()["live_nodes"])
        if i < 3 or (i + 1) % 50 == 0:
            print(f"{i:>5} {sizes[-1]:>11} {live[-1]:>10} "
                  f"{history.history['loss'][0]:>8.4f}")
    stats = graphgc.gc_stats()
    print(f"event files: {len(sizes)}, sizes {min(sizes)}..{max(sizes)} "
          f"bytes (all equal: {'yes' if min(sizes) == max(sizes) else 'NO'})")
    print(f"live graph nodes after each fit: {min(live)}..{max(live)} "
          f"(peak {stats['peak_nodes']}); collections {stats['collections']}, "
          f"swept {stats['swept_total']} nodes")
    return 0 if min(sizes) == max(sizes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
