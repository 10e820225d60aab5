"""``attnlab.load``: an attnlab run directory as a PyTorch model, its config, task and probe.

A run directory (``attnlab train --out DIR``) holds config.json (the resolved config: every
key), summary.json (final metrics, "parameters"), checkpoint/ (state.json and
model.safetensors: the final weights) and, after ``attnlab export --run DIR --weights
DIR/weights.safetensors``, the same weights in a file of their own. ``load`` rebuilds the task
from the config (the eval set and probe exactly as attnlab builds them), builds the twin of
attnlab's model and loads the weights into it.

A run directory is data someone may have sent: nothing here opens a file that can run code
(a run in attnlab's old checkpoint format, a TorchScript model.pt, is refused), and every size
a file claims is checked against the run's config and attnlab.limits before it is allocated.
"""
import json
import os
import re
import stat
import warnings
import zlib

import torch
import torch.nn.functional as F

from . import limits
from .config import resolve
from .data import make_task
from .errors import AttnlabError, ConfigError, OldFormatError, WeightsError
from .models import build_model
from .safetensors import read_safetensors_metadata
from .weights import SizingBug, expected_tensors, load_state, read_weights

SAFETENSORS_NAME = "weights.safetensors"
CHECKPOINT = os.path.join("checkpoint", "model.safetensors")
# The checkpoints a run keeps (train.keep_checkpoints): DIR/checkpoints/step-<N>/, each laid out
# as checkpoint/ (state.json, model.safetensors, optimizer.safetensors).
KEPT_DIR = "checkpoints"
_KEPT_NAME = re.compile(r"step-([0-9]{1,15})\Z")
FORMAT_VERSION = 2  # checkpoint/state.json's format_version this package reads


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

    def cache(self, inputs=None, names=None):
        """(logits, cache) of `inputs` (default: the probe), without gradients: the model's
        output and {hook name: tensor} of every hook point (TransformerLens's run_with_cache;
        the names are hook_names(run.model), docs/guide/python.md). `names`: only these (a
        list, or a predicate on the name)."""
        with torch.no_grad():
            return self.model.run_with_cache(self.probe if inputs is None else inputs, names)

    def kept_steps(self):
        """The steps of the checkpoints the run kept (attnlab.load(DIR, step=N) loads one)."""
        return list(kept_steps(self.dir)) if self.dir else []

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
    """A JSON file of the run, bounded (attnlab.limits.MAX_JSON_BYTES, regular files only).
    Raises AttnlabError naming the file."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise AttnlabError(f"{path}: cannot read it ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise AttnlabError(f"{path}: not a regular file")
    if st.st_size > limits.MAX_JSON_BYTES:
        raise AttnlabError(f"{path}: {st.st_size:,} bytes, more than the "
                           f"{limits.MAX_JSON_BYTES:,} a run's JSON file may have "
                           "(attnlab.limits.MAX_JSON_BYTES)")
    with open(path, "rb") as f:
        return _json_loads(f.read(limits.MAX_JSON_BYTES + 1), path)


def _json_loads(text, source):
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text)
    except UnicodeDecodeError as e:
        raise AttnlabError(f"{source}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except (ValueError, RecursionError) as e:  # json.JSONDecodeError is a ValueError
        raise AttnlabError(f"{source}: not valid JSON ({e})") from None


def _checkpoint_state(run_dir, ckpt=None):
    """checkpoint/state.json (or that of `ckpt`, a kept checkpoint's folder) as a dict (None
    when the run has no checkpoint). Refuses a run in attnlab's old format (OldFormatError)
    before anything of it is opened: state.json's format_version below 2, or a model.pt /
    optimizer.pt without model.safetensors."""
    ckpt = ckpt or os.path.join(run_dir, "checkpoint")
    state_path = os.path.join(ckpt, "state.json")
    state = _read_json(state_path) if os.path.lexists(state_path) else None
    if state is not None and not isinstance(state, dict):
        raise AttnlabError(f"{state_path}: not attnlab's checkpoint state (a JSON object)")
    version = state.get("format_version") if state is not None else None
    archives = [n for n in ("model.pt", "optimizer.pt")
                if os.path.lexists(os.path.join(ckpt, n))]
    old_version = state is not None and (type(version) is not int or version < FORMAT_VERSION)
    if old_version or (archives and not os.path.lexists(os.path.join(ckpt, "model.safetensors"))):
        exported = os.path.join(run_dir, SAFETENSORS_NAME)
        hint = (f" (its export {exported} is data only: attnlab.load({exported!r}) opens it)"
                if os.path.isfile(exported) else "")
        where = os.path.relpath(ckpt, run_dir)  # checkpoint, or checkpoints/step-<N>
        raise OldFormatError(
            f"{run_dir}: the checkpoint is in attnlab's old format ({where}/"
            f"{archives[0] if archives else 'state.json'}: format_version "
            f"{version if version is not None else 'none'}), a TorchScript archive that can "
            "run code when opened, so it is not opened. Convert it with `attnlab migrate --run "
            f"{run_dir}` (it reads the archive's tensors as data, never its code){hint}")
    if state is not None and version != FORMAT_VERSION:
        raise AttnlabError(f"{state_path}: checkpoint format_version {version}; this package "
                           f"reads {FORMAT_VERSION} (a newer attnlab wrote it: update python/)")
    return state


def kept_steps(run_dir):
    """{step: folder} of the checkpoints a run directory kept (train.keep_checkpoints:
    DIR/checkpoints/step-<N>/), without the final checkpoint/. Only real folders named
    step-<N> count (no links); more than attnlab.limits.MAX_KEPT_CHECKPOINTS entries in
    checkpoints/ are refused (AttnlabError) rather than listed."""
    root = os.path.join(os.fspath(run_dir), KEPT_DIR)
    if not os.path.isdir(root) or os.path.islink(root):
        return {}
    kept = {}
    with os.scandir(root) as entries:
        for n, entry in enumerate(entries):
            if n >= limits.MAX_KEPT_CHECKPOINTS:
                raise AttnlabError(f"{root}: more than {limits.MAX_KEPT_CHECKPOINTS:,} entries "
                                   "(attnlab.limits.MAX_KEPT_CHECKPOINTS)")
            match = _KEPT_NAME.match(entry.name)
            if match and entry.is_dir(follow_symlinks=False):
                kept[int(match.group(1))] = entry.path
    return dict(sorted(kept.items()))


def _kept_checkpoint(run_dir, config, state, step):
    """The folder of the checkpoint at `step`: a kept one, or checkpoint/ when `step` is the
    final checkpoint's. AttnlabError listing the kept steps when the run has none there."""
    if type(step) is not int or step < 0:
        raise AttnlabError(f"step={step!r}: a training step is an integer >= 0")
    kept = kept_steps(run_dir)
    if step in kept:
        return kept[step]
    final = state.get("step") if isinstance(state, dict) else None
    if step == final:
        return os.path.join(run_dir, "checkpoint")
    setting = config["train"].get("keep_checkpoints")
    raise AttnlabError(
        f"{run_dir}: no checkpoint at step {step}. The run kept "
        + (f"steps {', '.join(map(str, kept))}" if kept else "no intermediate checkpoints")
        + f" ({KEPT_DIR}/step-<N>/; train.keep_checkpoints "
        + (json.dumps(setting) if setting is not None else "not set") + ")"
        + (f"; its final checkpoint is at step {final} (step=None loads it)"
           if final is not None else ""))


def _check_recorded(path, state):
    """The size and CRC-32 state.json recorded for checkpoint/model.safetensors at the save:
    a file damaged or replaced since is refused (WeightsError) before it is parsed."""
    files = state.get("files") if isinstance(state, dict) else None
    want = files.get("model.safetensors") if isinstance(files, dict) else None
    if not isinstance(want, dict) or "size" not in want or "crc32" not in want:
        return
    size = os.stat(path).st_size
    if size != want["size"]:
        raise WeightsError(f"{path}: {size:,} bytes, but state.json recorded {want['size']} at "
                           "the save (damaged or replaced since)")
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    if crc != want["crc32"]:
        raise WeightsError(f"{path}: CRC-32 {crc}, but state.json recorded {want['crc32']} at "
                           "the save (damaged or replaced since)")


def _sized(config, source, ky_impl):
    """(task, {name: (shape, dtype)} of the model's tensors, buffer names), from the config
    alone, nothing allocated for the model. ConfigError naming `source` when it cannot be
    built or is beyond the limits."""
    try:
        task = make_task(config)
        expect, buffers = expected_tensors(config, task, ky_impl, True, source)
    except (AttnlabError, FileNotFoundError, SizingBug):
        raise
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError,
            RuntimeError) as e:
        raise ConfigError(f"{source}: attnlab's model cannot be built from this config "
                          f"({type(e).__name__}: {e})") from None
    return task, expect, buffers


def _metadata_int(metadata, key, source):
    try:
        return int(metadata[key])
    except ValueError:
        raise WeightsError(f"{source}: its metadata {key} {metadata[key][:40]!r} is not an "
                           "integer") from None


def _open_run_dir(path, weights, step):
    """(checkpoint state, checkpoint folder, resolved config, weights file, config file) of the
    run directory `path`: the weights the caller named, else those of the checkpoint kept at
    `step`, else DIR/weights.safetensors when present, else the final checkpoint's."""
    cfg_path = os.path.join(path, "config.json")
    if not os.path.isfile(cfg_path):
        raise FileNotFoundError(f"{path} is not an attnlab run directory: it has no "
                                "config.json (written by `attnlab train --out DIR`)")
    state = _checkpoint_state(path)
    config = resolve(_read_json(cfg_path), cfg_path)
    ckpt_dir = os.path.join(path, "checkpoint")
    if step is not None:
        ckpt_dir = _kept_checkpoint(path, config, state, step)
        state = _checkpoint_state(path, ckpt_dir)
        weights = os.path.join(ckpt_dir, "model.safetensors")
        if not os.path.isfile(weights):
            raise FileNotFoundError(f"{ckpt_dir}: the checkpoint at step {step} has no "
                                    "model.safetensors")
    elif weights is None:
        exported = os.path.join(path, SAFETENSORS_NAME)
        weights = exported if os.path.isfile(exported) else os.path.join(path, CHECKPOINT)
    if not os.path.isfile(weights):
        raise FileNotFoundError(
            f"{path} has no weights: neither {SAFETENSORS_NAME} nor {CHECKPOINT} (a run "
            "stopped before its first checkpoint, or its checkpoint/ was removed)")
    return state, ckpt_dir, config, weights, cfg_path


def load(path, weights=None, device="cpu", ky_impl="dense", step=None):
    """Loads a run.

    path     a run directory written by ``attnlab train --out DIR``, or a lone safetensors
             file written by ``attnlab export --weights`` (its metadata carries the config)
    weights  the weights file to load (safetensors): default DIR/weights.safetensors when
             present, else DIR/checkpoint/model.safetensors
    device   where the model goes ("cpu", "cuda", a torch.device)
    ky_impl  ky attention's form, "dense" (L x L hooks) or "unfold" (O(L W) memory)
    step     load the checkpoint the run kept at this training step (train.keep_checkpoints:
             DIR/checkpoints/step-<N>/), or the final checkpoint when it is at this step;
             default None: the final weights. A step the run did not keep raises
             AttnlabError listing the kept steps (attnlab.kept_steps(DIR) lists them)
    Raises FileNotFoundError for what is not there; OldFormatError for a run in attnlab's old
    checkpoint format (never opened: it can run code); ConfigError, WeightsError or
    SafetensorsError (all attnlab.AttnlabError, a ValueError) naming the file, and the tensor
    or config key, for anything that does not fit or is beyond attnlab.limits. Warns
    (RuntimeWarning) naming tensors that hold NaN or infinite values."""
    path = os.fspath(path)
    run_dir = state = ckpt_dir = None
    if step is not None and not os.path.isdir(path):
        raise AttnlabError(f"{path}: step={step} needs a run directory (its kept checkpoints)")
    if step is not None and weights is not None:
        raise AttnlabError("attnlab.load: pass step= or weights=, not both")
    if os.path.isdir(path):
        run_dir = path
        state, ckpt_dir, config, weights, config_source = _open_run_dir(path, weights, step)
    elif os.path.isfile(path) and path.endswith(".safetensors"):
        weights, config = weights or path, None
    else:
        raise FileNotFoundError(f"{path}: no such run directory or safetensors file")
    weights = os.fspath(weights)
    if not weights.endswith(".safetensors"):
        raise WeightsError(f"{weights}: not a .safetensors file. attnlab.load reads weights from "
                           "safetensors files only (data, never code)")

    metadata = read_safetensors_metadata(weights)  # the header alone, bounded
    if step is not None and "step" in metadata and \
            _metadata_int(metadata, "step", weights) != step:
        raise WeightsError(f"{weights}: holds step {metadata['step'][:20]}, not the step "
                           f"{step} its folder is named for (moved or replaced?)")
    if config is None:
        if "config" not in metadata:
            raise WeightsError(f"{weights} carries no config in its metadata: load its run "
                               "directory instead (attnlab.load(DIR, weights=FILE))")
        config_source = f"{weights} (its metadata's config)"
        config = resolve(_json_loads(metadata["config"], config_source), config_source)
    elif "config" in metadata:
        source = f"{weights} (its metadata's config)"
        theirs = resolve(_json_loads(metadata["config"], source), source)
        if (theirs["model"], theirs["task"]) != (config["model"], config["task"]):
            warnings.warn(f"{weights} was exported from a run with another model or task "
                          f"config than {run_dir}/config.json; loading it into this run's model")

    task, expect, buffers = _sized(config, config_source, ky_impl)
    checkpoint = os.path.join(ckpt_dir, "model.safetensors") if run_dir else None
    is_checkpoint = bool(checkpoint) and os.path.isfile(checkpoint) and \
        os.path.samefile(weights, checkpoint)
    if is_checkpoint:
        _check_recorded(weights, state)
    tensors, metadata = read_weights(weights, expect, optional=buffers)
    # A file without buffers (conn.slots: fixed, not a parameter) takes them from the run's
    # checkpoint.
    fallback = None
    lacking = [k for k in buffers if k not in tensors]
    if lacking and checkpoint and os.path.isfile(checkpoint) and not is_checkpoint:
        _check_recorded(checkpoint, state)
        fallback = read_weights(checkpoint, expect)[0]
    elif lacking:
        raise WeightsError(f"{weights}: tensor {lacking[0]!r} (a buffer, not a parameter) is "
                           "missing, and " + (
                               "the run has no checkpoint/model.safetensors to take it from"
                               if run_dir else "a lone file cannot rebuild this model without "
                               "it; load its run directory, attnlab.load(DIR, weights=FILE), "
                               "which takes it from the checkpoint"))
    model = build_model(config, task, ky_impl)
    try:
        load_state(model, tensors, weights, fallback)
    except WeightsError as e:
        raise WeightsError(f"{e}. The config and the weights disagree: a run written by another "
                           "attnlab version, or a file from another run?") from None
    model.to(device).eval()

    summary = step = None
    summary_path = os.path.join(run_dir, "summary.json") if run_dir else None
    if summary_path and os.path.isfile(summary_path):
        try:
            summary = _read_json(summary_path)
        except AttnlabError as e:  # the metrics are extra: the model loads all the same
            warnings.warn(f"{e}; run.summary is None")
    if "step" in metadata:
        step = _metadata_int(metadata, "step", weights)
    elif isinstance(state, dict):
        step = state.get("step")
    ckpt_step = state.get("step") if isinstance(state, dict) else None
    if run_dir and "step" in metadata and ckpt_step is not None and ckpt_step != step:
        warnings.warn(f"{weights} holds step {step}, the run's checkpoint step {ckpt_step} "
                      "(trained on after the export?): pass weights=.../checkpoint/"
                      "model.safetensors for the newest")
    return Run(run_dir, config, task, model, weights, step, summary)
