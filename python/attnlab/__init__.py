"""attnlab in PyTorch: load a run that attnlab trained and continue it as a plain nn.Module.

    import attnlab
    run = attnlab.load("runs/copy-1")     # a run directory written by `attnlab train --out DIR`
    run.model                             # torch.nn.Module: attnlab's architecture, final weights
    run.config                            # the resolved config (dict)
    run.probe                             # the probe input the window shows attention for
    run.evaluate()                        # {"eval_loss", "eval_accuracy"} on attnlab's eval set
    logits, maps = run.model(inputs, return_attention=True)

Pure Python on torch and numpy; no build step: put python/ on PYTHONPATH. The guide is
docs/guide/python.md (hook names, the parameter naming scheme, what matches attnlab and how
closely).
"""
from .config import load_config, resolve
from .data import make_task
from .hooks import HookPoint, hook_names, hooks
from .models import build_model
from .run import Run, load
from .safetensors import read_safetensors
from .weights import load_state, read_model_pt, read_weights, saved_buffers

__version__ = "0.1.0"
__all__ = ["load", "Run", "hooks", "hook_names", "HookPoint", "build_model", "make_task",
           "load_config", "resolve", "read_safetensors", "read_model_pt", "read_weights",
           "load_state", "saved_buffers"]
