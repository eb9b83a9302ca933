"""The nested forms of a model of several inputs or outputs, as Keras 3
takes them: inputs and outputs as lists or dicts, compile's loss,
loss_weights and metrics per output, and fit/evaluate/predict data as
lists or dicts keyed by input and output names. Each helper turns one
nested argument into the flat list, in the model's order, that the C++
model's list methods take (models/functional.h)."""

from graphgc import layers as _layers
from graphgc import losses as _losses


def flatten_tensors(value, what):
    """(the KerasTensors of value in order, their dict keys or None).
    A dict is flattened in sorted key order, as Keras's tree.flatten."""
    keys = None
    if isinstance(value, dict):
        keys = sorted(value)
        items = [value[k] for k in keys]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [value]
    for item in items:
        if not isinstance(item, _layers.KerasTensor):
            raise ValueError(f"All `{what}` values must be KerasTensors. "
                             f"Received: {what}={value!r} including invalid "
                             f"value {item!r} of type {type(item)}")
    return items, keys


def _names_index(names, keys):
    """name -> position, for the layer names and the dict keys."""
    index = {name: i for i, name in enumerate(names)}
    for i, key in enumerate(keys or []):
        index.setdefault(key, i)
    return index


def flatten_data(value, names, keys, what, optional=False):
    """value (an array, a list or tuple of arrays, or a dict keyed by input
    or output name) as a list of len(names), in the model's order. With
    `optional`, entries not given are None (an output without a loss)."""
    count = len(names)
    if isinstance(value, dict):
        index = _names_index(names, keys)
        unknown = [k for k in value if k not in index]
        if unknown:
            raise ValueError(f"Unknown entries in {what} dictionary: "
                             f"{unknown}. Only expected the following keys: "
                             f"{list(keys or names)}")
        out = [None] * count
        for k, v in value.items():
            out[index[k]] = v
        missing = [names[i] for i in range(count) if out[i] is None]
        if missing and not optional:
            raise ValueError(f"Missing data for {what} {missing[0]!r}. You "
                             f"passed a data dictionary with keys "
                             f"{list(value)}. Expected the following keys: "
                             f"{list(keys or names)}")
        return out
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(items) != count:
        raise ValueError(f"The model expects {count} {what} array(s), but "
                         f"received {len(items)}: give one per model "
                         f"{what} ({list(names)})")
    return items


def _per_output(value, names, keys, what):
    """A list or dict compile argument as one entry per output (None where
    a dict has no entry)."""
    if isinstance(value, dict):
        index = _names_index(names, keys)
        unknown = [k for k in value if k not in index]
        if unknown:
            raise ValueError(f"In the dict argument `{what}`, key "
                             f"'{unknown[0]}' does not correspond to any "
                             f"model output. Received:\n{what}={value}")
        out = [None] * len(names)
        for k, v in value.items():
            out[index[k]] = v
        return out
    if len(value) != len(names):
        raise ValueError(f"For a model with multiple outputs, when providing "
                         f"the `{what}` argument as a list, it should have "
                         f"as many entries as the model has outputs. "
                         f"Received:\n{what}={value}\nof length "
                         f"{len(value)} whereas the model has {len(names)} "
                         f"outputs.")
    return list(value)


def losses(loss, names, keys):
    """compile's loss as one loss object (or None) per output: one loss for
    every output, a list in output order, or a dict keyed by output name
    (Keras 3 wants every output named in a loss dict)."""
    if isinstance(loss, dict):
        index = _names_index(names, keys)
        found = sorted({index.get(k, -1) for k in loss})
        if found != list(range(len(names))) or len(loss) != len(names):
            raise ValueError(f"Expected keys {list(keys or names)} in loss "
                             f"dict, but found loss.keys()={list(loss)}")
        given = _per_output(loss, names, keys, "loss")
    elif isinstance(loss, (list, tuple)):
        given = _per_output(loss, names, keys, "loss")
    else:
        given = [loss] * len(names)
    out = [None if item is None else _losses.get(item) for item in given]
    if all(item is None for item in out):
        raise ValueError("compile() needs a loss for at least one output")
    return out


def loss_weights(weights, names, keys, loss_count):
    """compile's loss_weights as one float per output (1.0 when absent)."""
    if weights is None:
        return []
    if isinstance(weights, (int, float)) and len(names) == 1:
        return [float(weights)]
    if not isinstance(weights, (list, tuple, dict)):
        raise ValueError("Expected `loss_weights` argument to be a float "
                         "(single output case) or a list, tuple, or dict "
                         "(multiple output case). Received instead: "
                         f"loss_weights={weights} of type {type(weights)}")
    if isinstance(weights, (list, tuple)) and len(weights) != len(names):
        raise ValueError(f"`loss_weights` must match the number of losses, "
                         f"got {loss_count} losses and {len(weights)} "
                         f"weights.")
    given = _per_output(weights, names, keys, "loss_weights")
    return [1.0 if w is None else float(w) for w in given]


def metrics(value, names, keys):
    """compile's metrics as one list of names per output: a list with one
    entry (a name or a list of names) per output, or a dict keyed by output
    name, as Keras 3's CompileMetrics."""
    if not value:
        return [[] for _ in names]
    if not isinstance(value, (list, tuple, dict)):
        raise ValueError("Expected `metrics` argument to be a list, tuple, "
                         f"or dict. Received instead: metrics={value} of "
                         f"type {type(value)}")
    out = []
    for entry in _per_output(value, names, keys, "metrics"):
        entry = [] if entry is None else entry
        entry = [entry] if isinstance(entry, str) else list(entry)
        for m in entry:
            if not isinstance(m, str):
                raise ValueError("metrics must be names such as "
                                 f"\"accuracy\", not {m!r}")
        out.append(entry)
    return out


def ordered_logs(logs, names, trained):
    """evaluate's values in Keras's order: the total loss, each trained
    output's loss, then each output's metrics."""
    keys = ["loss"]
    if len(trained) > 1:
        keys += [f"{names[i]}_loss" for i in trained]
    keys += sorted(k for k in logs if k not in keys)
    return [logs[k] for k in keys]
