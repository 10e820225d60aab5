"""attnlab's config as a plain dict.

A run directory's config.json is attnlab's resolved config: every key, defaults included, and
``model.attention`` one name per layer. That is what ``attnlab.load`` uses as is. A config file
as written by hand (assets/configs/*.json) lists only what differs from the defaults below
(core/config/config.h); ``resolve`` fills them in the way attnlab's parser does.
"""
import copy
import json
import os

from .errors import ConfigError
from .mechanisms import resolve_layers

DEFAULTS = {
    "name": "experiment", "seed": 1, "device": "auto", "threads": 0,
    "task": {"name": "copy", "length": 8, "vocab": 10, "modulus": 23, "train_fraction": 0.8,
             "text_path": "/usr/share/games/fortunes", "context": 128, "eval_fraction": 0.1,
             "split": "tail", "validation_fraction": 0.05,
             "data_dir": "/usr/share/datasets/fashion-mnist", "patch": 7, "shift": 0,
             "train_examples": 0, "test_examples": 0, "validation_examples": 0},
    "model": {"architecture": "transformer", "d_model": 64, "heads": 4, "layers": 2,
              "mlp_ratio": 4, "dropout": 0.0, "attention": ["dot"], "head": "lm", "classes": 0,
              "attention_options": {}, "position": "learned", "rope_base": 10000.0,
              "conn": {"slots": 32, "steps": 4, "init_std": 0.01, "mixing": "slots",
                       "variant": "linear", "connection_heads": 1, "regularization": 1e-4,
                       "control": "norm-bound", "limit": 0.95, "track": True,
                       "eigen_every": 50, "matrix_every": 10, "link_threshold": 0.1}},
    "train": {"steps": 2000, "batch_size": 32, "lr": 3e-3, "min_lr_ratio": 0.1, "warmup": 100,
              "weight_decay": 0.01, "beta1": 0.9, "beta2": 0.98, "grad_clip": 1.0,
              "eval_every": 100, "eval_batches": 8, "record_every": 100,
              "keep_checkpoints": 0},
}


def merged(base, over):
    """base with over's keys written over it, nested dicts merged."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


# attnlab's ranges (core/config/config.cpp) of the keys that size a model, its task or its eval
# set: checked before anything is built from them (a config may come from a file sent to you).
RANGES = {("task", "length"): (1, 256), ("task", "vocab"): (2, 8192),
          ("task", "modulus"): (2, 1000), ("task", "context"): (2, 4096),
          ("task", "patch"): (1, 28), ("task", "test_examples"): (0, 10000),
          ("model", "d_model"): (1, 8192), ("model", "heads"): (1, 128),
          ("model", "layers"): (1, 64), ("model", "mlp_ratio"): (1, 16),
          ("model", "classes"): (0, 100000), ("model", "conn", "slots"): (1, 4096),
          ("model", "conn", "steps"): (0, 64), ("model", "conn", "connection_heads"): (1, 64),
          ("train", "batch_size"): (1, 65536), ("train", "eval_batches"): (1, 100000),
          ("seed",): (0, 1 << 53)}


def check_sizes(c, source="the config"):
    """Raises ConfigError naming `source` and the key when a section is not an object, or a key
    of RANGES is not an integer in attnlab's range (or model.d_model is not a multiple of
    model.heads, or model.attention is not a name or a list of names)."""
    for section in ("task", "model", "train"):
        if not isinstance(c.get(section), dict):
            raise ConfigError(f"{source}: \"{section}\" must be a JSON object")
    for key in ("conn", "attention_options"):
        if not isinstance(c["model"].get(key), dict):
            raise ConfigError(f"{source}: \"model.{key}\" must be a JSON object")
    for path, (lo, hi) in RANGES.items():
        v = c
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        if type(v) is not int or not lo <= v <= hi:
            raise ConfigError(f"{source}: {'.'.join(path)} is {str(v)[:40]}, not an integer in "
                              f"attnlab's range {lo}..{hi}")
    m = c["model"]
    if m["d_model"] % m["heads"]:
        raise ConfigError(f"{source}: model.d_model {m['d_model']} is not a multiple of "
                          f"model.heads {m['heads']}")
    names = m["attention"]
    if not (isinstance(names, str) or (isinstance(names, list) and 1 <= len(names) <= 64
                                       and all(isinstance(n, str) for n in names))):
        raise ConfigError(f"{source}: model.attention must be a mechanism name or a list of "
                          "1 to 64 names")


def resolve(raw, source="the config"):
    """A config dict as attnlab resolves it: defaults filled in, and ``model.attention`` one name
    per layer as attnlab runs it: the mechanisms' layout rules applied from the registry's table
    (mechanisms.resolve_layers; neural's "first-layer" placement, the default, expands one name
    to neural, dot, dot, ...). Validation is attnlab's job: this trusts the config it is given,
    but for the layout rules' refusals, which would otherwise build another model than
    attnlab's, and the sizes (check_sizes): ConfigError naming `source` (the file the config
    came from) and the key."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a config is a JSON object, not a {type(raw).__name__}")
    c = merged(DEFAULTS, raw)
    check_sizes(c, source)
    if "record_every" not in raw.get("train", {}):
        c["train"]["record_every"] = c["train"]["eval_every"]
    m = c["model"]
    try:
        m["attention"] = resolve_layers(m["attention"], m["layers"], m["attention_options"])
    except ValueError as e:
        raise ConfigError(f"{source}: {e}") from None
    if m["head"] == "classifier" and not m["classes"]:
        m["classes"] = 10  # the task's class count (Fashion-MNIST's, the only image task)
    return c


def load_config(path):
    """A config file (hand-written or resolved) as a resolved dict."""
    with open(path) as f:
        return resolve(json.load(f), path)


def shipped_config_path(name, repo=None):
    """assets/configs/NAME.json of the source tree this package sits in (or `repo`)."""
    repo = repo or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(repo, "assets", "configs", name + ".json")
