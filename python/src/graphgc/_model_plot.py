"""keras.utils.model_to_dot and plot_model for graphgc's models: one node
per layer, labelled as Keras 3's (an HTML-like table: the layer's name and
class, its activation, input and output shapes, dtype, trainability), and
an edge from each layer to each layer that reads its output.

A functional model's layers and calls are read from its Keras config
(get_config: each layer's inbound_nodes, the tensors each call reads with
their shapes), which a loaded model has as well as one built in Python;
a Sequential's layers follow one another, their shapes found by calling
them on a symbolic input (a shape check that changes no layer). The DOT
text and the `dot` runs are graphgc/_dot.py's.
"""

import json
import os
import sys

from graphgc import _dot, _graphgc

_NOT_BUILT = ("This model has not yet been built. Build the model first by "
              "calling `build()` or by calling the model on a batch of data.")


def _check_model(model):
    from graphgc import models  # graphgc.models imports graphgc.utils
    if not isinstance(model, models.Model):
        raise ValueError("model_to_dot and plot_model take a graphgc model "
                         "(graphgc.Sequential or graphgc.Model), not "
                         f"{type(model).__name__}")
    if model._defers_build():
        raise ValueError(_NOT_BUILT)
    return isinstance(model, models.Sequential)


def _shape_text(shapes):
    """Keras's label text for a call's shapes: one tuple, or a list of
    them; "?" when unknown."""
    if not shapes or any(s is None for s in shapes):
        return "?"
    return f"{shapes[0]}" if len(shapes) == 1 else f"{list(shapes)}"


def _batch_shape(dims):
    return tuple(None if d is None else int(d) for d in dims)


class _LayerInfo:
    """What a node's label shows of one layer."""

    def __init__(self, name, entry):
        self.name = name
        self.class_name = entry.get("class_name", "?")
        config = entry.get("config", {})
        self.activation = config.get("activation")
        self.trainable = config.get("trainable", True)
        # The kinds with weights are those with initializers (Dense,
        # Conv2D, BatchNormalization, Embedding, ...).
        self.has_weights = any(key.endswith("_initializer") for key in config)
        self.inputs = []   # the first call's input shapes
        self.outputs = []  # its output shapes


def _tensors(value):
    """The __keras_tensor__ configs in a call's nested arguments."""
    if isinstance(value, dict):
        if value.get("class_name") == "__keras_tensor__":
            return [value.get("config", {})]
        return [t for v in value.values() for t in _tensors(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _functional_graph(model, config):
    """(layers, edges) of a functional model from its config: _LayerInfo
    in config order and (source name, destination name) pairs in Keras's
    order (each layer's calls, each call's inputs)."""
    infos, produced, edges = {}, {}, []
    for entry in config.get("layers", []):
        name = entry.get("name") or entry.get("config", {}).get("name", "")
        info = _LayerInfo(name, entry)
        infos[name] = info
        if info.class_name == "InputLayer":
            shape = entry.get("config", {}).get("batch_shape")
            if shape is not None:
                produced[(name, 0, 0)] = _batch_shape(shape)
        for call, node in enumerate(entry.get("inbound_nodes", [])):
            tensors = _tensors(node.get("args", [])) + _tensors(
                node.get("kwargs", {}))
            for tensor in tensors:
                history = tensor.get("keras_history", [None, 0, 0])
                source = history[0]
                shape = tensor.get("shape")
                if shape is not None:
                    produced[tuple(history)] = _batch_shape(shape)
                edges.append((source, name))
                if call == 0:
                    info.inputs.append(produced.get(tuple(history)))
    outputs = config.get("output_layers", [])
    if outputs and isinstance(outputs[0], str):
        outputs = [outputs]
    for history, tensor in zip(outputs, model.outputs):
        produced[tuple(history)] = tuple(tensor.shape)
    for name, info in infos.items():
        shape = produced.get((name, 0, 0))
        info.outputs = [shape] if shape is not None else []
    return list(infos.values()), edges


def _sequential_graph(model, config):
    """(layers, edges) of a Sequential: its layers after the Input, as
    Keras's model.layers, each read by the next."""
    entries = {entry.get("config", {}).get("name"): entry
               for entry in config.get("layers", [])}
    infos = [_LayerInfo(layer.name, entries.get(layer.name, {
        "class_name": type(layer).__name__})) for layer in model.layers]
    first = model._layers[0]
    shape = (entries.get(first.name, {}).get("config", {})
             .get("batch_shape"))
    if shape is not None:
        # A symbolic call checks shapes only: no layer or model changes.
        shape = _batch_shape(shape)
        tensor = _graphgc.input(list(shape[1:]), "plot_model_input")
        for info, layer in zip(infos, model.layers):
            info.inputs = [shape]
            tensor = _graphgc.call_layer(layer._layer, tensor)
            shape = (None, *tensor.shape)
            info.outputs = [shape]
    edges = [(a.name, b.name) for a, b in zip(infos, infos[1:])]
    return infos, edges


def _cell(text):
    return f'<td bgcolor="white"><font point-size="14">{text}</font></td>'


def _label(info, show_layer_names, show_layer_activations, show_dtype,
           show_shapes, show_trainable):
    """Keras 3's node label: a table of the layer's name and class, then
    its activation, then shapes, dtype and trainability side by side."""
    esc = _dot.html_text
    colspan = max(1, int(show_dtype) + int(show_trainable)
                  + (2 if show_shapes else 0))
    title = (f"<b>{esc(info.name)}</b> ({esc(info.class_name)})"
             if show_layer_names else f"<b>{esc(info.class_name)}</b>")
    rows = [f'<tr><td colspan="{colspan}" bgcolor="black"><font '
            f'point-size="16" color="white">{title}</font></td></tr>']
    if show_layer_activations and info.activation is not None:
        rows.append(f'<tr><td bgcolor="white" colspan="{colspan}"><font '
                    f'point-size="14">Activation: <b>{esc(info.activation)}'
                    "</b></font></td></tr>")
    cols = []
    if show_shapes:
        if info.class_name != "InputLayer":
            cols.append(_cell("Input shape: "
                              f"<b>{esc(_shape_text(info.inputs))}</b>"))
        cols.append(_cell("Output shape: "
                          f"<b>{esc(_shape_text(info.outputs))}</b>"))
    if show_dtype:
        dtype = "float32" if info.outputs else "?"
        cols.append(_cell(f"Output dtype: <b>{dtype}</b>"))
    if show_trainable and info.has_weights:
        colour, text = (("forestgreen", "Trainable") if info.trainable
                        else ("firebrick", "Non-trainable"))
        cols.append(f'<td bgcolor="{colour}"><font point-size="14" '
                    f'color="white"><b>{text}</b></font></td>')
    if cols:
        rows.append(f"<tr>{''.join(cols)}</tr>")
    return _dot.HtmlLabel('<table border="0" cellborder="1" bgcolor="black" '
                          f'cellpadding="10">{"".join(rows)}</table>')


def _check_kwargs(kwargs):
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")


def model_to_dot(model, show_shapes=False, show_dtype=False,
                 show_layer_names=True, rankdir="TB", expand_nested=False,
                 dpi=200, subgraph=False, show_layer_activations=False,
                 show_trainable=False, splines="ortho", **kwargs):
    """Keras 3's keras.utils.model_to_dot: the model as a graph of its
    layers, a graphgc.utils.Dot (graphgc's own class, not a pydot.Dot:
    to_string(), create(prog, format) and write(path, format=...)).

    One node per layer (a Sequential's Input is not drawn, as in Keras),
    an edge from each layer to each that reads its output, once per pair.
    expand_nested has nothing to expand (a graphgc model holds no models).
    Writing the DOT text needs no Graphviz; create and write run `dot`."""
    sequential = _check_model(model)
    del expand_nested
    if subgraph:
        dot = _dot.Dot(model.name, subgraph=True)
        dot.set("style", "dashed")
        dot.set("label", model.name)
        dot.set("labeljust", "l")
    else:
        dot = _dot.Dot()
        dot.set("rankdir", rankdir)
        dot.set("concentrate", True)
        dot.set("dpi", dpi)
        dot.set("splines", splines)
        dot.set_node_defaults(shape="record")
    _check_kwargs(kwargs)
    config = json.loads(_graphgc.model_to_json(model._build()))["config"]
    if sequential:
        infos, edges = _sequential_graph(model, config)
    else:
        infos, edges = _functional_graph(model, config)
    ids = {}
    for i, info in enumerate(infos):
        ids[info.name] = f"layer_{i}"
        dot.add_node(ids[info.name], label=_label(
            info, show_layer_names, show_layer_activations, show_dtype,
            show_shapes, show_trainable), fontname="Helvetica", border="0",
            margin="0")
    for source, destination in edges:
        if source in ids and destination in ids:
            dot.add_edge(ids[source], ids[destination], penwidth="2")
    return dot


def plot_model(model, to_file="model.png", show_shapes=False,
               show_dtype=False, show_layer_names=False, rankdir="TB",
               expand_nested=False, dpi=200, show_layer_activations=False,
               show_trainable=False, splines="ortho", **kwargs):
    """Keras 3's keras.utils.plot_model: draws model_to_dot's graph with
    Graphviz's `dot` into to_file, in the format its extension names
    ("png" without one; any format `dot -T` takes; an unknown one is
    `dot`'s error, a GraphvizError, which is also pydot's AssertionError).
    Returns an IPython.display.Image of the file when IPython is
    importable (not for ".pdf"), else None. Without `dot` on PATH:
    ImportError (in a notebook, the message is printed instead)."""
    _check_model(model)
    try:
        _dot.find_dot("`plot_model`")
    except ImportError as e:
        if "IPython.core.magics.namespace" in sys.modules:
            print(e)
            return None
        raise
    _check_kwargs(kwargs)
    dot = model_to_dot(
        model, show_shapes=show_shapes, show_dtype=show_dtype,
        show_layer_names=show_layer_names, rankdir=rankdir,
        expand_nested=expand_nested, dpi=dpi,
        show_layer_activations=show_layer_activations,
        show_trainable=show_trainable, splines=splines)
    to_file = str(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    dot.write(to_file, format=extension)
    if extension != "pdf":
        try:
            from IPython import display
        except ImportError:
            return None
        return display.Image(filename=to_file)
    return None


__all__ = ["model_to_dot", "plot_model"]
# For isinstance checks on what model_to_dot returns.
Dot = _dot.Dot
GraphvizError = _dot.GraphvizError
