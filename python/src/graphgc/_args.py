"""Argument checks shared by the package's modules."""

_INT32_MAX = 2**31 - 1
_UINT64_MAX = 2**64 - 1


def get(identifier, base, by_name, kind, hint):
    """Keras's get(identifier) for optimizers and losses: an object of the
    kind, or its name."""
    if isinstance(identifier, base):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in by_name:
        return by_name[identifier.lower()]()
    raise ValueError(f"unknown {kind} {identifier!r}; graphgc has {hint}")


def to_int(value, what, low, high):
    """int(value), or ValueError naming `what` when it is not an integer in
    [low, high] (the C++ side takes int or uint64_t)."""
    try:
        out = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be an integer, not {value!r}") from None
    if out != value or not low <= out <= high:
        raise ValueError(f"{what} must be an integer in [{low}, {high}], "
                         f"got {value!r}")
    return out


def int32(value, what, low=0):
    return to_int(value, what, low, _INT32_MAX)


def seed(value, what="seed"):
    """None, or a seed in [0, 2**64)."""
    return None if value is None else to_int(value, what, 0, _UINT64_MAX)
