"""DOT text and its rendering by Graphviz's `dot` program, for
keras.utils.model_to_dot and plot_model (graphgc/_model_plot.py).

Keras builds a pydot.Dot; graphgc writes the DOT text itself (Dot below,
graphgc's own class with pydot.Dot's most-used methods) and runs `dot` as
a subprocess: an argument list (no shell), the DOT text on stdin, a
timeout. Every text that reaches the DOT file is escaped here: attribute
values are quoted DOT strings, HTML-like labels are built from
html_text() pieces, so a layer name cannot add DOT statements or markup.
"""

import html
import os
import re
import shutil
import subprocess

# Characters an HTML-like label cannot hold: C0 controls but tab and line
# feed, DEL, and lone surrogates (not UTF-8).
_UNDRAWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")

# Long enough for a model of thousands of layers; `dot` is killed after it.
TIMEOUT_SECONDS = 120

_INSTALL = ("Graphviz's `dot` program (Debian package `graphviz`, "
            "`apt-get install graphviz`; see "
            "https://graphviz.gitlab.io/download/)")


def missing_dot_message(what):
    """Keras's ImportError text for a missing renderer, naming `dot`."""
    return f"You must install {_INSTALL} for {what} to work."


class GraphvizError(RuntimeError, AssertionError):
    """`dot` failed (an unknown output format, a file it cannot write).
    Also an AssertionError, what pydot raises there under Keras."""


def quote(value):
    """value as a quoted DOT string: backslashes and quotes escaped, line
    breaks as DOT's \\n."""
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r",
                                                                     "\\n")
    return f'"{text}"'


def html_text(value):
    """value as text inside an HTML-like label: markup characters as
    entities, a line break as <br/>, other control characters (which
    Graphviz's XML parser refuses) and lone surrogates as U+FFFD."""
    text = str(value).replace("\r\n", "\n").replace("\r", "\n")
    text = _UNDRAWABLE.sub("\ufffd", html.escape(text, quote=True))
    return text.replace("\n", "<br/>")


class HtmlLabel:
    """A label written as DOT's HTML-like <...> form; its text is the
    caller's markup, made with html_text() for anything not its own."""

    def __init__(self, markup):
        self.markup = markup


def _value(value):
    if isinstance(value, HtmlLabel):
        return f"<{value.markup}>"
    if isinstance(value, bool):
        value = "true" if value else "false"
    return quote(value)


def _attributes(attrs):
    return ", ".join(f"{name}={_value(value)}"
                     for name, value in attrs.items())


def find_dot(what, prog="dot"):
    """The path of Graphviz's program `prog` on PATH; ImportError (Keras's
    for a missing pydot or Graphviz) naming `what` when there is none."""
    path = shutil.which(prog)
    if path is None:
        raise ImportError(missing_dot_message(what))
    return path


class Dot:
    """A directed graph as DOT text: what graphgc's model_to_dot returns.

    graphgc's own class, not a pydot.Dot: it has pydot's to_string(),
    create(prog=None, format="ps") and write(path, prog=None,
    format="raw"), plus the graph, node and edge lists model_to_dot fills
    (set, set_node_defaults, add_node, add_edge, get_node, get_nodes,
    get_edge, get_edges). create and write run Graphviz's `dot`."""

    def __init__(self, graph_name="G", subgraph=False):
        self.graph_name = str(graph_name)
        self._subgraph = bool(subgraph)
        self._graph = {}
        self._node_defaults = {}
        self._nodes = {}
        self._edges = {}

    def set(self, name, value):
        self._graph[str(name)] = value

    def get(self, name):
        return self._graph.get(str(name))

    def set_node_defaults(self, **attrs):
        self._node_defaults.update(attrs)

    def add_node(self, node_id, **attrs):
        self._nodes[str(node_id)] = dict(attrs)

    def get_node(self, node_id):
        """The node's attributes (a dict), or None."""
        return self._nodes.get(str(node_id))

    def get_nodes(self):
        return list(self._nodes)

    def add_edge(self, src, dst, **attrs):
        """Adds the edge src -> dst once (a second add keeps the first, as
        Keras's plot adds each pair of layers once)."""
        self._edges.setdefault((str(src), str(dst)), dict(attrs))

    def get_edge(self, src, dst):
        """The edge's attributes (a dict), or None."""
        return self._edges.get((str(src), str(dst)))

    def get_edges(self):
        return list(self._edges)

    def to_string(self):
        """The graph as DOT text."""
        if self._subgraph:
            head = f"subgraph {quote('cluster_' + self.graph_name)} {{"
        else:
            head = f"digraph {quote(self.graph_name)} {{"
        lines = [head]
        lines += [f"{name}={_value(value)};"
                  for name, value in self._graph.items()]
        if self._node_defaults:
            lines.append(f"node [{_attributes(self._node_defaults)}];")
        for node_id, attrs in self._nodes.items():
            lines.append(f"{quote(node_id)} [{_attributes(attrs)}];")
        for (src, dst), attrs in self._edges.items():
            tail = f" [{_attributes(attrs)}]" if attrs else ""
            lines.append(f"{quote(src)} -> {quote(dst)}{tail};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _run(self, prog, format, output, what):  # noqa: A002 (pydot's)
        """Runs `prog -T<format>` on the DOT text: its stdout, or with
        output (a path) the file it writes there."""
        args = list(prog) if isinstance(prog, (list, tuple)) else [prog]
        path = find_dot(what, str(args[0]))
        command = [path, f"-T{format}", *[str(a) for a in args[1:]]]
        if output is not None:
            command.append(f"-o{output}")
        target = output if output is not None else "its output"
        try:
            # "replace": a lone surrogate in a value is not UTF-8.
            text = self.to_string().encode("utf-8", "replace")
            done = subprocess.run(command, input=text,
                                  capture_output=True,
                                  timeout=TIMEOUT_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            raise GraphvizError(
                f"{args[0]} took more than {TIMEOUT_SECONDS} s to draw "
                f"{target} and was stopped") from None
        except OSError as e:
            raise GraphvizError(f"{args[0]} could not be run to draw "
                                f"{target}: {e}") from None
        if done.returncode != 0:
            err = done.stderr.decode(errors="replace").strip()
            raise GraphvizError(
                f"{args[0]} -T{format} failed to draw {target} (exit code "
                f"{done.returncode}): {err}")
        return done.stdout

    def create(self, prog=None, format="ps", encoding=None):  # noqa: A002
        """The graph drawn by `prog` (Graphviz's "dot" by default; a list
        is the program and its extra arguments, as pydot's) in `format`
        ("png", "svg", "pdf", ...): bytes. ImportError when the program is
        not installed, GraphvizError when it fails."""
        del encoding  # the DOT text is UTF-8, Graphviz's default
        return self._run(prog or "dot", format, None, "model_to_dot().create")

    def write(self, path, prog=None, format="raw",  # noqa: A002
              encoding=None):
        """Writes the graph to path: the DOT text for format "raw" (as
        pydot's), else the drawing `prog` makes in that format (the path is
        passed to it; a file it leaves after failing is removed). Returns
        True, as pydot's."""
        path = os.fspath(path)
        if format == "raw":
            with open(path, "w", encoding=encoding or "utf-8",
                      errors="replace") as f:
                f.write(self.to_string())
            return True
        existed = os.path.lexists(path)
        try:
            self._run(prog or "dot", format, path, "model_to_dot().write")
        except GraphvizError:
            if not existed and os.path.isfile(path):
                os.remove(path)
            raise
        return True
