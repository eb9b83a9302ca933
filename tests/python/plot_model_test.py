"""graphgc.utils.model_to_dot and plot_model: Keras 3's
(keras/src/utils/model_visualization.py), the DOT text written by graphgc
and drawn by Graphviz's `dot` (graphgc/_dot.py, graphgc/_model_plot.py)."""

import re
import shutil
import subprocess
import sys
import types

import pytest

import graphgc
from graphgc import _dot, _model_plot, utils

L = graphgc.layers

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed")

_NODE = re.compile(r'^"([^"]+)" \[label=<(.*)>, ', re.M)
_EDGE = re.compile(r'^"([^"]+)" -> "([^"]+)"', re.M)


@pytest.fixture(autouse=True)
def _fresh_names():
    """Each test's layers get the names it gives them (a dropped model's
    names are free once collected)."""
    graphgc.backend.clear_session()


def _graph(dot):
    """({node id: label}, [(source id, destination id)]) of DOT text."""
    text = dot.to_string()
    return dict(_NODE.findall(text)), _EDGE.findall(text)


def _ids_by_name(nodes):
    """{layer name: node id}, the name read from each label's <b>."""
    return {re.search(r"<b>([^<]*)</b>", label).group(1): node_id
            for node_id, label in nodes.items()}


def _sequential():
    return graphgc.Sequential([
        L.Input((8,)),
        L.Dense(16, activation="relu", name="hidden"),
        L.Dense(4, name="head"),
    ])


def _branching():
    """An input read by two branches that merge, a layer called twice."""
    x = graphgc.Input((8,), name="x")
    left = L.Dense(8, activation="relu", name="left")(x)
    shared = L.Dense(8, name="shared")
    right = shared(shared(x))
    merged = L.Concatenate(name="merge")([left, right])
    return graphgc.Model(x, L.Dense(2, name="out")(merged))


def _png_without_ipython(monkeypatch, model, path, **kwargs):
    monkeypatch.setitem(sys.modules, "IPython", None)
    return utils.plot_model(model, str(path), **kwargs)


def test_sequential_has_a_node_per_layer_after_the_input_in_a_chain():
    nodes, edges = _graph(utils.model_to_dot(_sequential()))
    ids = _ids_by_name(nodes)
    assert sorted(ids) == ["head", "hidden"]  # Keras draws no InputLayer
    assert edges == [(ids["hidden"], ids["head"])]


def test_functional_model_draws_every_branch_merge_and_repeated_call():
    nodes, edges = _graph(utils.model_to_dot(_branching()))
    ids = _ids_by_name(nodes)
    assert sorted(ids) == ["left", "merge", "out", "shared", "x"]
    named = sorted((_name(ids, a), _name(ids, b)) for a, b in edges)
    assert named == sorted([
        ("x", "left"), ("x", "shared"), ("shared", "shared"),
        ("left", "merge"), ("shared", "merge"), ("merge", "out")])


def _name(ids, node_id):
    return next(name for name, i in ids.items() if i == node_id)


def test_labels_show_layer_name_and_class():
    nodes, _ = _graph(utils.model_to_dot(_sequential()))
    assert any("<b>hidden</b> (Dense)" in label for label in nodes.values())


def test_labels_show_the_class_alone_without_layer_names():
    nodes, _ = _graph(utils.model_to_dot(_sequential(),
                                         show_layer_names=False))
    assert all(label.count("<b>Dense</b>") == 1 for label in nodes.values())
    assert not any("hidden" in label for label in nodes.values())


def test_show_shapes_puts_input_and_output_shapes_in_the_labels():
    nodes, _ = _graph(utils.model_to_dot(_sequential(), show_shapes=True))
    labels = {re.search(r"<b>([^<]*)</b>", v).group(1): v
              for v in nodes.values()}
    assert "Input shape: <b>(None, 8)</b>" in labels["hidden"]
    assert "Output shape: <b>(None, 16)</b>" in labels["hidden"]
    assert "Output shape: <b>(None, 4)</b>" in labels["head"]


def test_show_shapes_gives_a_merge_layer_the_list_of_its_input_shapes():
    nodes, _ = _graph(utils.model_to_dot(_branching(), show_shapes=True))
    merge = next(v for v in nodes.values() if "<b>merge</b>" in v)
    assert "Input shape: <b>[(None, 8), (None, 8)]</b>" in merge
    assert "Output shape: <b>(None, 16)</b>" in merge


def test_labels_show_activation_dtype_and_trainable_when_asked():
    nodes, _ = _graph(utils.model_to_dot(
        _sequential(), show_layer_activations=True, show_dtype=True,
        show_trainable=True))
    hidden = next(v for v in nodes.values() if "<b>hidden</b>" in v)
    assert "Activation: <b>relu</b>" in hidden
    assert "Output dtype: <b>float32</b>" in hidden
    assert "<b>Trainable</b>" in hidden


def test_a_loaded_functional_model_keeps_its_edges(tmp_path):
    path = tmp_path / "m.keras"
    _branching().save(str(path))
    _, edges = _graph(utils.model_to_dot(graphgc.models.load_model(
        str(path))))
    assert len(edges) == 6


def test_model_to_dot_sets_keras_graph_attributes():
    text = utils.model_to_dot(_sequential(), rankdir="LR", dpi=96).to_string()
    assert 'rankdir="LR";' in text
    assert 'dpi="96";' in text
    assert 'splines="ortho";' in text


def test_a_layer_name_with_markup_is_escaped():
    info = _model_plot._LayerInfo('a<b>"c"&d\ne', {"class_name": "Dense"})
    label = _model_plot._label(info, True, False, False, False, False)
    assert "a&lt;b&gt;&quot;c&quot;&amp;d<br/>e" in label.markup
    dot = _dot.Dot()
    dot.add_node("n", label=label)
    assert dot.to_string().count("\n") == 3  # head, the node, the brace


@needs_dot
def test_dot_draws_a_label_with_markup_characters():
    info = _model_plot._LayerInfo('a<b>"c"&d\ne\x01', {"class_name": "Dense"})
    dot = _dot.Dot()
    dot.add_node("n", label=_model_plot._label(info, True, False, False,
                                               False, False))
    svg = dot.create(format="svg").decode()
    assert "a&lt;b&gt;&quot;c&quot;&amp;d" in svg


_HOSTILE_RANKDIR = 'LR"; "evil" [shape=box]; x="\\'


def test_graph_attribute_values_cannot_add_statements():
    text = utils.model_to_dot(_sequential(),
                              rankdir=_HOSTILE_RANKDIR).to_string()
    assert 'rankdir="LR\\"; \\"evil\\" [shape=box]; x=\\"\\\\";' in text
    assert len(_NODE.findall(text)) == 2


@needs_dot
def test_dot_reads_a_hostile_attribute_value_as_one_value():
    dot = utils.model_to_dot(_sequential(), rankdir=_HOSTILE_RANKDIR)
    canon = dot.create(format="canon").decode()
    assert "evil" in canon  # inside the rankdir value
    assert len(re.findall(r"^\s*layer_\d+\s+\[", canon, re.M)) == 2
    assert not re.search(r"^\s*evil\s+\[", canon, re.M)


@needs_dot
def test_dot_accepts_the_text_model_to_dot_writes():
    dot = utils.model_to_dot(_branching(), show_shapes=True, show_dtype=True,
                             show_layer_activations=True, show_trainable=True)
    done = subprocess.run(["dot", "-Tsvg"], input=dot.to_string().encode(),
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


@needs_dot
def test_plot_model_writes_a_png(tmp_path, monkeypatch):
    path = tmp_path / "my_first_model.png"
    assert _png_without_ipython(monkeypatch, _branching(), path) is None
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 8


@needs_dot
def test_plot_model_writes_a_png_without_an_extension(tmp_path, monkeypatch):
    path = tmp_path / "model"
    _png_without_ipython(monkeypatch, _sequential(), path, show_shapes=True)
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@needs_dot
def test_plot_model_writes_svg_for_an_svg_path(tmp_path, monkeypatch):
    path = tmp_path / "model.svg"
    _png_without_ipython(monkeypatch, _sequential(), path)
    assert b"<svg" in path.read_bytes()


@needs_dot
def test_plot_model_returns_an_ipython_image_of_the_file(tmp_path,
                                                         monkeypatch):
    display = types.ModuleType("IPython.display")
    display.Image = lambda filename: ("Image", filename)
    ipython = types.ModuleType("IPython")
    ipython.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    path = str(tmp_path / "m.png")
    assert utils.plot_model(_sequential(), path) == ("Image", path)


@needs_dot
def test_an_unknown_extension_is_dots_error_and_writes_nothing(tmp_path):
    path = tmp_path / "model.nosuchformat"
    with pytest.raises(AssertionError, match=re.escape(str(path))):
        utils.plot_model(_sequential(), str(path))
    assert not path.exists()


def test_plot_model_without_dot_raises_import_error(tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(ImportError, match=r"You must install Graphviz's "
                       r"`dot` program \(Debian package `graphviz`"):
        utils.plot_model(_sequential(), str(tmp_path / "m.png"))


def test_plot_model_without_dot_in_a_notebook_prints_the_message(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "IPython.core.magics.namespace",
                        types.ModuleType("IPython.core.magics.namespace"))
    assert utils.plot_model(_sequential(), str(tmp_path / "m.png")) is None
    assert "You must install Graphviz's `dot`" in capsys.readouterr().out


def test_model_to_dot_subgraph_is_a_cluster_named_for_the_model():
    text = utils.model_to_dot(graphgc.Sequential(
        [L.Input((8,)), L.Dense(2)], name="inner"), subgraph=True).to_string()
    assert text.startswith('subgraph "cluster_inner" {')
    assert 'label="inner";' in text


def test_model_to_dot_text_needs_no_dot(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "->" in utils.model_to_dot(_sequential()).to_string()


@needs_dot
def test_dot_create_returns_the_drawing_and_write_saves_it(tmp_path):
    dot = utils.model_to_dot(_sequential())
    assert dot.create(prog="dot", format="png").startswith(b"\x89PNG")
    dot.write(str(tmp_path / "g.svg"), format="svg")
    assert b"<svg" in (tmp_path / "g.svg").read_bytes()
    dot.write(str(tmp_path / "g.dot"))
    assert (tmp_path / "g.dot").read_text() == dot.to_string()


def test_an_unbuilt_sequential_is_refused_as_keras_does():
    with pytest.raises(ValueError, match="has not yet been built"):
        utils.plot_model(graphgc.Sequential([L.Dense(2)]))


def test_unknown_keyword_arguments_are_refused():
    with pytest.raises(ValueError, match="Unrecognized keyword arguments"):
        utils.model_to_dot(_sequential(), colour="red")
    with pytest.raises(ValueError, match="`layer_range` is no longer"):
        utils.model_to_dot(_sequential(), layer_range=["a", "b"])
