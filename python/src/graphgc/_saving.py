"""Keras 3's file formats from Python: the single-file `.keras` zip, the
`.weights.h5` rules, and the checks Keras makes on a path's suffix.

A `.keras` file is what Keras 3's saving_lib writes: a zip holding
`metadata.json` ({"keras_version", "date_saved"}), `config.json` (the
model's Keras JSON config, compact, as `model.to_json()` gives it) and
`model.weights.h5` (the weights in Keras 3's HDF5 layout), stored
uncompressed as Keras stores them. graphgc adds, beside them at the top of
the zip, the two files its model directories hold for other tools:
`model.pb` (the frozen inference GraphDef) and `signature.json`. Keras's
loader reads only its three entries by name, so it loads the file.

Reading a `.keras` file treats it as untrusted (docs/reliability.md): it
must be a regular file of at most the load budget; the zip's end record is
read first and an archive of more entries than the five above, or a central
directory over 64 KiB, or a ZIP64 archive, is refused before the directory
is parsed; then every entry must be one of the five names, once, a regular
file (no directory, link or device), neither encrypted nor compressed other
than stored or deflated, and declare at most its own bound (metadata.json
64 KiB, config.json 16 MiB, model.weights.h5 what the config's load budget
allows: LoadModel's bound on model.weights.h5, models/saving.h), all
checked before anything is inflated; inflating stops at the declared size
(zipfile checks each entry's CRC). A name that is absolute or climbs out
(`..`, a backslash, a drive letter) is refused as such. The three Keras
entries must all be there. model.pb and signature.json are never read.
The entries read are written into a private temporary directory (mode
0700), which the C++ loader then reads as a model directory, with its own
checks; the directory is deleted afterwards. Refusals are ValueError naming
the file and the entry.

Writing is atomic: the model is saved as a directory in a temporary
directory beside the target, zipped into a file there, and that file is
renamed over the target.
"""

import datetime
import json
import os
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib

from graphgc import _graphgc

CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.h5"
# graphgc's files for other tools, beside Keras's.
EXTRAS = ("model.pb", "signature.json")
ENTRIES = (METADATA, CONFIG, WEIGHTS) + EXTRAS

# The Keras format version the files follow (metadata.json's keras_version;
# Keras's loader does not read it).
KERAS_VERSION = "3.0.0"

MAX_METADATA_BYTES = 64 << 10
MAX_CONFIG_BYTES = 16 << 20
MAX_CENTRAL_DIRECTORY_BYTES = 64 << 10
# LoadOptions::max_bytes's default (models/saving_types.h): no .keras file
# of a model that loads is larger.
MAX_ARCHIVE_BYTES = 2 << 30

_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_LOCATOR_SIZE = 20
_MAX_COMMENT = 0xFFFF
_COPY_CHUNK = 1 << 20


def legacy_h5_save_error(filepath):
    return ValueError(
        "You are saving your model as an HDF5 file via `model.save()`. This "
        "file format is considered legacy and graphgc does not write it. "
        "Use instead the native Keras format, e.g. "
        "`model.save('my_model.keras')`, or `model.save_weights("
        "'my_model.weights.h5')` for the weights alone. "
        f"Received: filepath={filepath}")


def is_legacy_h5(filepath):
    return str(filepath).endswith((".h5", ".hdf5"))


# --- writing -------------------------------------------------------------

def _zip_info(name, size):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    info.file_size = size
    return info


def save_keras(cpp_model, filepath):
    """Writes cpp_model (a C++ Sequential or Functional) as the .keras
    file filepath, atomically."""
    filepath = os.fspath(filepath)
    parent = os.path.dirname(os.path.abspath(filepath))
    os.makedirs(parent, exist_ok=True)
    config = _graphgc.model_to_json(cpp_model).encode()
    metadata = json.dumps({
        "keras_version": KERAS_VERSION,
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
    }).encode()
    work = tempfile.mkdtemp(prefix=".graphgc-keras-", dir=parent)
    try:
        saved = os.path.join(work, "model")
        cpp_model.save(saved)
        part = os.path.join(work, "model.keras")
        with open(part, "wb") as out:
            with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
                zf.writestr(_zip_info(METADATA, len(metadata)), metadata)
                zf.writestr(_zip_info(CONFIG, len(config)), config)
                for name in (WEIGHTS,) + EXTRAS:
                    src = os.path.join(saved, name)
                    info = _zip_info(name, os.path.getsize(src))
                    with open(src, "rb") as f, zf.open(info, "w") as dst:
                        shutil.copyfileobj(f, dst, _COPY_CHUNK)
            out.flush()
            os.fsync(out.fileno())
        os.replace(part, filepath)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- reading -------------------------------------------------------------

def _refuse(filepath, why):
    return ValueError(f"{filepath}: not a .keras file graphgc loads: {why}")


def _open_regular(filepath):
    """The file, opened for reading without blocking, if it is a regular
    file of at most MAX_ARCHIVE_BYTES."""
    fd = os.open(filepath, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(filepath, "it is not a regular file")
        if st.st_size > MAX_ARCHIVE_BYTES:
            raise _refuse(filepath, f"{st.st_size} bytes, more than the load "
                          f"budget of {MAX_ARCHIVE_BYTES} bytes")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st.st_size
    except BaseException:
        os.close(fd)
        raise


def _check_end_record(f, size, filepath):
    """Refuses, from the zip's end record alone, an archive of more entries
    than a .keras file holds or with a large central directory, before
    zipfile parses the directory."""
    tail = min(size, _ZIP64_LOCATOR_SIZE + _EOCD_SIZE + _MAX_COMMENT)
    f.seek(size - tail)
    data = f.read(tail)
    at = data.rfind(_EOCD)
    if at < 0 or len(data) - at < _EOCD_SIZE:
        raise _refuse(filepath, "no zip end record")
    # zipfile would take the ZIP64 record this locator points to instead.
    if data[max(0, at - _ZIP64_LOCATOR_SIZE):at].startswith(_ZIP64_LOCATOR):
        raise _refuse(filepath, "a ZIP64 archive")
    (_, disk, cd_disk, disk_entries, entries, cd_size, cd_offset,
     _) = struct.unpack("<4s4H2LH", data[at:at + _EOCD_SIZE])
    if 0xFFFF in (disk, disk_entries, entries) or 0xFFFFFFFF in (
            cd_size, cd_offset):
        raise _refuse(filepath, "a ZIP64 or multi-disk archive")
    if disk != 0 or cd_disk != 0 or disk_entries != entries:
        raise _refuse(filepath, "a multi-disk archive")
    if entries > len(ENTRIES):
        raise _refuse(filepath, f"{entries} entries, more than the "
                      f"{len(ENTRIES)} a .keras file holds "
                      f"({', '.join(ENTRIES)})")
    if cd_size > MAX_CENTRAL_DIRECTORY_BYTES:
        raise _refuse(filepath, f"a central directory of {cd_size} bytes, "
                      f"more than {MAX_CENTRAL_DIRECTORY_BYTES}")
    f.seek(0)


def _unsafe_name(name):
    parts = name.replace("\\", "/").split("/")
    return (name.startswith(("/", "\\")) or "\\" in name or "\0" in name
            or ".." in parts or (len(name) > 1 and name[1] == ":"))


def _check_entries(zf, filepath, size):
    """The entries by name, each checked as the module says (sizes against
    the fixed bounds; the weights' bound is the config's, checked later).
    size is the file's: each entry's data must lie inside it (zipfile
    shifts every offset by the bytes it finds missing or extra before the
    central directory, which can make one negative)."""
    found = {}
    if len(zf.infolist()) > len(ENTRIES):
        raise _refuse(filepath, f"{len(zf.infolist())} entries, more than "
                      f"the {len(ENTRIES)} a .keras file holds")
    for info in zf.infolist():
        name = info.filename
        if _unsafe_name(name) or _unsafe_name(info.orig_filename):
            raise _refuse(filepath, f"entry {name!r} names a path outside "
                          "the archive")
        if name not in ENTRIES:
            raise _refuse(filepath, f"unknown entry {name!r} (a .keras file "
                          f"holds {', '.join(ENTRIES)})")
        if name in found:
            raise _refuse(filepath, f"entry {name!r} appears twice")
        # The Unix file type in the high bits, when a writer set one
        # (zipfile's writestr of a bare name sets permissions only).
        file_type = stat.S_IFMT(info.external_attr >> 16)
        if info.is_dir() or file_type not in (0, stat.S_IFREG):
            raise _refuse(filepath, f"entry {name!r} is not a regular file")
        if info.flag_bits & 0x1:
            raise _refuse(filepath, f"entry {name!r} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED,
                                      zipfile.ZIP_DEFLATED):
            raise _refuse(filepath, f"entry {name!r} uses compression method "
                          f"{info.compress_type} (stored or deflated only)")
        if (info.header_offset < 0
                or info.header_offset + info.compress_size > size):
            raise _refuse(filepath, f"entry {name!r} lies outside the file "
                          f"(offset {info.header_offset}, "
                          f"{info.compress_size} bytes)")
        found[name] = info
    for name in (METADATA, CONFIG, WEIGHTS):
        if name not in found:
            raise _refuse(filepath, f"it has no {name}")
    for name, bound in ((METADATA, MAX_METADATA_BYTES),
                        (CONFIG, MAX_CONFIG_BYTES)):
        if found[name].file_size > bound:
            raise _refuse(filepath, f"{name} declares {found[name].file_size}"
                          f" bytes, more than {bound}")
    return found


def _read_entry(zf, info, bound, filepath, out=None):
    """The entry's bytes (or copied into the file out), refusing one that
    declares more than bound; zipfile stops inflating at the declared size
    and checks the CRC."""
    if info.file_size > bound:
        raise _refuse(filepath, f"{info.filename} declares {info.file_size} "
                      f"bytes, more than the {bound} bytes the load budget "
                      "allows for it")
    chunks, total = [], 0
    with zf.open(info) as src:
        while True:
            chunk = src.read(_COPY_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > info.file_size:
                raise _refuse(filepath, f"{info.filename} inflates past its "
                              "declared size")
            if out is None:
                chunks.append(chunk)
            else:
                out.write(chunk)
    if total != info.file_size:
        raise _refuse(filepath, f"{info.filename} is truncated")
    return b"".join(chunks)


def _with_keras_zip(filepath, use):
    """Opens the .keras file filepath, checks it, and calls
    use(zf, entries) with the zipfile and its checked entries by name;
    zip-level corruption becomes ValueError naming the file."""
    filepath = os.fspath(filepath)
    f, size = _open_regular(filepath)
    with f:
        _check_end_record(f, size, filepath)
        try:
            with zipfile.ZipFile(f, "r") as zf:
                return use(zf, _check_entries(zf, filepath, size))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError,
                NotImplementedError, zlib.error) as e:
            raise _refuse(filepath, f"corrupt zip ({e})") from e


def _config_text(zf, entries, filepath):
    data = _read_entry(zf, entries[CONFIG], MAX_CONFIG_BYTES, filepath)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _refuse(filepath, f"{CONFIG} is not UTF-8 ({e})") from e


def _extract_weights(zf, entries, bound, filepath, directory):
    """Copies model.weights.h5 into directory, refusing an entry that
    declares more than bound bytes."""
    path = os.path.join(directory, WEIGHTS)
    with open(path, "xb") as out:
        _read_entry(zf, entries[WEIGHTS], bound, filepath, out)
    return path


def load_keras(filepath, compile):  # noqa: A002 (Keras's spelling)
    """The C++ model (Sequential or Functional) the .keras file holds."""
    def use(zf, entries):
        _read_entry(zf, entries[METADATA], MAX_METADATA_BYTES, filepath)
        config = _config_text(zf, entries, filepath)
        work = tempfile.mkdtemp(prefix="graphgc-keras-")
        try:
            with open(os.path.join(work, CONFIG), "x",
                      encoding="utf-8") as out:
                out.write(config)
            bound = _graphgc.max_weights_file_bytes(config,
                                                    f"{filepath}/{CONFIG}")
            _extract_weights(zf, entries, bound, filepath, work)
            return _graphgc.load_model(work, bool(compile))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return _with_keras_zip(filepath, use)


def load_keras_weights(cpp_model, filepath):
    """Sets cpp_model's weights from the .keras file's model.weights.h5
    (Keras's load_weights of a .keras file)."""
    def use(zf, entries):
        # The bound load_weights itself reads the file within.
        bound = _graphgc.max_load_weights_file_bytes(cpp_model)
        work = tempfile.mkdtemp(prefix="graphgc-keras-")
        try:
            weights = _extract_weights(zf, entries, bound, filepath, work)
            _graphgc.load_weights(cpp_model, weights)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return _with_keras_zip(filepath, use)


def save_weights(cpp_model, filepath, max_shard_size=None):
    filepath = str(filepath)
    if max_shard_size is not None:
        raise NotImplementedError(
            "save_weights: max_shard_size (sharded .weights.json files) is "
            "not supported by graphgc")
    if not filepath.endswith(".weights.h5"):
        raise ValueError("The filename must end in `.weights.h5`. "
                         f"Received: filepath={filepath}")
    _graphgc.save_weights(cpp_model, filepath)


def load_weights(cpp_model, filepath, skip_mismatch=False):
    filepath_str = str(filepath)
    if skip_mismatch:
        raise NotImplementedError(
            "load_weights: skip_mismatch=True is not supported by graphgc; "
            "a mismatch raises ValueError and changes nothing")
    if filepath_str.endswith(".keras"):
        return load_keras_weights(cpp_model, filepath_str)
    if filepath_str.endswith(".weights.h5"):
        return _graphgc.load_weights(cpp_model, filepath_str)
    if is_legacy_h5(filepath_str):
        raise NotImplementedError(
            "load_weights: legacy H5 weights files (`.h5` without "
            "`.weights.h5`) are not supported by graphgc; Keras 3 writes "
            f"`.weights.h5` files. Received: filepath={filepath_str}")
    raise ValueError(
        f"File format not supported: filepath={filepath_str}. "
        "Keras 3 only supports V3 `.keras` files, "
        "`.weights.h5` files, legacy H5 format files "
        "(`.h5` extension), or Orbax checkpoints.")
