"""graphgc.layers.LeakyReLU: generated from the C++ layer registry
(models/layers/leaky_relu.cc) with Keras 3's argument, in models, summary
and save/load."""

import inspect
import json
import re

import numpy as np
import pytest

import graphgc
from graphgc import layers


def test_leaky_relu_takes_keras_3_arguments():
    params = inspect.signature(layers.LeakyReLU).parameters
    assert list(params) == ["negative_slope", "name"]
    assert params["negative_slope"].default == pytest.approx(0.3)


def test_leaky_relu_scales_negative_values():
    model = graphgc.Sequential([layers.Input((5,)),
                                layers.LeakyReLU(negative_slope=0.5)])
    out = model.predict(np.array([[-10, -5, 0, 5, 10]], dtype=np.float32))
    np.testing.assert_array_equal(out, [[-5, -2.5, 0, 5, 10]])


def test_negative_slope_is_refused_when_the_model_is_made():
    layer = layers.LeakyReLU(-1.0)
    with pytest.raises(ValueError, match="negative_slope"):
        graphgc.Sequential([layers.Input((2,)), layer])


def test_leaky_relu_has_a_summary_row():
    model = graphgc.Sequential([layers.Input((3,)), layers.LeakyReLU()])
    lines = []
    model.summary(print_fn=lines.append)
    # Uniqued in the default graph: "leaky_re_lu", "leaky_re_lu_1", ...
    assert re.search(r"leaky_re_lu(_\d+)? \(LeakyReLU\)", "\n".join(lines))


def test_save_writes_keras_config_and_load_model_reads_it(tmp_path):
    model = graphgc.Sequential([layers.Input((3,)),
                                layers.LeakyReLU(0.2, name="leaky")])
    model.save(tmp_path / "saved")
    config = json.loads((tmp_path / "saved" / "config.json").read_text())
    layer = config["config"]["layers"][1]
    assert layer["class_name"] == "LeakyReLU"
    assert layer["config"]["negative_slope"] == pytest.approx(0.2)
    assert layer["config"]["name"] == "leaky"
    loaded = graphgc.models.load_model(tmp_path / "saved")
    assert isinstance(loaded.layers[0], layers.LeakyReLU)
    x = np.array([[-10, 0, 4]], dtype=np.float32)
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
