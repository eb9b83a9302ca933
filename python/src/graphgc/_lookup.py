"""Keras's get(identifier) for optimizers and losses: an object of the
kind, or its name."""


def get(identifier, base, by_name, kind, hint):
    if isinstance(identifier, base):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in by_name:
        return by_name[identifier.lower()]()
    raise ValueError(f"unknown {kind} {identifier!r}; graphgc has {hint}")
