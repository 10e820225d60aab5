"""Named hook points, TransformerLens-style.

Every intermediate a researcher may want to read or replace passes through a ``HookPoint``, an
``nn.Identity`` submodule with a name such as ``block0.attention.hook_pattern``. Nothing happens
there by default (the model computes exactly what it would without them, and they hold no
parameters); a forward hook registered on one sees the tensor and, by returning another, replaces
it downstream. ``hooks()`` registers a few for the length of a ``with`` block::

    def ablate_head_2(z, hook):          # z: [B, H, L, Dh], each head's output
        z = z.clone(); z[:, 2] = 0
        return z

    with attnlab.hooks(run.model, {"block0.attention.hook_z": ablate_head_2}):
        logits = run.model(inputs)

``run_with_cache`` (TransformerLens's ``run_with_cache``) runs the model once and returns its
logits and every hook point's value::

    logits, cache = run.model.run_with_cache(inputs)
    cache["block0.attention.hook_pattern"]   # [B, H, L, L]

The hook names are listed by ``hook_names(model)`` and in docs/guide/python.md.
"""
import contextlib

import torch.nn as nn


class HookPoint(nn.Identity):
    """An identity with a name: a place to attach forward hooks (see the module docstring)."""


def hook_names(model):
    """Names of every hook point of a model, in forward order."""
    return [name for name, m in model.named_modules() if isinstance(m, HookPoint)]


@contextlib.contextmanager
def hooks(model, functions):
    """Runs ``functions`` ({hook name or HookPoint: fn(tensor, hook) -> tensor or None}) at their
    hook points inside the ``with`` block, and removes them after it, even on an exception.
    A function that returns a tensor replaces the hooked value; one that returns None only
    reads it."""
    points = dict(model.named_modules())
    handles = []
    try:
        for key, fn in functions.items():
            point = points.get(key) if isinstance(key, str) else key
            if not isinstance(point, HookPoint):
                raise KeyError(f"{key!r} is not a hook point of this model; its hook points: "
                               + ", ".join(hook_names(model)))
            handles.append(point.register_forward_hook(
                lambda module, inputs, output, fn=fn: fn(output, module)))
        yield model
    finally:
        for h in handles:
            h.remove()


def run_with_cache(model, inputs, names=None, unbatched=False, detach=True):
    """(logits, cache): the model's forward output on `inputs` and {hook name: tensor} of every
    hook point it passed, in forward order (TransformerLens's run_with_cache). `names`: keep
    only these (a list of names, or a predicate on the name); an unknown name raises KeyError
    listing the model's. `unbatched`: the model was given one sequence without the batch
    dimension, so the cached tensors lose theirs too, as its logits do. `detach`: cache
    tensors detached from the graph (the logits keep theirs). Nothing of the model changes:
    the hooks are removed again, even on an exception."""
    known = hook_names(model)
    if isinstance(names, str):
        names = [names]
    if names is not None and not callable(names):
        unknown = [n for n in names if n not in known]
        if unknown:
            raise KeyError(f"{unknown[0]!r} is not a hook point of this model; its hook points: "
                           + ", ".join(known))
        wanted = set(names)
        names = wanted.__contains__
    cache = {}

    def keep(tensor, hook, name):
        t = tensor.detach() if detach else tensor
        cache[name] = t[0] if unbatched else t

    points = dict(model.named_modules())
    chosen = {n: (lambda t, h, n=n: keep(t, h, n)) for n in known if names is None or names(n)}
    with hooks(model, {points[n]: fn for n, fn in chosen.items()}):
        logits = model(inputs)
    return logits, cache
