#!/usr/bin/env python3
"""Continue in Python (issue 48, item 9): attnlab.load(DIR, step=N) and run_with_cache.

Kept checkpoints: attnlab trains a tiny copy run (the built CLI) with train.keep_checkpoints 5
and stops at steps 5 and 10 (`train --until`, then `--resume`), each time exporting the weights
it holds (`attnlab export --weights`); then it resumes to step 20. Checked:
  - attnlab wrote DIR/checkpoints/step-<N>/ at 5, 10, 15 and 20 (the resumes kept adding them),
    and nothing else there;
  - load(DIR, step=N) gives exactly the tensors attnlab exported at step N (read here by a
    safetensors parser of this file's own, not the package's), its eval loss is metrics.csv's
    row for step N (15 too), and they differ from the final weights, which load(DIR) still
    gives, as the step-20 folder does;
  - a step the run did not keep raises attnlab's error naming the kept steps; a bad step value
    and step= with weights= are refused;
  - a kept checkpoint whose header claims a tensor larger than the run's config allows (its
    size and CRC recorded as a save records them, so only the size check can refuse it) is
    refused, naming the file and the tensor, in a process capped at 3 GiB of address space.
run_with_cache, for every mechanism the package builds (each position scheme of dot, ky in
both forms and both edge rules, the image classifier, conn) and a trained run:
  - the logits it returns equal the plain forward's, bit for bit;
  - the last block's hook_resid_post through final_ln and head gives the logits;
    final_ln.hook_normalized through head too;
  - every hook_pattern row sums to 1 (dense ky with zero-pad edges: at most 1, as attnlab's
    maps; ky's unfold form hooks the window band, pads included, which sums to 1);
    conn's two slot softmaxes too;
  - one sequence without the batch dimension gives tensors without it; names= keeps those
    only, and an unknown name raises KeyError; no hook is left on the model.

Plain python (no pytest): exit 0 when every check passed, 1 otherwise, 77 (skipped) without
torch or without the attnlab program. ATTNLAB_PYTHON_DIR: the package directory to test.
usage: test_checkpoints_cache.py [--attnlab PATH] [-k SUBSTRING]
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

# this folder's shared helpers (tests/python/harness.py)
from harness import PACKAGE_DIR, REPO, load_capped, run_tests, st_bytes

sys.path.insert(0, PACKAGE_DIR)

try:
    import numpy as np
    import torch
except ImportError:  # ctest reads 77 as skipped (tests/CMakeLists.txt)
    print(f"test_checkpoints_cache.py: skipped: {sys.executable} has no torch or numpy")
    sys.exit(77)

import attnlab  # noqa: E402

ATTNLAB = sys.argv[sys.argv.index("--attnlab") + 1] if "--attnlab" in sys.argv else \
    os.path.join(REPO, "build", "app", "attnlab")
EXPORTED = (5, 10)  # the --until stops, whose weights attnlab exports
KEPT = (5, 10, 15, 20)  # train.keep_checkpoints 5 over 20 steps
FINAL = 20
NUMPY = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "BOOL": np.bool_}


def attnlab_cli(*args):
    p = subprocess.run([ATTNLAB, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"attnlab {' '.join(args)}: exit {p.returncode}: {p.stderr[-800:]}"


def train_with_kept(work):
    """The run (steps 1..20, train.keep_checkpoints 5: attnlab keeps KEPT), and {step: the
    weights attnlab exported at that step}."""
    run = os.path.join(work, "run")
    exported = {}
    for i, stop in enumerate(EXPORTED):
        start = ["--config", os.path.join(REPO, "assets", "configs", "copy.json"),
                 "--set", f"train.steps={FINAL}", "--set", "train.eval_every=5",
                 "--set", "model.d_model=16", "--set", "train.warmup=2",
                 "--set", "train.keep_checkpoints=5", "--out", run] \
            if i == 0 else ["--resume", run]
        attnlab_cli("train", *start, "--until", str(stop), "-q")
        kept = sorted(os.listdir(os.path.join(run, "checkpoints")))
        assert kept == sorted(f"step-{s}" for s in KEPT if s <= stop), (stop, kept)
        exported[stop] = os.path.join(work, f"export-{stop}.safetensors")
        attnlab_cli("export", "--run", run, "--weights", exported[stop])
    attnlab_cli("train", "--resume", run, "-q")
    return run, exported


def parse_safetensors(path):
    """{name: tensor} of a safetensors file, parsed here (not by the package)."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, e in header.items():
        a, b = e["data_offsets"]
        array = np.frombuffer(data[8 + n + a:8 + n + b], dtype=NUMPY[e["dtype"]])
        out[name] = torch.from_numpy(array.reshape(e["shape"]).copy())
    return out


def eval_loss_at(run, step):
    with open(os.path.join(run, "metrics.csv")) as f:
        rows = [line.strip().split(",") for line in f]
    col = rows[0].index("eval_loss")
    return next(float(r[col]) for r in rows[1:] if int(r[0]) == step)


def refusal(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except attnlab.AttnlabError as e:
        return str(e)
    raise AssertionError(f"{fn.__name__}{args} {kwargs} was not refused")


# --- kept checkpoints ------------------------------------------------------------------------

def test_load_at_a_kept_step_gives_the_weights_attnlab_saved_there(work):
    run, exported = train_with_kept(work)
    final = attnlab.load(run)
    assert final.step == FINAL, final.step
    assert sorted(os.listdir(os.path.join(run, "checkpoints"))) == \
        sorted(f"step-{s}" for s in KEPT)
    assert final.kept_steps() == list(KEPT), final.kept_steps()
    for step in KEPT[:-1]:
        loaded = attnlab.load(run, step=step)
        assert loaded.step == step, (step, loaded.step)
        state = loaded.model.state_dict()
        if step in exported:
            want = parse_safetensors(exported[step])
            assert set(state) == set(want), (step, set(state) ^ set(want))
            for name, t in want.items():
                assert torch.equal(state[name], t), f"step {step}: {name} differs from attnlab's"
        assert any(not torch.equal(state[k], final.model.state_dict()[k]) for k in state), \
            f"step {step}'s weights are the final ones"
        ours, theirs = loaded.evaluate()["eval_loss"], eval_loss_at(run, step)
        assert abs(ours - theirs) <= 1e-5 * theirs, f"step {step}: eval loss {ours} vs {theirs}"
    # the final checkpoint's step loads the final checkpoint, which the last kept one equals
    again = attnlab.load(run, step=FINAL)
    assert all(torch.equal(v, final.model.state_dict()[k])
               for k, v in again.model.state_dict().items())
    last = parse_safetensors(os.path.join(run, "checkpoints", f"step-{FINAL}",
                                          "model.safetensors"))
    assert set(last) == set(final.model.state_dict())
    assert all(torch.equal(v, final.model.state_dict()[k]) for k, v in last.items())


def test_a_step_not_kept_names_the_kept_steps(work):
    run, _ = train_with_kept(work)
    message = refusal(attnlab.load, run, step=7)
    assert "step 7" in message and "5, 10" in message and run in message, message
    assert "train.keep_checkpoints" in message, message
    for bad in (-1, 2.5, "5", True):
        assert "step=" in refusal(attnlab.load, run, step=bad)
    assert "not both" in refusal(attnlab.load, run, step=5,
                                 weights=os.path.join(run, "checkpoint", "model.safetensors"))
    # a run that kept none says so
    shutil.rmtree(os.path.join(run, "checkpoints"))
    assert "no intermediate checkpoints" in refusal(attnlab.load, run, step=5)


def test_a_kept_checkpoint_claiming_more_than_the_config_is_refused_before_allocating(work):
    run, _ = train_with_kept(work)
    kept = os.path.join(run, "checkpoints", "step-5")
    path = os.path.join(kept, "model.safetensors")
    name = "block0.fc1.weight"  # [64, 16] in this config; the file claims 16 GiB
    data = st_bytes([(name, "F32", (1 << 20, 1 << 12), b"", [0, 1 << 34])],
                    {"format": "attnlab-checkpoint", "step": "5"}) + b"\0" * 64
    with open(path, "wb") as f:
        f.write(data)
    state_path = os.path.join(kept, "state.json")
    with open(state_path) as f:
        state = json.load(f)
    state["files"]["model.safetensors"] = {"size": len(data), "crc32": zlib.crc32(data)}
    with open(state_path, "w") as f:
        json.dump(state, f)
    kind, message, own, _ = load_capped(PACKAGE_DIR, run, step=5)
    assert own, f"refused with {kind}, not attnlab's error: {message}"
    assert path in message and name in message, message


# --- run_with_cache ---------------------------------------------------------------------------

def models():
    """(label, model, inputs) for every mechanism and form the package builds, freshly drawn."""
    base = {"task": {"name": "copy", "length": 6, "vocab": 7},
            "model": {"d_model": 16, "heads": 2, "layers": 2, "mlp_ratio": 2}}
    cases = [("dot", {}), ("dot rope", {"position": "rope"}), ("dot alibi", {"position": "alibi"}),
             ("ky", {"attention": "ky", "attention_options": {"ky": {"window": 3}}}),
             ("ky zero-pad", {"attention": "ky",
                              "attention_options": {"ky": {"window": 3, "edges": "zero-pad"}}})]
    cases += [(n, {"attention": n}) for n in attnlab.models.MECHANISMS if n not in ("dot", "ky")]
    cases += [("conn", {"architecture": "conn", "conn": {"slots": 4, "steps": 2}})]
    torch.manual_seed(0)
    for label, change in cases:
        raw = json.loads(json.dumps(base))
        raw["model"].update(change)
        config = attnlab.resolve(raw)
        task = attnlab.make_task(config)
        yield label, attnlab.build_model(config, task).eval(), torch.randint(0, 7, (3, 6))
        if label.startswith("ky"):
            model = attnlab.build_model(config, task, "unfold").eval()
            yield label + " unfold", model, torch.randint(0, 7, (3, 6))
    m = attnlab.resolve({"model": {"d_model": 16, "heads": 2, "layers": 2, "head":
                                   "classifier", "mlp_ratio": 2}})["model"]
    classifier = attnlab.models.Transformer(m, 0, 9, patch_dim=5).eval()
    yield "image classifier", classifier, torch.randn(3, 9, 5)


def check_cache(label, model, inputs):
    with torch.no_grad():
        plain = model(inputs)
        logits, cache = model.run_with_cache(inputs)
    assert torch.equal(logits, plain), f"{label}: the cached run's logits differ"
    assert list(cache) and set(cache) == set(attnlab.hook_names(model)), \
        f"{label}: cached {sorted(cache)}"
    for module in model.modules():
        assert not module._forward_hooks, f"{label}: a hook was left on the model"
    if not model.blocks:  # conn: the two softmaxes over the slots
        for name in ("conn.hook_compress", "conn.hook_expand"):
            assert torch.allclose(cache[name].sum(-1), torch.ones(()), atol=1e-5), label
        return
    with torch.no_grad():
        last = cache[f"block{len(model.blocks) - 1}.hook_resid_post"]
        normalized = model.final_ln(last)
        pick = (lambda x: x[:, 0]) if model.classifier else (lambda x: x)
        assert torch.allclose(model.head(pick(normalized)), logits, atol=1e-5), label
        assert torch.allclose(model.head(pick(cache["final_ln.hook_normalized"])), logits,
                              atol=1e-6), label
    for i in range(len(model.blocks)):
        sums = cache[f"block{i}.attention.hook_pattern"].sum(-1)
        # dense ky with zero-pad edges: pad slots take softmax mass but are no key of the map
        # (unfold's hook sees the whole window band, pads included, which sums to 1)
        if "zero-pad" in label and "unfold" not in label:
            assert (sums <= 1 + 1e-5).all() and (sums < 1 - 1e-3).any(), f"{label}: {sums}"
        else:
            assert torch.allclose(sums, torch.ones(()), atol=1e-5), f"{label} layer {i}: {sums}"


def test_run_with_cache_matches_the_forward_for_every_mechanism(work):
    labels = []
    for label, model, inputs in models():
        check_cache(label, model, inputs)
        labels.append(label)
    assert {"neural", "pseudo", "semi-fusion", "gaussian", "linear-sim", "conn"} <= set(labels)


def test_a_loaded_runs_cache(work):
    run, _ = train_with_kept(work)
    loaded = attnlab.load(run, step=10)
    check_cache("trained dot", loaded.model, next(iter(loaded.task.eval_set()))[0])
    logits, cache = loaded.cache()  # the probe, one sequence: no batch dimension
    assert torch.equal(logits, loaded.model(loaded.probe).detach())
    L = loaded.probe.shape[0]
    assert cache["block0.attention.hook_pattern"].shape == (4, L, L), \
        cache["block0.attention.hook_pattern"].shape
    assert cache["block1.hook_mlp_post"].shape == (L, 64)
    names = ["block1.attention.hook_z", "hook_embed"]
    assert set(loaded.cache(names=names)[1]) == set(names)
    try:
        loaded.cache(names=["blocks.0.attn.hook_pattern"])
        raise AssertionError("an unknown hook name was accepted")
    except KeyError as e:
        assert "block0.attention.hook_pattern" in str(e), e


# --- runner -------------------------------------------------------------------------------

def main():
    if not os.access(ATTNLAB, os.X_OK):
        print(f"test_checkpoints_cache.py: skipped: no attnlab program at {ATTNLAB}")
        sys.exit(77)
    torch.set_num_threads(2)
    run_tests(globals(), "attnlab_kept_", 12)


if __name__ == "__main__":
    main()
