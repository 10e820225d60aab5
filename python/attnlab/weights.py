"""attnlab's weights from a run: checkpoint/model.safetensors or a safetensors export.

Both hold every parameter and buffer of the model by attnlab's names
(``block0.attention.qkv.weight``, ``conn.slots``, ...): exactly the twins' state_dict names.
Nothing here opens a file that can run code: a run whose checkpoint is attnlab's old format
(checkpoint/model.pt, a TorchScript archive) is refused, never read (run._checkpoint_state).

Before a file is read, the model's tensors are known from its config alone
(``expected_tensors``: the twin built on PyTorch's meta device, which holds shapes and no
values), so the file's every claim is checked against them and the model's size against
attnlab.limits before a byte is allocated.
"""
import torch
from torch.overrides import TorchFunctionMode

from . import limits
from .errors import ConfigError, WeightsError
from .models import build_model
from .safetensors import read_safetensors

# The factories the twins' constructors call (directly or through torch.nn): on the meta device
# they make tensors with a shape and a dtype and no storage.
_FACTORIES = {torch.empty, torch.zeros, torch.ones, torch.full, torch.rand, torch.randn,
              torch.randint, torch.randperm, torch.arange, torch.eye, torch.tensor,
              torch.as_tensor, torch.linspace, torch.normal, torch.empty_strided}


class _OnMeta(TorchFunctionMode):
    """Within it, every tensor factory makes its tensor on the meta device (torch 1.13 has no
    ``with torch.device("meta")``), whatever device the caller named."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _FACTORIES:
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


class SizingBug(Exception):
    """A tensor got storage while the model was being sized: a bug of this package (a factory
    _FACTORIES lacks), not of the file; never turned into a refusal of the file."""


def expected_tensors(config, task, ky_impl="dense", with_buffers=False, source="the config"):
    """{name: (shape, dtype)} of every tensor the model of `config` saves (its state_dict),
    without allocating them: the twin is built on the meta device. Raises ConfigError when its
    parameter count is beyond attnlab.limits.MAX_PARAMETERS (the message names the config keys
    that set the size, and `source`, where the config came from). with_buffers: also the names
    among them that are buffers (conn.slots)."""
    with _OnMeta():
        model = build_model(config, task, ky_impl)
    state = model.state_dict()
    real = [k for k, t in list(state.items()) + list(model.named_buffers()) if not t.is_meta]
    if real:  # a factory _FACTORIES does not know: the size check would come too late
        raise SizingBug(f"attnlab.weights: {', '.join(real)} allocated while sizing the model")
    count = sum(t.numel() for t in state.values())
    if count > limits.MAX_PARAMETERS:
        m = config["model"]
        keys = (f"model.d_model {m['d_model']}, model.layers {m['layers']}, model.mlp_ratio "
                f"{m['mlp_ratio']}, model.heads {m['heads']}, vocabulary {task.vocab}, input "
                f"length {task.length}")
        if m["architecture"] == "conn":
            keys += f", model.conn.slots {m['conn']['slots']}"
        raise ConfigError(f"{source}: the model of this config has {count:,} parameters and "
                          f"buffers ({4 * count / 2**30:.1f} GiB as float32), more than "
                          f"attnlab.limits.MAX_PARAMETERS ({limits.MAX_PARAMETERS:,}); set by "
                          f"{keys}. Raise the limit to load it on purpose")
    expect = {k: (tuple(t.shape), t.dtype) for k, t in state.items()}
    return (expect, saved_buffers(model)) if with_buffers else expect


def read_weights(path, expect=None, optional=()):
    """({name: tensor}, metadata) of a weights file (safetensors; see read_safetensors)."""
    if not path.endswith(".safetensors"):
        raise WeightsError(f"{path}: not a .safetensors file. attnlab reads weights from "
                           "safetensors files only (data, never code)")
    return read_safetensors(path, expect, optional)


def saved_buffers(model):
    """Names of the buffers that are part of the weights (conn.slots), not the twins' cached
    causal masks (non-persistent)."""
    parameters = dict(model.named_parameters())
    return [k for k in model.state_dict() if k not in parameters]


def load_state(model, tensors, source, fallback=None):
    """Copies attnlab's tensors into the model by name, strictly: every tensor of the model
    must be there with its shape and dtype, and nothing else. Buffers missing from `tensors`
    (a file holding parameters only) come from `fallback` ({name: tensor}) when given.
    Raises WeightsError naming what differs."""
    own = model.state_dict()
    missing = [k for k in own if k not in tensors]
    if missing and fallback:
        buffers = dict(model.named_buffers())
        tensors = dict(tensors)
        for k in missing:
            if k in buffers and k in fallback:
                tensors[k] = fallback[k]
        missing = [k for k in own if k not in tensors]
    unexpected = [k for k in tensors if k not in own]
    shapes = [f"{k}: {tuple(tensors[k].shape)} in the file, {tuple(own[k].shape)} here"
              for k in own if k in tensors and tensors[k].shape != own[k].shape]
    dtypes = [f"{k}: {tensors[k].dtype} in the file, {own[k].dtype} here"
              for k in own if k in tensors and tensors[k].dtype != own[k].dtype]
    if missing or unexpected or shapes or dtypes:
        def some(names, sep=", "):  # a long list would bury the message
            return sep.join(names[:6]) + (f" ... ({len(names)} in all)" if len(names) > 6 else "")
        parts = []
        if missing:
            parts.append("missing " + some(missing))
        if unexpected:
            parts.append("not in this model " + some(unexpected))
        if shapes:
            parts.append("other shapes " + some(shapes, "; "))
        if dtypes:
            parts.append("other dtypes " + some(dtypes, "; "))
        raise WeightsError(f"{source} does not fit the model of this config ("
                           + "; ".join(parts) + ")")
    model.load_state_dict({k: tensors[k] for k in own}, strict=True)
