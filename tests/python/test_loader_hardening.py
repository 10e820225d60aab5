#!/usr/bin/env python3
"""attnlab.load opens a run someone sent you without running its code or believing its sizes
(issue 46, findings 1, 2 and 8 on the Python side).

Each check builds its hostile file here, byte by byte (a safetensors writer of these tests' own,
tests/python/harness.py, independent of the package's reader), and asserts the refusal: an
attnlab error (attnlab.AttnlabError, a ValueError), never a raw ValueError, TypeError, KeyError
or JSONDecodeError, whose message names the file and the tensor (or the config key). The run
directories are written here too, in the checkpoint format attnlab writes
(checkpoint/state.json format_version 2, model.safetensors).

  - no code runs: an old-format run whose model.pt is a TorchScript archive with a __setstate__
    that creates a marker file is refused naming `attnlab migrate --run DIR`, and the
    marker never appears; no module of the package calls a code-executing reader;
  - sizes: a small file whose metadata config claims d_model 65536 x 64 layers, or a model over
    attnlab.limits.MAX_PARAMETERS, is refused in a process capped at 3 GiB of address space
    (asking for the 51.5 GB would fail there), as are shapes, offsets and header lengths past
    the file or past the limits;
  - misreads: I32 declared over float bytes, overlapping offsets, gaps, byte counts that do not
    match shape x dtype, truncation, a bad JSON header, a damaged checkpoint (state.json's
    CRC-32);
  - NaN weights load with a warning naming the tensors;
  - the sizing the checks rely on (the model built on the meta device) equals a real build for
    every shipped config.

Plain python (no pytest): exit 0 when every check passed, 1 otherwise, 77 (skipped) without
torch. ATTNLAB_PYTHON_DIR: the package directory to test (default: this tree's python/).
usage: test_loader_hardening.py [-k SUBSTRING]
"""
import glob
import json
import os
import re
import shutil
import struct
import sys
import warnings
import zlib

# this folder's shared helpers (tests/python/harness.py)
import harness
from harness import PACKAGE_DIR, REPO, run_tests, st_bytes

sys.path.insert(0, PACKAGE_DIR)

try:
    import torch
except ImportError:  # ctest reads 77 as skipped (tests/CMakeLists.txt)
    print(f"test_loader_hardening.py: skipped: {sys.executable} has no torch "
          "(Debian: python3-torch)")
    sys.exit(77)

import attnlab  # noqa: E402

TINY = {"name": "tiny", "seed": 3, "task": {"name": "copy", "length": 4, "vocab": 5},
        "model": {"d_model": 8, "heads": 2, "layers": 1, "mlp_ratio": 2},
        "train": {"steps": 10, "warmup": 0, "batch_size": 4, "eval_batches": 1}}
TINY_CONN = {"name": "tinyconn", "seed": 3, "task": {"name": "copy", "length": 4, "vocab": 5},
             "model": {"architecture": "conn", "d_model": 8, "conn": {"slots": 4, "steps": 1}},
             "train": {"steps": 10, "warmup": 0, "batch_size": 4, "eval_batches": 1}}
QKV = "block0.attention.qkv.weight"
TORCH_NAMES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64",
               torch.int32: "I32", torch.bool: "BOOL"}


# --- files, written here -------------------------------------------------------------------

def entries_of(tensors):
    return [(k, TORCH_NAMES[t.dtype], tuple(t.shape), t.contiguous().numpy().tobytes(), None)
            for k, t in tensors.items()]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def model_tensors(raw, seed=0):
    config = attnlab.resolve(json.loads(json.dumps(raw)))
    torch.manual_seed(seed)
    model = attnlab.build_model(config, attnlab.make_task(config))
    return config, {k: v.detach().clone() for k, v in model.state_dict().items()}


def make_run(root, raw=TINY, name="run"):
    """A run directory as attnlab writes it: config.json, checkpoint/state.json (format 2, with
    the size and CRC-32 of model.safetensors) and checkpoint/model.safetensors."""
    config, tensors = model_tensors(raw)
    run = os.path.join(root, name)
    os.makedirs(os.path.join(run, "checkpoint"))
    with open(os.path.join(run, "config.json"), "w") as f:
        json.dump(config, f)
    data = st_bytes(entries_of(tensors), {"format": "attnlab-checkpoint", "step": "10"})
    write(os.path.join(run, "checkpoint", "model.safetensors"), data)
    state = {"format": "attnlab-checkpoint", "format_version": 2, "step": 10,
             "files": {"model.safetensors": {"size": len(data), "crc32": zlib.crc32(data)}}}
    with open(os.path.join(run, "checkpoint", "state.json"), "w") as f:
        json.dump(state, f)
    return run, config, tensors


def attempt(fn, *args, **kwargs):
    """The exception fn raises, or None."""
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (which one is what is checked)
        return e
    return None


def own_refusal(e, what="it"):
    """Fails unless e is a refusal of attnlab's own error type (a ValueError)."""
    assert e is not None, f"{what} was not refused"
    own = getattr(attnlab, "AttnlabError", None)
    assert own is not None and isinstance(e, own), \
        f"refused with {type(e).__name__}, not attnlab's error type: {e}"
    assert isinstance(e, ValueError), f"{type(e).__name__} is not a ValueError"
    return e


def refused(fn, *args, **kwargs):
    """The exception fn raises; fails when it raises none, or one that is not attnlab's."""
    return own_refusal(attempt(fn, *args, **kwargs),
                       f"{getattr(fn, '__name__', fn)}{args} {kwargs or ''}")


def assert_names(e, *parts):
    for p in parts:
        assert str(p) in str(e), f"the message does not name {p!r}: {e}"


# --- finding 1: nothing runs code ----------------------------------------------------------

EVIL_MODULE = '''
import torch
from typing import Tuple


class Evil(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.x = torch.zeros(1)

    @torch.jit.export
    def __getstate__(self) -> Tuple[torch.Tensor, bool]:
        return (self.x, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[torch.Tensor, bool]) -> None:
        self.training = state[1]
        # torch.from_file(path, shared=True) creates the file: opening the archive writes it
        self.x = state[0] + torch.from_file(MARKER, True, 8)[:1] * 0
'''


def evil_archive(work, marker):
    """A TorchScript archive whose loading creates `marker` (the issue's planted model.pt)."""
    src = os.path.join(work, "evil_src")
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(src, "evilmod.py"), "w") as f:
        f.write(EVIL_MODULE.replace("MARKER", repr(marker)))
    sys.path.insert(0, src)
    try:
        import evilmod
        path = os.path.join(work, "evil.pt")
        torch.jit.script(evilmod.Evil()).save(path)
    finally:
        sys.path.remove(src)
        sys.modules.pop("evilmod", None)
    assert not os.path.exists(marker)
    return path


def old_run(work, name, version, with_export=False):
    run, config, tensors = make_run(work, name=name)
    ckpt = os.path.join(run, "checkpoint")
    os.remove(os.path.join(ckpt, "model.safetensors"))
    marker = os.path.join(work, name + ".marker")
    shutil.copy(evil_archive(work, marker), os.path.join(ckpt, "model.pt"))
    with open(os.path.join(ckpt, "state.json"), "w") as f:
        json.dump({"format": "attnlab-checkpoint", "format_version": version, "step": 10,
                   "files": {"model.pt": {"size": 1, "crc32": 0}}}, f)
    if with_export:
        write(os.path.join(run, "weights.safetensors"),
              st_bytes(entries_of(tensors), {"config": json.dumps(config), "step": "10"}))
    return run, marker


def test_old_format_run_is_refused_and_its_code_never_runs(work):
    for name, version, export in (("v1", 1, False), ("v2_pt_only", 2, False),
                                  ("v1_with_export", 1, True)):
        run, marker = old_run(work, name, version, export)
        e = attempt(attnlab.load, run)
        assert not os.path.exists(marker), f"{name}: opening the run ran its archive's code"
        assert_names(own_refusal(e), run, "old format", f"attnlab migrate --run {run}`",
                     "TorchScript", "can run code")
        e = attempt(attnlab.load, run, weights=os.path.join(run, "checkpoint", "model.pt"))
        assert not os.path.exists(marker), f"{name}: weights=model.pt ran its code"
        own_refusal(e)
    # the archive does run code when opened: the marker is a real witness
    torch.jit.load(os.path.join(work, "v1", "checkpoint", "model.pt"))
    assert os.path.exists(os.path.join(work, "v1.marker"))


def test_no_module_of_the_package_calls_a_code_executing_reader(work):
    pattern = re.compile(r"jit\.load|torch\.load\b|\bpickle\b|\bcPickle\b|\bdill\b|"
                         r"\bmarshal\b|\bshelve\b|allow_pickle|torch\.package|"
                         r"(?<![\w.])(eval|exec)\(")
    hits = []
    for path in glob.glob(os.path.join(PACKAGE_DIR, "attnlab", "**", "*.py"), recursive=True):
        with open(path) as f:
            for i, line in enumerate(f, 1):
                if pattern.search(line):
                    hits.append(f"{os.path.relpath(path, PACKAGE_DIR)}:{i}: {line.strip()}")
    assert not hits, "code-executing readers in the package:\n  " + "\n  ".join(hits)
    assert not hasattr(attnlab, "read_model_pt"), "attnlab.read_model_pt is still public"


def test_a_run_in_the_new_format_loads_exactly(work):
    run, config, tensors = make_run(work)
    loaded = attnlab.load(run)
    assert loaded.weights == os.path.join(run, "checkpoint", "model.safetensors")
    assert loaded.step == 10
    state = loaded.model.state_dict()
    assert set(state) == set(tensors)
    assert all(torch.equal(state[k], tensors[k]) for k in tensors)
    # conn: its buffer conn.slots comes from the checkpoint too
    run, _, tensors = make_run(work, TINY_CONN, "conn")
    state = attnlab.load(run).model.state_dict()
    assert torch.equal(state["conn.slots"], tensors["conn.slots"])


def test_a_damaged_checkpoint_is_refused_by_its_crc(work):
    run, _, _ = make_run(work)
    path = os.path.join(run, "checkpoint", "model.safetensors")
    data = bytearray(open(path, "rb").read())
    data[-3] ^= 0x40  # a weight's byte: the file still parses
    write(path, bytes(data))
    e = refused(attnlab.load, run)
    assert_names(e, path, "CRC-32", "state.json")


# --- finding 8: misreads ------------------------------------------------------------------

def hostile(work, name, entries, config, metadata_config=True, header_extra=None):
    meta = {"config": json.dumps(config), "step": "10"} if metadata_config else {"step": "10"}
    return write(os.path.join(work, name + ".safetensors"),
                 st_bytes(entries, meta, header_extra))


def test_i32_over_float_bytes_is_refused(work):
    run, config, tensors = make_run(work)
    entries = [(k, "I32" if k == QKV else d, s, b, o)
               for k, d, s, b, o in entries_of(tensors)]
    path = hostile(work, "i32", entries, config)
    for args in ((run,), (path,)):  # with its run directory, and as a lone file
        e = refused(attnlab.load, *args, weights=path)
        assert_names(e, path, QKV, "I32", "F32")


def test_other_dtypes_and_shapes_are_refused(work):
    run, config, tensors = make_run(work)
    f64 = [(k, "F64", s, tensors[k].double().numpy().tobytes(), None) if k == QKV else
           (k, d, s, b, o) for k, d, s, b, o in entries_of(tensors)]
    e = refused(attnlab.load, run, weights=hostile(work, "f64", f64, config))
    assert_names(e, "f64.safetensors", QKV, "F64", "F32")
    # a bigger shape with the bytes it needs: the file is consistent, the model is not
    big = [(k, d, (s[0] * 100, s[1]), b * 100, o) if k == "token.weight" else (k, d, s, b, o)
           for k, d, s, b, o in entries_of(tensors)]
    e = refused(attnlab.load, run, weights=hostile(work, "big", big, config))
    assert_names(e, "big.safetensors", "token.weight", "shape")
    extra = entries_of(tensors) + [("stowaway", "F32", (4,), b"\0" * 16, None)]
    e = refused(attnlab.load, run, weights=hostile(work, "extra", extra, config))
    assert_names(e, "extra.safetensors", "stowaway")
    missing = [x for x in entries_of(tensors) if x[0] != "final_ln.bias"]
    e = refused(attnlab.load, run, weights=hostile(work, "missing", missing, config))
    assert_names(e, "missing.safetensors", "final_ln.bias", "missing")


def laid_out(entries, metadata, place):
    """A file whose header gives each tensor the offsets place(name, packed [begin, end]) says,
    its data the tensors packed in order (what each offset then reads is up to `place`)."""
    header, pos = {}, 0
    for k, d, s, b, o in entries:
        header[k] = {"dtype": d, "shape": list(s), "data_offsets": place(k, [pos, pos + len(b)])}
        pos += len(b)
    header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(x[3] for x in entries)


def test_overlapping_offsets_are_refused(work):
    run, config, tensors = make_run(work)
    # block0.ln1.bias reads block0.ln1.weight's bytes (both [8] F32); the file keeps its
    # length with ln1.bias's own bytes left over at the end
    entries = entries_of(tensors)
    a, b = "block0.ln1.weight", "block0.ln1.bias"
    at = {}

    def place(name, packed):
        at[name] = packed
        return at[a] if name == b else packed
    path = write(os.path.join(work, "overlap.safetensors"),
                 laid_out(entries, {"config": json.dumps(config), "step": "10"}, place))
    for args in ((run,), (path,)):
        e = refused(attnlab.load, *args, weights=path)
        assert_names(e, path, "overlap", a, b)


def test_offsets_that_do_not_tile_the_data_are_refused(work):
    run, config, tensors = make_run(work)
    entries = entries_of(tensors)
    # a gap: every tensor from the second on moved 8 bytes on, 8 bytes added at the end
    second = entries[1][0]
    shifted = {}

    def place(name, packed):
        shifted[name] = name == second or bool(shifted) and any(shifted.values())
        return [packed[0] + 8, packed[1] + 8] if shifted[name] else packed
    path = write(os.path.join(work, "gap.safetensors"),
                 laid_out(entries, {"step": "10"}, place) + b"\0" * 8)
    e = refused(attnlab.load, run, weights=path)
    assert_names(e, path, second, "belong to no tensor")
    # trailing bytes after the last tensor
    path = write(os.path.join(work, "tail.safetensors"),
                 st_bytes(entries, {"step": "10"}) + b"\0" * 64)
    e = refused(attnlab.load, run, weights=path)
    assert_names(e, path, "belong to no tensor")
    # a byte count that is not shape x dtype
    short = [(k, d, s, b[:-4] if k == QKV else b, o) for k, d, s, b, o in entries]
    path = write(os.path.join(work, "count.safetensors"), st_bytes(short, {"step": "10"}))
    e = refused(attnlab.load, run, weights=path)
    assert_names(e, path, QKV, "needs")


def test_a_truncated_file_is_refused_naming_the_tensor(work):
    run, config, tensors = make_run(work)
    data = st_bytes(entries_of(tensors), {"config": json.dumps(config), "step": "10"})
    last = list(tensors)[-1]
    path = write(os.path.join(work, "cut.safetensors"), data[:-10])
    for args in ((run,), (path,)):
        e = refused(attnlab.load, *args, weights=path)
        assert_names(e, path, last, "truncated")


def test_malformed_headers_are_refused_naming_the_file(work):
    run, config, tensors = make_run(work)
    good = st_bytes(entries_of(tensors), {"step": "10"})
    n = struct.unpack("<Q", good[:8])[0]
    cases = {
        "badjson": struct.pack("<Q", 5) + b"{\"a\":" + good[8 + n:],
        "notutf8": struct.pack("<Q", 4) + b"\xff\xfe{}" + good[8 + n:],
        "list": struct.pack("<Q", 2) + b"[]",
        "pastend": struct.pack("<Q", 1 << 40) + good[8:],
        "tiny": b"\1\2\3",
        "deep": (lambda t: struct.pack("<Q", len(t)) + t)(b"[" * 100000 + b"]" * 100000),
    }
    for name, data in cases.items():
        path = write(os.path.join(work, name + ".safetensors"), data)
        for args in ((run,), (path,)):
            e = refused(attnlab.load, *args, weights=path)
            assert_names(e, path)
    # entries of the wrong form: each names its tensor
    forms = {"shape_text": {"dtype": "F32", "shape": "abc", "data_offsets": [0, 4]},
             "shape_bool": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]},
             "shape_negative": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]},
             "dtype_unknown": {"dtype": "F128", "shape": [1], "data_offsets": [0, 4]},
             "offsets_one": {"dtype": "F32", "shape": [1], "data_offsets": [0]},
             "offsets_reversed": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]},
             "not_an_object": [1, 2, 3]}
    for tensor, info in forms.items():
        path = write(os.path.join(work, tensor + ".safetensors"),
                     st_bytes(entries_of(tensors), {"step": "10"}, {tensor: info}))
        e = refused(attnlab.load, run, weights=path)
        assert_names(e, path, tensor)
    # a name given twice: the file would mean two things
    text = st_bytes(entries_of(tensors), {"step": "10"})
    n = struct.unpack("<Q", text[:8])[0]
    head = text[8:8 + n].rstrip()
    dup = head[:-1] + b", \"final_ln.bias\": " + json.dumps(
        {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}).encode() + b"}"
    path = write(os.path.join(work, "dup.safetensors"),
                 struct.pack("<Q", len(dup)) + dup + text[8 + n:])
    e = refused(attnlab.load, run, weights=path)
    assert_names(e, path, "final_ln.bias", "twice")
    # metadata that is no object of strings, and a step that is no number
    for name, meta in (("meta_list", ["x"]), ("meta_int", {"step": 10}),
                       ("meta_step", {"step": "ten"})):
        path = write(os.path.join(work, name + ".safetensors"),
                     st_bytes(entries_of(tensors), None, {"__metadata__": meta}))
        e = refused(attnlab.load, run, weights=path)
        assert_names(e, path)


def test_a_header_past_the_stated_limit_is_refused_before_it_is_read(work):
    run, config, tensors = make_run(work)
    limit = attnlab.limits.MAX_HEADER_BYTES
    # a header length past the limit in a file that is that long (sparse: no disk used)
    path = os.path.join(work, "hugeheader.safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", limit + 8))
        f.truncate(limit + 64)
    e = refused(attnlab.load, run, weights=path)
    assert_names(e, path, "MAX_HEADER_BYTES")


def test_bad_run_json_is_refused_naming_the_file(work):
    run, config, tensors = make_run(work, name="badcfg")
    write(os.path.join(run, "config.json"), b"{\"model\": ")
    e = refused(attnlab.load, run)
    assert_names(e, os.path.join(run, "config.json"), "JSON")
    run, config, tensors = make_run(work, name="badstate")
    write(os.path.join(run, "checkpoint", "state.json"), b"\0\1")
    e = refused(attnlab.load, run)
    assert_names(e, os.path.join(run, "checkpoint", "state.json"))
    # a metadata config that is not JSON, or not a config
    for name, text in (("cfgjson", "{"), ("cfglist", "[1]"),
                       ("cfgtype", json.dumps({"model": {"d_model": "wide"}}))):
        path = write(os.path.join(work, name + ".safetensors"),
                     st_bytes(entries_of(tensors), {"config": text}))
        e = refused(attnlab.load, path)
        assert_names(e, path)


def test_nan_weights_load_with_a_warning_naming_them(work):
    run, config, tensors = make_run(work)
    spoiled = dict(tensors)
    spoiled[QKV] = tensors[QKV].clone()
    spoiled[QKV][0, 0] = float("nan")
    spoiled["head.bias"] = tensors["head.bias"].clone()
    spoiled["head.bias"][1] = float("inf")
    path = write(os.path.join(work, "nan.safetensors"),
                 st_bytes(entries_of(spoiled), {"step": "10"}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = attnlab.load(run, weights=path)
    said = [str(w.message) for w in caught if "NaN" in str(w.message)]
    assert said, f"no warning about NaN weights: {[str(w.message) for w in caught]}"
    assert_names(said[0], path, QKV, "head.bias")
    assert torch.isnan(loaded.model.state_dict()[QKV][0, 0])


def test_a_lone_file_without_its_buffer_says_what_is_missing(work):
    config, tensors = model_tensors(TINY_CONN)
    entries = [x for x in entries_of(tensors) if x[0] != "conn.slots"]
    path = hostile(work, "noslots", entries, config)
    e = refused(attnlab.load, path)
    assert_names(e, path, "conn.slots")


# --- finding 2: sizes ---------------------------------------------------------------------

def load_capped(path):
    """attnlab.load(path) in a process capped at 3 GiB of address space: [error type, message,
    attnlab's error?, peak RSS kB]."""
    return harness.load_capped(PACKAGE_DIR, path)


def test_huge_config_in_a_small_file_is_refused_before_allocating(work):
    config, tensors = model_tensors(TINY)
    for name, change in (("wide", {"d_model": 65536, "layers": 64, "heads": 8}),
                         ("limit", {"d_model": 8192, "layers": 64, "heads": 8})):
        claimed = json.loads(json.dumps(config))
        claimed["model"].update(change)
        path = hostile(work, name, entries_of(tensors), claimed)
        assert os.path.getsize(path) < 64 << 10
        kind, message, own, rss_kb = load_capped(path)
        assert own, f"{name}: refused with {kind}, not attnlab's error: {message}"
        assert path in message, f"{name}: the message does not name the file: {message}"
        assert "model.d_model" in message, f"{name}: the message names no config key: {message}"
        assert rss_kb < 1 << 20, f"{name}: {rss_kb} kB resident before the refusal"
    # the parameter limit is the one that refused the config inside attnlab's ranges
    assert "MAX_PARAMETERS" in message, message


def test_shapes_past_the_file_are_refused_before_allocating(work):
    run, config, tensors = make_run(work)
    # a tensor claiming 4 TiB, in a 1 kB file, with no config to compare with
    entries = [("block0.attention.qkv.weight", "F32", (1 << 20, 1 << 20), b"", [0, 4 << 40])]
    path = write(os.path.join(work, "claims.safetensors"), st_bytes(entries, {"step": "1"}))
    e = refused(attnlab.read_safetensors, path)
    assert_names(e, path, QKV)
    kind, message, own, rss_kb = load_capped(path)
    assert own and path in message, f"refused with {kind}: {message}"


def test_sizing_on_the_meta_device_equals_a_real_build(work):
    n = 0
    for path in sorted(glob.glob(os.path.join(REPO, "assets", "configs", "*.json"))):
        config = attnlab.load_config(path)
        try:
            task = attnlab.make_task(config)
        except (OSError, ValueError):  # a dataset this machine lacks
            continue
        want = {k: (tuple(v.shape), v.dtype)
                for k, v in attnlab.build_model(config, task).state_dict().items()}
        assert attnlab.expected_tensors(config, task) == want, path
        n += 1
    assert n >= 5, f"only {n} shipped configs could be checked"


# --- runner -------------------------------------------------------------------------------

def main():
    torch.set_num_threads(2)
    run_tests(globals(), "attnlab_loader_", 6)


if __name__ == "__main__":
    main()
