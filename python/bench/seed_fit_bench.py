"""The seed fit from Python against the same fit from C++, in one process,
and against PyTorch's same training loop where `import torch` works.

Each round fits one new seed model (Input 10, Dense 64 relu, Dense 10
softmax, Adam, sparse categorical cross-entropy; one epoch over the seed
program's 1,000 samples, batch 32, shuffled, verbose 0) with a TensorBoard
callback, three ways in turn, all on the same intra-op thread count
(--threads, default 1; 0 is graphgc's automatic count, every usable core):
  python  graphgc.Sequential.fit, timed around the Python call (argument
          conversion, the binding and the GIL release included);
  c++     seed::Model and Sequential::Fit called from C++ inside the same
          module (_graphgc._bench.seed_fit_cpp), timed around Fit;
  torch   torch.nn.Sequential(Linear, ReLU, Linear), Adam (eps 1e-7),
          CrossEntropyLoss, the same shuffled batches of 32, the same
          thread count (torch.set_num_threads), no TensorBoard writer
          (it needs the tensorboard package).
Building and compiling the models is not timed. Prints the median and the
best of the rounds in microseconds per sample, and the python/c++ and
torch/c++ ratios of both (on a busy machine the best is the steadier).

    ./bazelw build //python:graphgc
    PYTHONPATH=bazel-bin/python /usr/bin/python3 python/bench/seed_fit_bench.py
"""

import argparse
import statistics
import tempfile
import time

import graphgc
from graphgc import _graphgc


def python_fit(x, y, logdir):
    model = graphgc.Sequential([
        graphgc.layers.Input((10,)),
        graphgc.layers.Dense(64, activation="relu"),
        graphgc.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    tensorboard = graphgc.callbacks.TensorBoard(log_dir=logdir,
                                                update_freq=600)
    start = time.perf_counter()
    model.fit(x, y, epochs=1, batch_size=32, verbose=0,
              callbacks=[tensorboard])
    return time.perf_counter() - start


def torch_fit_factory(x, y, threads):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    xt = torch.from_numpy(x)
    yt = torch.from_numpy(y.astype("int64"))

    def fit(_logdir):
        model = torch.nn.Sequential(torch.nn.Linear(10, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 10))
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
        loss_fn = torch.nn.CrossEntropyLoss()
        start = time.perf_counter()
        order = torch.randperm(len(xt))
        for i in range(0, len(xt), 32):
            batch = order[i:i + 32]
            optimizer.zero_grad()
            loss = loss_fn(model(xt[batch]), yt[batch])
            loss.backward()
            optimizer.step()
        return time.perf_counter() - start

    fit.version = torch.__version__
    return fit


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    x, y = _graphgc._bench.seed_data(args.samples)
    logroot = tempfile.mkdtemp(prefix="graphgc_bench_")
    runners = {
        "python": lambda d: python_fit(x, y, d),
        "c++": lambda d: _graphgc._bench.seed_fit_cpp(d, args.samples),
    }
    graphgc.config.set_intra_op_threads(args.threads)
    # The count graphgc resolved (0 asks for every usable core).
    torch_fit = torch_fit_factory(x, y,
                                  graphgc.config.get_intra_op_threads())
    if torch_fit is not None:
        runners["torch"] = torch_fit
    times = {name: [] for name in runners}
    for name, run in runners.items():  # one warm-up round each
        run(f"{logroot}/warmup_{name}")
    for r in range(args.rounds):
        for name, run in runners.items():
            times[name].append(run(f"{logroot}/{r}_{name}"))
    us = {name: [t / args.samples * 1e6 for t in ts]
          for name, ts in times.items()}
    print(f"seed fit, {args.samples} samples, {args.rounds} rounds "
          f"(logs in {logroot})")
    print(f"{'':14} {'median us/sample':>17} {'best us/sample':>15}")
    for name, values in us.items():
        label = name if name != "torch" else f"torch {torch_fit.version}"
        print(f"{label:14} {statistics.median(values):17.3f} "
              f"{min(values):15.3f}")
    for label, stat in (("median", statistics.median), ("best", min)):
        cpp = stat(us["c++"])
        line = (f"{label:>6}: python / c++ "
                f"{stat(us['python']) / cpp:.3f}x (target <= 1.2x)")
        if "torch" in us:
            line += f", torch / c++ {stat(us['torch']) / cpp:.2f}x"
        print(line)
    if "torch" not in us:
        print("torch: not installed (python3-torch), not measured")


if __name__ == "__main__":
    main()
