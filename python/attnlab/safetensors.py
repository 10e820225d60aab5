"""A bounded reader of safetensors files (json + numpy only, no safetensors package).

The format: an 8-byte little-endian header length N, N bytes of JSON header
``{name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
"__metadata__": {str: str}}``, then the raw little-endian tensor data; offsets count from the
end of the header. attnlab writes two: checkpoint/model.safetensors (every parameter and buffer
of the model, metadata format "attnlab-checkpoint" and step) and ``attnlab export --run DIR
--weights FILE.safetensors`` (metadata attnlab_version, config, step, run, buffers).

A file is data someone may have sent: everything it claims is checked before memory is asked
for, against attnlab.limits and, when the caller knows the model, against the tensors the model
needs (``expect``): the header's length, every dtype, shape and byte count, and the offsets,
which must tile the data exactly (no overlap, no gap, nothing past the end, as the format
requires). Every refusal is a SafetensorsError naming the file and, where one is at fault, the
tensor.
"""
import json
import math
import os
import stat
import warnings

import numpy as np
import torch

from . import limits
from .errors import SafetensorsError

# safetensors dtype -> (numpy dtype of the stored bytes, torch dtype of the tensor)
DTYPES = {"F64": ("<f8", torch.float64), "F32": ("<f4", torch.float32),
          "F16": ("<f2", torch.float16), "BF16": ("<u2", torch.bfloat16),
          "I64": ("<i8", torch.int64), "I32": ("<i4", torch.int32), "I16": ("<i2", torch.int16),
          "I8": ("i1", torch.int8), "U8": ("u1", torch.uint8), "BOOL": ("?", torch.bool)}
NAME_OF = {torch_dtype: name for name, (_, torch_dtype) in DTYPES.items()}


def dtype_name(torch_dtype):
    """The safetensors name of a torch dtype (F32 for torch.float32)."""
    return NAME_OF.get(torch_dtype, str(torch_dtype))


def _show(name):
    """A tensor's name for a message: quoted, and cut when a file makes it absurdly long."""
    return repr(name if len(name) <= 120 else name[:120] + "...")


def _open_regular(path, bad):
    """The file opened for reading, and its size; refuses what is not a regular file (a FIFO
    would block, /dev/zero never ends) before opening it."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise bad(f"cannot read it ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise bad("it is not a regular file")
    f = open(path, "rb")
    return f, os.fstat(f.fileno()).st_size


def _unique_keys(pairs):
    """json object_pairs_hook: a name given twice would make the file mean two things."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the name {_show(k)} appears twice")
        out[k] = v
    return out


def _read_header(f, size, bad):
    """(header dict without __metadata__, metadata, header length) of an open file."""
    if size < 8:
        raise bad(f"{size} bytes, shorter than the 8-byte header length")
    if size > limits.MAX_WEIGHTS_BYTES:
        raise bad(f"{size:,} bytes, more than the {limits.MAX_WEIGHTS_BYTES:,} bytes a weights "
                  "file may have (attnlab.limits.MAX_WEIGHTS_BYTES)")
    n = int.from_bytes(f.read(8), "little")
    if n > limits.MAX_HEADER_BYTES:
        raise bad(f"its header length {n:,} is more than the {limits.MAX_HEADER_BYTES:,} bytes "
                  "a header may have (attnlab.limits.MAX_HEADER_BYTES)")
    if n > size - 8:
        raise bad(f"its header length {n:,} runs past the end of the file ({size:,} bytes)")
    raw = f.read(n)
    if len(raw) != n:
        raise bad(f"the file ended inside its {n:,}-byte header (changed while read?)")
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
    except UnicodeDecodeError as e:
        raise bad(f"its header is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except (ValueError, RecursionError) as e:  # json.JSONDecodeError is a ValueError
        raise bad(f"its header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise bad(f"its header is a JSON {type(header).__name__}, not an object")
    metadata = header.pop("__metadata__", None)
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise bad("its __metadata__ is not an object of strings")
    if len(header) > limits.MAX_TENSORS:
        raise bad(f"it lists {len(header):,} tensors, more than attnlab.limits.MAX_TENSORS "
                  f"({limits.MAX_TENSORS:,})")
    return header, metadata, n


def _entry(name, info, bad):
    """(dtype name, shape tuple, begin, end) of one header entry, checked for form and for its
    byte count: end - begin must be exactly what its shape and dtype need."""
    def is_count(v):  # a JSON integer (not true/false, not 2.0), not negative
        return type(v) is int and v >= 0
    if not isinstance(info, dict) or not isinstance(info.get("dtype"), str) or \
            not isinstance(info.get("shape"), list) or \
            not isinstance(info.get("data_offsets"), list):
        raise bad(f"tensor {_show(name)}: needs \"dtype\", \"shape\" and \"data_offsets\", got "
                  f"{str(info)[:200]}")
    dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if dtype not in DTYPES:
        raise bad(f"tensor {_show(name)}: unknown dtype {dtype[:40]!r} "
                  f"(known: {', '.join(DTYPES)})")
    if not all(is_count(s) for s in shape) or len(shape) > 16:
        raise bad(f"tensor {_show(name)}: shape {str(shape)[:200]} is not a list of at most 16 "
                  "non-negative integers")
    if len(offsets) != 2 or not all(is_count(o) for o in offsets) or offsets[0] > offsets[1]:
        raise bad(f"tensor {_show(name)}: data_offsets {str(offsets)[:200]} is not [begin, end] "
                  "with 0 <= begin <= end")
    begin, end = offsets
    need = math.prod(shape) * np.dtype(DTYPES[dtype][0]).itemsize  # Python ints: no overflow
    if end - begin != need:
        raise bad(f"tensor {_show(name)}: data_offsets [{begin}, {end}] hold {end - begin:,} "
                  f"bytes, but shape {shape} of {dtype} needs {need:,}")
    return dtype, tuple(shape), begin, end


def _check_expected(entries, expect, optional, bad):
    """Every tensor of the file is one the model has, with its dtype and shape; every tensor
    the model needs is there (but those in `optional`)."""
    for name, (dtype, shape, _, _) in entries.items():
        if name not in expect:
            raise bad(f"tensor {_show(name)}: not a tensor of this model")
        want_shape, want_dtype = expect[name]
        if DTYPES[dtype][1] != want_dtype:
            raise bad(f"tensor {_show(name)}: dtype {dtype}, but this model's tensor is "
                      f"{dtype_name(want_dtype)} (its bytes would be read as other numbers)")
        if shape != tuple(want_shape):
            raise bad(f"tensor {_show(name)}: shape {list(shape)}, but this model's tensor is "
                      f"{list(want_shape)}")
    missing = [k for k in expect if k not in entries and k not in optional]
    if missing:
        more = f" ... ({len(missing)} in all)" if len(missing) > 6 else ""
        raise bad(f"tensor {missing[0]!r}: missing (this model needs "
                  f"{', '.join(missing[:6])}{more})")


def _check_layout(entries, data_bytes, bad):
    """The offsets tile the data: sorted by position, each tensor starts where the one before
    it ends, none runs past the data, and the last ends at the end of the file."""
    pos, before = 0, None
    for name, (_, _, begin, end) in sorted(entries.items(), key=lambda e: (e[1][2], e[1][3])):
        if end > data_bytes:
            raise bad(f"tensor {_show(name)}: data_offsets [{begin}, {end}] run past the "
                      f"{data_bytes:,} data bytes the file holds (truncated?)")
        if begin < pos:
            raise bad(f"tensor {_show(name)}: data_offsets [{begin}, {end}] overlap tensor "
                      f"{_show(before)}'s bytes (up to {pos})")
        if begin > pos:
            raise bad(f"tensor {_show(name)}: data_offsets start at {begin}, leaving bytes "
                      f"[{pos}, {begin}) that belong to no tensor")
        pos, before = end, name
    if pos != data_bytes:
        raise bad(f"{data_bytes - pos:,} bytes after the last tensor"
                  + (f" ({_show(before)})" if before else "") + " belong to no tensor")


def read_safetensors(path, expect=None, optional=()):
    """({name: tensor}, metadata {str: str}) of a safetensors file.

    expect    {name: (shape, torch dtype)} of the model's tensors (weights.expected_tensors):
              the file's tensors must be these, with these dtypes and shapes, all checked
              before any tensor data is read. None: any tensors (still within the limits).
    optional  names of `expect` the file may lack (buffers another file supplies).
    Raises SafetensorsError naming the file and the tensor; warns (RuntimeWarning) naming the
    tensors that hold NaN or infinite values."""
    def bad(why):
        return SafetensorsError(f"{path}: not a valid safetensors file: {why}")

    f, size = _open_regular(path, bad)
    with f:
        header, metadata, n = _read_header(f, size, bad)
        entries = {name: _entry(name, info, bad) for name, info in header.items()}
        if expect is not None:
            _check_expected(entries, expect, optional, bad)
        data_bytes = size - 8 - n
        _check_layout(entries, data_bytes, bad)
        data = f.read(data_bytes)
        if len(data) != data_bytes:
            raise bad(f"the file ended after {len(data):,} of its {data_bytes:,} data bytes "
                      "(changed while read?)")
    tensors, not_finite = {}, []
    for name, (dtype, shape, begin, end) in entries.items():
        stored, torch_dtype = DTYPES[dtype]
        array = np.frombuffer(data, dtype=stored, count=math.prod(shape), offset=begin)
        if dtype == "BOOL" and (array.view(np.uint8) > 1).any():
            raise bad(f"tensor {_show(name)}: BOOL bytes other than 0 and 1")
        array = array.astype(np.dtype(stored).newbyteorder("="))  # a native, aligned copy
        t = torch.from_numpy(array.reshape(shape))
        t = t.view(torch.bfloat16) if torch_dtype == torch.bfloat16 else t
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            not_finite.append(name)
        tensors[name] = t
    if not_finite:
        more = f" ... ({len(not_finite)} in all)" if len(not_finite) > 6 else ""
        warnings.warn(f"{path}: tensor{'s' if len(not_finite) > 1 else ''} "
                      f"{', '.join(not_finite[:6])}{more} hold NaN or infinite values: the "
                      "model will compute NaN (a diverged run, or a damaged file)",
                      RuntimeWarning, stacklevel=2)
    return tensors, metadata


def read_safetensors_metadata(path):
    """The __metadata__ {str: str} of a safetensors file, reading its header only (bounded as
    read_safetensors bounds it). Raises SafetensorsError naming the file."""
    def bad(why):
        return SafetensorsError(f"{path}: not a valid safetensors file: {why}")

    f, size = _open_regular(path, bad)
    with f:
        return _read_header(f, size, bad)[1]


def is_safetensors(path):
    return os.path.isfile(path) and path.endswith(".safetensors")
