"""Keras's losses, by object (graphgc.losses.Huber(delta=2.0), ...) and by
name for compile() ("mae", "mean_absolute_error", "MeanAbsoluteError", ...):
one class per loss of the C++ loss registry (_graphgc.loss_kinds()), each
with its Keras class's keyword arguments: from_logits and label_smoothing
(the cross-entropies), delta (Huber), reduction ("sum_over_batch_size", the
default, or "sum"), name and dtype."""

import inspect

from graphgc import _args, _graphgc


class Loss:
    """What compile() takes as a loss; the classes below derive from it."""

    def _cpp(self):
        raise NotImplementedError


def _check_fixed(class_name, arguments):
    # Keras arguments graphgc takes only at their one supported value.
    if arguments.get("axis", -1) != -1:
        raise ValueError(f"{class_name}: axis must be -1, got "
                         f"{arguments['axis']!r}")
    if arguments.get("ignore_class") is not None:
        raise ValueError(f"{class_name}: ignore_class is not supported")
    if arguments.get("dtype") not in (None, "float32"):
        raise ValueError(f"{class_name}: dtype must be None or 'float32', "
                         f"got {arguments['dtype']!r}")


def _make_class(info):
    (name, class_name, object_name, _aliases, from_logits, label_smoothing,
     delta) = info
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD)]
    if from_logits:
        params.append(P("from_logits", P.POSITIONAL_OR_KEYWORD, default=False))
    if label_smoothing:
        params.append(P("label_smoothing", P.POSITIONAL_OR_KEYWORD,
                        default=0.0))
    if delta:
        params.append(P("delta", P.POSITIONAL_OR_KEYWORD, default=1.0))
    if label_smoothing or name == "cosine_similarity":
        params.append(P("axis", P.POSITIONAL_OR_KEYWORD, default=-1))
    if name == "sparse_categorical_crossentropy":
        params.append(P("ignore_class", P.POSITIONAL_OR_KEYWORD,
                        default=None))
    params += [P("reduction", P.POSITIONAL_OR_KEYWORD,
                 default="sum_over_batch_size"),
               P("name", P.POSITIONAL_OR_KEYWORD, default=object_name),
               P("dtype", P.POSITIONAL_OR_KEYWORD, default=None)]
    signature = inspect.Signature(params)

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        del arguments["self"]
        _check_fixed(class_name, arguments)
        self.__dict__.update(arguments)
        # Checks the options now, as Keras does.
        self._cpp()

    def _cpp(self):
        reduction = self.reduction
        return _graphgc.make_loss(
            name, bool(getattr(self, "from_logits", False)),
            float(getattr(self, "label_smoothing", 0.0)),
            float(getattr(self, "delta", 1.0)),
            "none" if reduction is None else str(reduction))

    def get_config(self):
        return {k: v for k, v in self.__dict__.items()
                if k not in ("axis", "ignore_class")}

    __init__.__signature__ = signature
    return type(class_name, (Loss,), {
        "__init__": __init__, "_cpp": _cpp, "get_config": get_config,
        "__module__": __name__,
        "__doc__": f"Keras's {class_name} loss ('{name}')."})


_INFOS = _graphgc.loss_kinds()
_CLASSES = {info[1]: _make_class(info) for info in _INFOS}
globals().update(_CLASSES)
__all__ = ["Loss", "get", *_CLASSES]

# Every name compile() takes, lower-cased as _args.get looks them up: the
# function names, the class names and Keras's aliases.
_BY_NAME = {}
for _info in _INFOS:
    for _name in (_info[0], _info[1], *_info[3]):
        _BY_NAME[_name.lower()] = _CLASSES[_info[1]]


def get(identifier):
    """A Loss from a name or a Loss."""
    return _args.get(identifier, Loss, _BY_NAME, "loss",
                     ", ".join(repr(info[0]) for info in _INFOS)
                     + " (and Keras's aliases and class names)"
                     + " and the graphgc.losses classes")
