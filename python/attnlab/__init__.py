"""attnlab in PyTorch: load a run that attnlab trained and continue it as a plain nn.Module.

    import attnlab
    run = attnlab.load("runs/copy-1")     # a run directory written by `attnlab train --out DIR`
    early = attnlab.load("runs/copy-1", step=200)  # a checkpoint the run kept (train.keep_checkpoints)
    run.model                             # torch.nn.Module: attnlab's architecture, final weights
    run.config                            # the resolved config (dict)
    run.probe                             # the probe input the window shows attention for
    run.evaluate()                        # {"eval_loss", "eval_accuracy"} on attnlab's eval set
    logits, maps = run.model(inputs, return_attention=True)
    logits, cache = run.cache(inputs)     # every hook point's value: cache["block0.hook_resid_post"]

Pure Python on torch and numpy. Install it with
``pip install --no-index --no-build-isolation ./python`` (in a venv made with
``--system-site-packages`` to use the machine's torch), or put python/ on PYTHONPATH. The guide is
docs/guide/python.md (hook names, the parameter naming scheme, what matches attnlab and how
closely, the limits a run's files are checked against). Weights are read from safetensors
files only: nothing this package reads from a run directory can run code.
"""
from . import limits
from .config import load_config, resolve
from .data import make_task
from .errors import (AttnlabError, ConfigError, OldFormatError, SafetensorsError,
                     WeightsError)
from .hooks import HookPoint, hook_names, hooks, run_with_cache
from .models import build_model
from .run import Run, kept_steps, load
from .safetensors import read_safetensors, read_safetensors_metadata
from .weights import expected_tensors, load_state, read_weights, saved_buffers



def _version():
    """The installed package's version (attnlab/_version.py, written by setup.py), else the
    source tree's VERSION file: the version CMake gives the attnlab program too."""
    try:
        from ._version import version
        return version
    except ImportError:
        import os
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "VERSION")
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return "unknown"


__version__ = _version()
__all__ = ["load", "Run", "hooks", "hook_names", "HookPoint", "run_with_cache", "kept_steps", "build_model", "make_task",
           "load_config", "resolve", "read_safetensors", "read_safetensors_metadata",
           "read_weights", "expected_tensors", "load_state", "saved_buffers", "limits",
           "AttnlabError", "ConfigError", "WeightsError", "SafetensorsError", "OldFormatError"]
