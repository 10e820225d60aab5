"""A minimal reader of safetensors files (json + numpy only, no safetensors package).

The format: an 8-byte little-endian header length N, N bytes of JSON header
``{name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
"__metadata__": {str: str}}``, then the raw little-endian tensor data; offsets count from the
end of the header. ``attnlab export --run DIR --weights FILE.safetensors`` writes one with
attnlab's parameter names and metadata attnlab_version, config (the resolved config as a JSON
string) and step.
"""
import json
import os

import numpy as np
import torch

# safetensors dtype -> (numpy dtype of the stored bytes, torch dtype of the tensor)
DTYPES = {"F64": ("<f8", torch.float64), "F32": ("<f4", torch.float32),
          "F16": ("<f2", torch.float16), "BF16": ("<u2", torch.bfloat16),
          "I64": ("<i8", torch.int64), "I32": ("<i4", torch.int32), "I16": ("<i2", torch.int16),
          "I8": ("i1", torch.int8), "U8": ("u1", torch.uint8), "BOOL": ("?", torch.bool)}


class SafetensorsError(ValueError):
    pass


def read_safetensors(path):
    """({name: tensor}, metadata {str: str}) of a safetensors file. Raises SafetensorsError
    naming the file and what is wrong (short file, bad header, data out of range)."""
    with open(path, "rb") as f:
        data = f.read()

    def bad(why):
        return SafetensorsError(f"{path}: not a valid safetensors file: {why}")

    if len(data) < 8:
        raise bad(f"{len(data)} bytes, shorter than the 8-byte header length")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise bad(f"its header length {n} runs past the end of the file ({len(data)} bytes)")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise bad(f"its header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    body = memoryview(data)[8 + n:]
    tensors = {}
    for name, info in header.items():
        try:
            stored, dtype = DTYPES[info["dtype"]]
            shape = [int(s) for s in info["shape"]]
            begin, end = (int(o) for o in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise bad(f"tensor {name!r}: needs a known dtype ({', '.join(DTYPES)}), a shape and "
                      f"data_offsets, got {info!r}") from None
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(stored).itemsize
        if not 0 <= begin <= end <= len(body) or end - begin != size:
            raise bad(f"tensor {name!r}: data_offsets [{begin}, {end}] do not hold {shape} "
                      f"{info['dtype']} within the {len(body)} data bytes")
        array = np.frombuffer(body[begin:end], dtype=stored).reshape(shape).copy()
        t = torch.from_numpy(array)
        tensors[name] = t.view(torch.bfloat16) if dtype == torch.bfloat16 else t
    return tensors, metadata


def is_safetensors(path):
    return os.path.isfile(path) and path.endswith(".safetensors")
