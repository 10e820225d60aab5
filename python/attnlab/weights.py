"""attnlab's weights from a run: checkpoint/model.pt or a safetensors export.

checkpoint/model.pt is what LibTorch's ``torch::save(module)`` writes: a TorchScript archive of
the module, whose parameters and buffers ``torch.jit.load`` reads back by attnlab's names
(``block0.attention.qkv.weight``, ``conn.slots``, ...): exactly the twins' state_dict names.
A safetensors file (``attnlab export --weights``) holds the same names.
"""
import torch

from .safetensors import read_safetensors


class WeightsError(ValueError):
    pass


def read_model_pt(path):
    """{name: tensor} of every parameter and buffer in a LibTorch torch::save archive."""
    try:
        archive = torch.jit.load(path, map_location="cpu")
    except Exception as e:  # noqa: BLE001 (any failure to read it means the same to the caller)
        raise WeightsError(f"cannot read attnlab's checkpoint {path} with torch.jit.load "
                           f"(torch {torch.__version__}): {e}") from None
    return {name: t.detach().clone()
            for name, t in list(archive.named_parameters()) + list(archive.named_buffers())}


def read_weights(path):
    """({name: tensor}, metadata) of a weights file: safetensors or a model.pt archive."""
    if path.endswith(".safetensors"):
        return read_safetensors(path)
    return read_model_pt(path), {}


def saved_buffers(model):
    """Names of the buffers that are part of the weights (conn.slots), not the twins' cached
    causal masks (non-persistent)."""
    parameters = dict(model.named_parameters())
    return [k for k in model.state_dict() if k not in parameters]


def load_state(model, tensors, source, fallback=None):
    """Copies attnlab's tensors into the model by name, strictly: every tensor of the model
    must be there with its shape, and nothing else. Buffers missing from `tensors` (a file
    holding parameters only) come from `fallback` ({name: tensor}) when given.
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
    if missing or unexpected or shapes:
        def some(names, sep=", "):  # a long list would bury the message
            return sep.join(names[:6]) + (f" ... ({len(names)} in all)" if len(names) > 6 else "")
        parts = []
        if missing:
            parts.append("missing " + some(missing))
        if unexpected:
            parts.append("not in this model " + some(unexpected))
        if shapes:
            parts.append("other shapes " + some(shapes, "; "))
        raise WeightsError(f"{source} does not fit the model of this config ("
                           + "; ".join(parts) + ")")
    model.load_state_dict({k: tensors[k].to(own[k].dtype) for k in own}, strict=True)
