"""attnlab's config as a plain dict.

A run directory's config.json is attnlab's resolved config: every key, defaults included, and
``model.attention`` one name per layer. That is what ``attnlab.load`` uses as is. A config file
as written by hand (assets/configs/*.json) lists only what differs from the defaults below
(core/config/config.h); ``resolve`` fills them in the way attnlab's parser does.
"""
import copy
import json
import os

DEFAULTS = {
    "name": "experiment", "seed": 1, "device": "auto", "threads": 0,
    "task": {"name": "copy", "length": 8, "vocab": 10, "modulus": 23, "train_fraction": 0.8,
             "text_path": "/usr/share/games/fortunes", "context": 128, "eval_fraction": 0.1,
             "data_dir": "/usr/share/datasets/fashion-mnist", "patch": 7, "shift": 0,
             "train_examples": 0, "test_examples": 0},
    "model": {"architecture": "transformer", "d_model": 64, "heads": 4, "layers": 2,
              "mlp_ratio": 4, "dropout": 0.0, "attention": ["dot"], "head": "lm", "classes": 0,
              "attention_options": {}, "position": "learned", "rope_base": 10000.0,
              "conn": {"slots": 32, "steps": 4, "init_std": 0.01, "mixing": "slots",
                       "variant": "linear", "connection_heads": 1, "regularization": 1e-4,
                       "control": "norm-bound", "limit": 0.95, "track": True,
                       "eigen_every": 50, "matrix_every": 10, "link_threshold": 0.1}},
    "train": {"steps": 2000, "batch_size": 32, "lr": 3e-3, "min_lr_ratio": 0.1, "warmup": 100,
              "weight_decay": 0.01, "beta1": 0.9, "beta2": 0.98, "grad_clip": 1.0,
              "eval_every": 100, "eval_batches": 8, "record_every": 100},
}


def merged(base, over):
    """base with over's keys written over it, nested dicts merged."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def resolve(raw):
    """A config dict as attnlab resolves it: defaults filled in, ``model.attention`` one name per
    layer, and neural attention's "first-layer" placement (the default) expanded to
    neural, dot, dot, ... when one name was given for every layer (resolve_neural_layout).
    Validation is attnlab's job: this trusts the config it is given, but for the one refusal
    that would otherwise build another model than attnlab's."""
    c = merged(DEFAULTS, raw)
    if "record_every" not in raw.get("train", {}):
        c["train"]["record_every"] = c["train"]["eval_every"]
    m = c["model"]
    names = m["attention"]
    one_name = isinstance(names, str) or len(names) == 1
    if isinstance(names, str):
        names = [names]
    first_layer = m["attention_options"].get("neural", {}).get("placement",
                                                               "first-layer") == "first-layer"
    if one_name:
        names = names * m["layers"]
        if first_layer:
            names = [n if i == 0 or n != "neural" else "dot" for i, n in enumerate(names)]
    elif first_layer and "neural" in names[1:]:
        raise ValueError("model.attention names \"neural\" after layer 0 with "
                         "model.attention_options.neural.placement \"first-layer\" (the "
                         "default), which attnlab refuses: set the placement to \"all-layers\"")
    m["attention"] = list(names)
    if m["head"] == "classifier" and not m["classes"]:
        m["classes"] = 10  # the task's class count (Fashion-MNIST's, the only image task)
    return c


def load_config(path):
    """A config file (hand-written or resolved) as a resolved dict."""
    with open(path) as f:
        return resolve(json.load(f))


def shipped_config_path(name, repo=None):
    """assets/configs/NAME.json of the source tree this package sits in (or `repo`)."""
    repo = repo or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(repo, "assets", "configs", name + ".json")
