"""Fit's Keras 3 arguments beyond x, y and the first few: checked and
handed to C++ (FitOptions) as one dict."""

from graphgc import _args


def fit_args(initial_epoch, steps_per_epoch, validation_steps,
             validation_batch_size, validation_freq, class_weight,
             sample_weight):
    """The dict model_bindings.cc's TakeFitArguments reads. None (Keras's
    default) leaves a C++ default; validation_freq is an int or a list of
    1-based epochs, as Keras's _should_eval takes it."""
    out = {"initial_epoch": _args.int32(initial_epoch, "initial_epoch")}
    if steps_per_epoch is not None:
        out["steps_per_epoch"] = _args.int32(steps_per_epoch,
                                             "steps_per_epoch")
    if validation_steps is not None:
        out["validation_steps"] = _args.int32(validation_steps,
                                              "validation_steps")
    if validation_batch_size is not None:
        out["validation_batch_size"] = _args.int32(
            validation_batch_size, "validation_batch_size", low=1)
    if isinstance(validation_freq, bool) or not isinstance(
            validation_freq, (int, list)):
        raise ValueError(
            "Expected `validation_freq` to be a list or int. Received: "
            f"validation_freq={validation_freq} of the type "
            f"{type(validation_freq)}.")
    if isinstance(validation_freq, list):
        out["validation_epochs"] = [
            _args.int32(e, "validation_freq's epochs")
            for e in validation_freq]
        if not out["validation_epochs"]:
            out["validation_epochs"] = [0]  # no epoch validates
    else:
        out["validation_freq"] = _args.int32(validation_freq,
                                             "validation_freq", low=1)
    if class_weight is not None:
        out["class_weight"] = {int(k): float(v)
                               for k, v in dict(class_weight).items()}
    if sample_weight is not None:
        out["sample_weight"] = sample_weight
    return out
