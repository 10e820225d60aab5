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
closely, the limits a run's files are checked against). Weights are read from safetensors
files only: nothing this package reads from a run directory can run code.
"""
from . import limits
from .config import load_config, resolve
from .data import make_task
from .errors import (AttnlabError, ConfigError, OldFormatError, SafetensorsError,
                     WeightsError)
from .hooks import HookPoint, hook_names, hooks
from .models import build_model
from .run import Run, load
from .safetensors import read_safetensors, read_safetensors_metadata
from .weights import expected_tensors, load_state, read_weights, saved_buffers

__version__ = "0.2.0"
__all__ = ["load", "Run", "hooks", "hook_names", "HookPoint", "build_model", "make_task",
           "load_config", "resolve", "read_safetensors", "read_safetensors_metadata",
           "read_weights", "expected_tensors", "load_state", "saved_buffers", "limits",
           "AttnlabError", "ConfigError", "WeightsError", "SafetensorsError", "OldFormatError"]
