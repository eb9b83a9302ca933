"""A model called as a layer (Keras's nested models): model(tensors) on
symbolic tensors calls the model's layers again on them, in the order of
its graph of layer calls, and returns the new tensors in the model's output
structure. The layers are the model's own, so their weights are shared with
it: training a model built on the call trains the called model's layers.

The model's graph is not kept as one node: a model built on the call lists
the called model's layers among its own (layers, summary, saved config),
where Keras shows one "encoder (Functional)" entry (docs/python.md).
A model read by load_model or model_from_json has no Python history of
its calls: its config's inbound_nodes give the graph instead.
"""

from graphgc import _multi_io
from graphgc import layers as _layers


def is_symbolic(inputs):
    """Whether inputs is a KerasTensor, or a non-empty list, tuple or dict
    holding one (a model call rather than predict's data)."""
    if isinstance(inputs, _layers.KerasTensor):
        return True
    if isinstance(inputs, dict):
        inputs = list(inputs.values())
    return isinstance(inputs, (list, tuple)) and any(
        isinstance(x, _layers.KerasTensor) for x in inputs)


def call_model(model, inputs):
    """A functional model's outputs recomputed from the KerasTensors
    `inputs` (one, a list, or a dict keyed like the model's inputs), in the
    model's output structure. A wrong count, a value that is not a
    KerasTensor or a shape the model's input does not take raises ValueError
    naming the model."""
    flat = _flat_inputs(model, inputs)
    _check_shapes(model.name, model._inputs, flat)
    if getattr(model, "_calls_known", True):
        call_of, inputs, outputs = _python_call, model._inputs, model._outputs
    else:
        call_of, inputs, outputs = _config_graph(model)
    outputs = _replay(outputs, dict(zip(inputs, flat)), call_of)
    keys = getattr(model, "_output_keys", None)
    if keys is not None:
        return dict(zip(keys, outputs))
    if isinstance(model._nested_outputs, (list, tuple)):
        return type(model._nested_outputs)(outputs)
    return outputs[0]


def _flat_inputs(model, inputs):
    """inputs as a list in the order of model._inputs."""
    name = model.name
    if isinstance(inputs, dict):
        try:
            flat = _multi_io.flatten_data(inputs, model.input_names,
                                          getattr(model, "_input_keys",
                                                  None), "input")
        except ValueError as e:
            raise ValueError(f'Layer "{name}": {e}') from None
    elif isinstance(inputs, (list, tuple)):
        flat = list(inputs)
    else:
        flat = [inputs]
    if len(flat) != len(model._inputs):
        raise ValueError(f'Layer "{name}" expects {len(model._inputs)} '
                         f"input(s), but it received {len(flat)} input "
                         f"tensors. Inputs received: {flat}")
    for x in flat:
        if not isinstance(x, _layers.KerasTensor):
            raise ValueError(f'Layer "{name}": a model is called on '
                             "symbolic tensors (keras.Input() and what layer "
                             "calls make from them) or on data, not both; "
                             f"got {type(x).__name__}")
    return flat


def _check_shapes(name, expected, given):
    """Keras's input-spec messages for a tensor the input does not take."""
    for i, (spec, x) in enumerate(zip(expected, given)):
        if len(x.shape) != len(spec.shape):
            raise ValueError(
                f"Input {i} with name '{spec.name}' of layer '{name}' is "
                f"incompatible with the layer: expected "
                f"ndim={len(spec.shape)}, found ndim={len(x.shape)}. Full "
                f"shape received: {x.shape}")
        if tuple(x.shape[1:]) != tuple(spec.shape[1:]):
            raise ValueError(
                f"Input {i} with name '{spec.name}' of layer '{name}' is "
                f"incompatible with the layer: expected shape={spec.shape}, "
                f"found shape={x.shape}")


class _Spec:
    """A Sequential's input as _check_shapes reads it (name, shape)."""

    def __init__(self, name, shape):
        self.name = name
        self.shape = shape


def _replay(outputs, made, call_of):
    """The new tensors standing for `outputs` (keys of the model's graph):
    each layer call they depend on made again, once. made maps a key to its
    new tensor (the inputs' to the given tensors); call_of(key) is the call
    that made it, (layer, input keys, whether given a list). Depth first
    without recursion, so a deep model keeps the stack flat."""
    for output in outputs:
        stack = [output]
        while stack:
            key = stack[-1]
            if key in made:
                stack.pop()
                continue
            layer, inbound, on_list = call_of(key)
            pending = [k for k in inbound if k not in made]
            if pending:
                stack.extend(pending)
                continue
            args = [made[k] for k in inbound]
            made[key] = layer(args if on_list else args[0])
            stack.pop()
    return [made[key] for key in outputs]


def _python_call(tensor):
    """The call that made a KerasTensor, from its own history."""
    return tensor._keras_history[0], tensor._inbound, tensor._on_list


def _config_graph(model):
    """A model read by load_model or model_from_json keeps no Python
    history: its graph of calls from its config's inbound_nodes, keyed by
    (layer name, call index). (call_of, input keys, output keys)."""
    config = model.get_config()
    layers = {layer.name: layer for layer in model._layers}
    calls = {}
    for entry in config["layers"]:
        for i, node in enumerate(entry.get("inbound_nodes") or []):
            arg = node["args"][0]
            on_list = isinstance(arg, list)
            refs = [tuple(t["config"]["keras_history"][:2])
                    for t in (arg if on_list else [arg])]
            calls[(entry["name"], i)] = (layers[entry["name"]], refs,
                                         on_list)

    def keys(refs):
        # Keras writes one input or output as [name, 0, 0], not a list.
        if refs and isinstance(refs[0], str):
            refs = [refs]
        return [tuple(ref[:2]) for ref in refs]

    return (calls.__getitem__, keys(config["input_layers"]),
            keys(config["output_layers"]))


def call_sequential(model, inputs):
    """A Sequential's layers called in turn on one tensor; a model without
    an Input is built for that tensor's shape first (as Keras's)."""
    name = model.name
    flat = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    if isinstance(inputs, dict) or len(flat) != 1:
        count = len(inputs) if isinstance(inputs, (dict, list, tuple)) else 1
        raise ValueError(f'Layer "{name}" expects 1 input(s), but it '
                         f"received {count} input tensors. Inputs "
                         f"received: {inputs}")
    x = flat[0]
    if not isinstance(x, _layers.KerasTensor):
        raise ValueError(f'Layer "{name}": a Sequential is called on one '
                         f"symbolic tensor, not {type(x).__name__}")
    if model._defers_build():
        model._build(tuple(x.shape[1:]))
    config = model.get_config()["layers"][0]["config"]
    expected = _Spec(config.get("name"), tuple(config["batch_shape"]))
    _check_shapes(name, [expected], [x])
    for layer in model.layers:
        x = layer(x)
    return x
