"""Runs a keras-io example on graphgc, statement by statement.

The example's source is changed only by the exact substitutions given
(its imports, its download line); each must occur exactly once, so an
example that drifts from what the substitutions expect fails loudly
instead of running something else. Docstring-only statements (the
examples' Markdown cells) are not counted.
"""

import ast
import traceback


def substitute(source, substitutions):
    """source with each (old, new) pair replaced; each old occurs once."""
    for old, new in substitutions:
        count = source.count(old)
        if count != 1:
            raise AssertionError(f"expected {old!r} once in the example, "
                                 f"found it {count} times")
        source = source.replace(old, new)
    return source


def statements(source):
    """The top-level statements of source that are not bare strings."""
    tree = ast.parse(source)
    return [s for s in tree.body
            if not (isinstance(s, ast.Expr)
                    and isinstance(s.value, ast.Constant)
                    and isinstance(s.value.value, str))]


def run(source, filename, namespace):
    """Executes the statements in order in namespace; returns (how many
    ran, the total, the first error's traceback text or None)."""
    body = statements(source)
    for index, statement in enumerate(body):
        code = compile(ast.Module(body=[statement], type_ignores=[]),
                       filename, "exec")
        try:
            exec(code, namespace)  # noqa: S102 (the example under test)
        except Exception:  # noqa: BLE001 (reported, not swallowed)
            return index, len(body), traceback.format_exc()
    return len(body), len(body), None
