"""model.save("m.keras") / load_model("m.keras"): Keras 3's zip, and the
refusal of hostile archives before anything is inflated."""

import io
import json
import struct
import zipfile

import numpy as np
import pytest

import graphgc
from conftest import make_model


def functional():
    x = graphgc.Input((4,))
    y = graphgc.layers.Dense(2)(graphgc.layers.Dense(5)(x))
    return graphgc.Model(x, y)


def saved_entries(tmp_path, model=None):
    """The entries of a .keras file graphgc wrote, by name."""
    path = tmp_path / "m.keras"
    (model or make_model()).save(path)
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def write_zip(path, entries, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)


def test_save_writes_keras_entries_beside_graphgc_extras(tmp_path):
    entries = saved_entries(tmp_path)
    assert set(entries) == {"metadata.json", "config.json",
                            "model.weights.h5", "model.pb", "signature.json"}
    metadata = json.loads(entries["metadata.json"])
    assert set(metadata) == {"keras_version", "date_saved"}
    assert json.loads(entries["config.json"])["class_name"] == "Sequential"
    assert entries["model.weights.h5"].startswith(b"\x89HDF")


def test_sequential_round_trip_predicts_the_same(tmp_path, data):
    model = make_model()
    model.save(tmp_path / "m.keras")
    loaded = graphgc.models.load_model(tmp_path / "m.keras")
    assert isinstance(loaded, graphgc.Sequential)
    x = data[0][:8]
    assert np.array_equal(model.predict(x), loaded.predict(x))
    assert loaded._build().compiled


def test_functional_round_trip_predicts_the_same(tmp_path):
    model = functional()
    model.save(str(tmp_path / "m.keras"))
    loaded = graphgc.models.load_model(str(tmp_path / "m.keras"))
    assert type(loaded) is graphgc.Model
    x = np.ones((3, 4), np.float32)
    assert np.array_equal(model.predict(x), loaded.predict(x))


def test_load_weights_of_a_keras_file(tmp_path):
    model, other = make_model(), make_model()
    other.set_weights([w + 1 for w in other.get_weights()])
    model.save(tmp_path / "m.keras")
    other.load_weights(tmp_path / "m.keras")
    assert all(np.array_equal(a, b) for a, b in
               zip(model.get_weights(), other.get_weights()))


def test_directory_format_still_loads(tmp_path):
    model = make_model()
    model.save(tmp_path / "dir")
    assert (tmp_path / "dir" / "config.json").exists()
    assert isinstance(graphgc.models.load_model(tmp_path / "dir"),
                      graphgc.Sequential)


def test_save_of_legacy_h5_is_refused_with_keras_advice(tmp_path):
    with pytest.raises(ValueError, match=r"model\.save\('my_model\.keras'\)"):
        make_model().save(tmp_path / "m.h5")
    assert not (tmp_path / "m.h5").exists()


def test_load_model_of_a_missing_keras_file_is_value_error(tmp_path):
    with pytest.raises(ValueError, match="File not found"):
        graphgc.models.load_model(tmp_path / "none.keras")


def load(path):
    return graphgc.models.load_model(path)


def refused(tmp_path, match, drop=(), add=None):
    """Asserts that a saved model's zip, less the entries drop plus add,
    is refused with a ValueError matching match."""
    entries = saved_entries(tmp_path)
    for name in drop:
        del entries[name]
    entries.update(add or {})
    write_zip(tmp_path / "bad.keras", entries)
    with pytest.raises(ValueError, match=match):
        load(tmp_path / "bad.keras")


def test_traversal_name_is_refused(tmp_path):
    refused(tmp_path, "outside the archive", drop=["signature.json"],
            add={"../evil.json": b"{}"})
    assert not (tmp_path.parent / "evil.json").exists()


def test_absolute_name_is_refused(tmp_path):
    refused(tmp_path, "outside the archive", drop=["signature.json"],
            add={"/tmp/evil.json": b"{}"})


def test_unknown_entry_is_refused(tmp_path):
    refused(tmp_path, "unknown entry 'extra.txt'", drop=["signature.json"],
            add={"extra.txt": b"x"})


def test_missing_weights_entry_is_refused(tmp_path):
    refused(tmp_path, "no model.weights.h5", drop=["model.weights.h5"])


def test_missing_config_entry_is_refused(tmp_path):
    refused(tmp_path, "no config.json", drop=["config.json"])


def test_missing_metadata_entry_is_refused(tmp_path):
    refused(tmp_path, "no metadata.json", drop=["metadata.json"])


def test_weights_declaring_more_than_the_budget_are_refused(tmp_path):
    # 64 MiB of zeros in a weights entry whose config bounds it far lower.
    refused(tmp_path, "load budget", add={"model.weights.h5": bytes(64 << 20)})


def test_deflate_bomb_inflates_no_further_than_its_declared_size(tmp_path):
    # 64 MiB of zeros deflated to a few KiB, declared as 1,000 bytes: the
    # reader stops at the declared size, and the CRC refuses the entry.
    entries = saved_entries(tmp_path)
    entries["model.weights.h5"] = bytes(64 << 20)
    path = tmp_path / "bad.keras"
    write_zip(path, entries, zipfile.ZIP_DEFLATED)
    assert path.stat().st_size < 1 << 20
    path.write_bytes(declare_size(path.read_bytes(), "model.weights.h5", 1000))
    with pytest.raises(ValueError, match="corrupt zip|inflates past"):
        load(path)


def test_too_many_entries_are_refused_from_the_end_record(tmp_path):
    entries = {f"f{i}": b"" for i in range(100)}
    write_zip(tmp_path / "bad.keras", entries)
    with pytest.raises(ValueError, match="100 entries"):
        load(tmp_path / "bad.keras")


def test_directory_entry_is_refused(tmp_path):
    entries = saved_entries(tmp_path)
    del entries["model.pb"]
    path = tmp_path / "bad.keras"
    write_zip(path, entries)
    # A known entry's name, its type a directory.
    info = zipfile.ZipInfo("model.pb")
    info.external_attr = (0o40755 << 16) | 0x10
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr(info, b"")
    with pytest.raises(ValueError, match="not a regular file"):
        load(path)


def test_symlink_entry_is_refused(tmp_path):
    entries = saved_entries(tmp_path)
    del entries["signature.json"]
    path = tmp_path / "bad.keras"
    write_zip(path, entries)
    with zipfile.ZipFile(path, "a") as zf:
        info = zipfile.ZipInfo("signature.json")
        info.external_attr = (0o120777) << 16
        zf.writestr(info, b"/etc/passwd")
    with pytest.raises(ValueError, match="not a regular file"):
        load(path)


def declare_size(data, name, size):
    """data (a zip's bytes) with name's declared uncompressed size, in its
    local header and central directory record, set to size."""
    data = bytearray(data)
    encoded = name.encode()
    for sig, size_at, name_len_at, name_at in ((b"PK\x03\x04", 22, 26, 30),
                                               (b"PK\x01\x02", 24, 28, 46)):
        at = 0
        while True:
            at = data.find(sig, at)
            if at < 0:
                break
            (n,) = struct.unpack_from("<H", data, at + name_len_at)
            if bytes(data[at + name_at:at + name_at + n]) == encoded:
                struct.pack_into("<L", data, at + size_at, size)
            at += 4
    return bytes(data)


def declared_too_large(tmp_path, name, size):
    """Asserts that a saved model's zip (deflated) whose entry name declares
    size bytes is refused naming that declaration."""
    buf = io.BytesIO()
    write_zip(buf, saved_entries(tmp_path), zipfile.ZIP_DEFLATED)
    path = tmp_path / "bomb.keras"
    path.write_bytes(declare_size(buf.getvalue(), name, size))
    with pytest.raises(ValueError, match=f"{name} declares"):
        load(path)


def test_huge_declared_weights_size_is_refused_before_inflating(tmp_path):
    declared_too_large(tmp_path, "model.weights.h5", 0xF0000000)


def test_huge_declared_config_size_is_refused(tmp_path):
    declared_too_large(tmp_path, "config.json", 1 << 30)


def test_not_a_zip_is_refused(tmp_path):
    (tmp_path / "m.keras").write_bytes(b"not a zip at all" * 10)
    with pytest.raises(ValueError, match="zip"):
        load(tmp_path / "m.keras")


def test_a_directory_named_keras_is_loaded_as_a_model_directory(tmp_path):
    make_model().save(tmp_path / "dir")
    (tmp_path / "dir").rename(tmp_path / "m.keras")
    assert isinstance(load(tmp_path / "m.keras"), graphgc.Sequential)


def test_load_weights_bounds_the_weights_entry_by_its_own_budget(tmp_path):
    # load_model's budget for an uncompiled model has no room for optimizer
    # variables; load_weights reads a file carrying up to three per weight
    # (a Keras file holds its optimizer's), so its own bound is larger, and
    # an entry between the two is inflated (here: found truncated).
    from graphgc import _graphgc
    model = functional()
    model.save(tmp_path / "m.keras")
    model_bound = _graphgc.max_weights_file_bytes(model.to_json(), "c")
    own_bound = _graphgc.max_load_weights_file_bytes(model._build())
    assert own_bound > model_bound
    data = (tmp_path / "m.keras").read_bytes()
    path = tmp_path / "between.keras"
    path.write_bytes(declare_size(data, "model.weights.h5", model_bound + 1))
    with pytest.raises(ValueError, match="truncated"):
        model.load_weights(path)
    path.write_bytes(declare_size(data, "model.weights.h5", own_bound + 1))
    with pytest.raises(ValueError, match="model.weights.h5 declares"):
        model.load_weights(path)
