"""``attnlab.load``: an attnlab run directory as a PyTorch model, its config, task and probe.

A run directory (``attnlab train --out DIR``) holds config.json (the resolved config: every
key), summary.json (final metrics, "parameters"), checkpoint/model.pt (the final weights) and,
after ``attnlab export --run DIR --weights DIR/weights.safetensors``, the same weights as
safetensors. ``load`` rebuilds the task from the config (the eval set and probe exactly as
attnlab builds them), builds the twin of attnlab's model and loads the weights into it.
"""
import json
import os
import warnings

import torch
import torch.nn.functional as F

from .config import resolve
from .data import make_task
from .models import build_model
from .weights import WeightsError, load_state, read_model_pt, read_weights, saved_buffers

SAFETENSORS_NAME = "weights.safetensors"
MODEL_PT = os.path.join("checkpoint", "model.pt")


class Run:
    """A loaded run. Attributes:
      dir       the run directory (None when loaded from a lone safetensors file)
      config    the resolved config (dict)
      task      the task (its eval set, probe, vocabulary and token labels)
      model     the twin, in eval mode, with the run's weights
      weights   the file the weights came from
      step      the training step of those weights (None when unknown)
      summary   summary.json as a dict (None when absent)
    """

    def __init__(self, run_dir, config, task, model, weights, step, summary):
        self.dir, self.config, self.task, self.model = run_dir, config, task, model
        self.weights, self.step, self.summary = weights, step, summary

    @property
    def device(self):
        return next(iter(self.model.state_dict().values())).device

    @property
    def probe(self):
        """The probe input attnlab shows attention for, without a batch dimension: token ids
        [L] (int64), or for an image task test image 0 as patches [S, patch_dim]."""
        return self.task.probe().to(self.device)

    def probe_labels(self):
        """One label per row of the probe's maps (for an image task: CLS, then row,column)."""
        if self.task.kind == "patches":
            return [self.task.token_label(i) for i in range(len(self.probe) + 1)]
        return [self.task.token_label(int(t)) for t in self.task.probe()]

    def attention(self, inputs=None):
        """Attention patterns of `inputs` (default: the probe), one per layer, no grad."""
        with torch.no_grad():
            return self.model(self.probe if inputs is None else inputs, return_attention=True)[1]

    def parameter_count(self):
        return sum(p.numel() for p in self.model.parameters())

    def evaluate(self, model=None):
        """{"eval_loss", "eval_accuracy"} on attnlab's eval set, computed as attnlab's
        TrainingSession::evaluate: summed cross-entropy over the scored targets (-1 ignored)
        per batch in the model's dtype, accumulated in float64, over the count of scored
        targets. `model`: another model to evaluate (e.g. one with hooks), default run.model."""
        model = model or self.model
        was_training = model.training
        model.eval()
        loss_sum = correct = count = 0.0
        with torch.no_grad():
            for inputs, targets in self.task.eval_set():
                logits = model(inputs.to(self.device))
                flat, tg = logits.reshape(-1, logits.shape[-1]), targets.to(self.device).reshape(-1)
                scored = tg != -1
                loss_sum += F.cross_entropy(flat, tg, ignore_index=-1, reduction="sum").item()
                correct += ((flat.argmax(-1) == tg) & scored).sum().item()
                count += scored.sum().item()
        model.train(was_training)
        return {"eval_loss": loss_sum / max(1.0, count), "eval_accuracy": correct / max(1.0, count)}

    def __repr__(self):
        m = self.config["model"]
        what = "conn" if m["architecture"] == "conn" else "/".join(sorted(set(m["attention"])))
        return (f"<attnlab.Run {self.dir or self.weights}: {self.config['task']['name']} / {what},"
                f" step {self.step}, {self.parameter_count():,} parameters>")


def _read_json(path):
    with open(path) as f:
        return json.load(f)


def load(path, weights=None, device="cpu", ky_impl="dense"):
    """Loads a run.

    path     a run directory written by ``attnlab train --out DIR``, or a lone safetensors
             file written by ``attnlab export --weights`` (its metadata carries the config)
    weights  the weights file to load: default DIR/weights.safetensors when present, else
             DIR/checkpoint/model.pt
    device   where the model goes ("cpu", "cuda", a torch.device)
    ky_impl  ky attention's form, "dense" (L x L hooks) or "unfold" (O(L W) memory)
    Raises FileNotFoundError / ValueError saying what is missing or does not fit."""
    run_dir = None
    if os.path.isdir(path):
        run_dir = path
        cfg_path = os.path.join(path, "config.json")
        if not os.path.isfile(cfg_path):
            raise FileNotFoundError(f"{path} is not an attnlab run directory: it has no "
                                    "config.json (written by `attnlab train --out DIR`)")
        config = resolve(_read_json(cfg_path))
        if weights is None:
            exported = os.path.join(path, SAFETENSORS_NAME)
            weights = exported if os.path.isfile(exported) else os.path.join(path, MODEL_PT)
        if not os.path.isfile(weights):
            raise FileNotFoundError(
                f"{path} has no weights: neither {SAFETENSORS_NAME} nor {MODEL_PT} (a run "
                "stopped before its first checkpoint, or its checkpoint/ was removed)")
    elif os.path.isfile(path) and path.endswith(".safetensors"):
        weights, config = weights or path, None
    else:
        raise FileNotFoundError(f"{path}: no such run directory or safetensors file")

    tensors, metadata = read_weights(weights)
    if config is None:
        if "config" not in metadata:
            raise ValueError(f"{weights} carries no config in its metadata: load its run "
                             "directory instead (attnlab.load(DIR, weights=FILE))")
        config = resolve(json.loads(metadata["config"]))
    elif "config" in metadata:
        theirs = resolve(json.loads(metadata["config"]))
        if (theirs["model"], theirs["task"]) != (config["model"], config["task"]):
            warnings.warn(f"{weights} was exported from a run with another model or task "
                          f"config than {run_dir}/config.json; loading it into this run's model")

    task = make_task(config)
    model = build_model(config, task, ky_impl)
    # A file without buffers (conn.slots: fixed, not a parameter) takes them from model.pt.
    fallback = None
    model_pt = os.path.join(run_dir, MODEL_PT) if run_dir else None
    lacking = [k for k in saved_buffers(model) if k not in tensors]
    if lacking and weights.endswith(".safetensors") and model_pt and os.path.isfile(model_pt):
        fallback = read_model_pt(model_pt)
    if run_dir is None and lacking:  # (a run directory says it in load_state)
        raise WeightsError(f"{weights} has no {', '.join(lacking)} (a buffer, not a parameter): "
                           "a lone file cannot rebuild this model; load its run directory, "
                           "attnlab.load(DIR, weights=FILE), which takes it from model.pt")
    try:
        load_state(model, tensors, weights, fallback)
    except WeightsError as e:
        raise WeightsError(f"{e}. The config and the weights disagree: a run written by another "
                           "attnlab version, or a file from another run?") from None
    model.to(device).eval()

    summary = step = None
    if run_dir and os.path.isfile(os.path.join(run_dir, "summary.json")):
        summary = _read_json(os.path.join(run_dir, "summary.json"))
    if "step" in metadata:
        step = int(metadata["step"])
    elif run_dir and os.path.isfile(os.path.join(run_dir, "checkpoint", "state.json")):
        step = _read_json(os.path.join(run_dir, "checkpoint", "state.json")).get("step")
    if run_dir and weights.endswith(".safetensors") and "step" in metadata:
        state = os.path.join(run_dir, "checkpoint", "state.json")
        ckpt_step = _read_json(state).get("step") if os.path.isfile(state) else None
        if ckpt_step is not None and ckpt_step != step:
            warnings.warn(f"{weights} holds step {step}, the run's checkpoint step {ckpt_step} "
                          "(trained on after the export?): pass weights=.../checkpoint/model.pt "
                          "for the newest")
    return Run(run_dir, config, task, model, weights, step, summary)
