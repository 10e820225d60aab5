#!/usr/bin/env python3
"""The Python package installs with pip, offline, and loads runs from anywhere (issue 51).

In a temporary directory: a copy of python/ and VERSION (pip builds in place, so the source tree
is never written to), a venv made with --system-site-packages (the machine's torch and numpy),
then exactly the documented line

    ENV/bin/pip install --no-index --no-build-isolation SRC/python

From another directory, without PYTHONPATH, the venv's python must import attnlab from the
venv (not from the source tree), report VERSION's version (the one `attnlab --version` prints:
CMake reads the same file), find its package data (mechanisms.json), and load two short runs
attnlab trains here, one of the suite's tasks (suite/mqar_64) among them, and evaluate them to
summary.json's eval loss. The
source tree's python/ and VERSION must be unchanged afterwards (no build/, no egg-info).

usage: test_install.py [--attnlab BIN]
Exit 0 passed, 1 failed, 77 skipped: no torch, or no venv/pip/setuptools/wheel for
/usr/bin/python3 (Debian: python3-venv python3-pip).
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RUNS = ["copy", "suite/mqar_64"]

CHECK = r"""
import json, os, sys
import attnlab
run_dirs, version, prefix = sys.argv[1:-2], sys.argv[-2], sys.argv[-1]
assert os.path.realpath(attnlab.__file__).startswith(prefix), f"imported from {attnlab.__file__}, not the venv"
assert attnlab.__version__ == version, f"__version__ {attnlab.__version__}, VERSION {version}"
assert os.path.isfile(os.path.join(os.path.dirname(attnlab.__file__), "mechanisms.json"))
for d in run_dirs:
    run = attnlab.load(d)
    want = json.load(open(os.path.join(d, "summary.json")))["eval_loss"]
    got = run.evaluate()["eval_loss"]
    assert abs(got - want) <= 1e-5 * abs(want), f"{d}: eval loss {got}, attnlab's {want}"
    print(f"{run!r}: eval loss {got:.6f} (attnlab's {want:.6f})")
print(f"attnlab {attnlab.__version__} from {os.path.dirname(attnlab.__file__)}")
"""


def skip(why):
    print(f"test_install.py: skipped: {why}")
    sys.exit(77)


def tree_state(paths):
    """Every file and folder under `paths`, with size and mtime: what a build would change."""
    state = {}
    for top in paths:
        if os.path.isfile(top):
            st = os.stat(top)
            state[top] = (st.st_size, st.st_mtime_ns)
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != "__pycache__"]  # python itself writes those
            for name in dirs + [f for f in files if not f.endswith(".pyc")]:
                p = os.path.join(folder, name)
                st = os.stat(p)
                state[p] = (st.st_size if name in files else 0, st.st_mtime_ns)
    return state


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        print(f"FAILED: {' '.join(cmd)} (exit {p.returncode})\n{p.stdout[-2000:]}"
              f"{p.stderr[-2000:]}")
        sys.exit(1)
    return p


def train(binary, name, work):
    """A short run of assets/configs/NAME.json (its task and model; 10 steps)."""
    raw = json.load(open(os.path.join(REPO, "assets", "configs", name + ".json")))
    raw["name"], raw["threads"] = name.replace("/", "_"), 2
    t = raw.setdefault("train", {})
    t.update(steps=10, warmup=2, eval_every=10, eval_batches=2)
    cfg, out = os.path.join(work, raw["name"] + ".json"), os.path.join(work, "runs", raw["name"])
    with open(cfg, "w") as f:
        json.dump(raw, f)
    run([binary, "train", "--config", cfg, "--out", out, "-q"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attnlab", default=os.path.join(REPO, "build", "app", "attnlab"))
    args = ap.parse_args()
    python = "/usr/bin/python3"
    # setuptools before pip: pip imports distutils, which setuptools then refuses to replace
    probe = subprocess.run([python, "-c", "import setuptools, wheel, torch, venv, ensurepip, pip"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        skip(f"{python} lacks what the install needs ({probe.stderr.strip().splitlines()[-1]}; "
             "Debian: python3-torch python3-venv python3-pip)")
    sources = [os.path.join(REPO, "python"), os.path.join(REPO, "VERSION")]
    before = tree_state(sources)
    version = open(os.path.join(REPO, "VERSION")).read().strip()
    program = run([os.path.abspath(args.attnlab), "--version"]).stdout.strip()
    if program.split()[:2] != ["attnlab", version]:
        print(f"FAILED: attnlab --version says {program!r}, VERSION {version!r}")
        sys.exit(1)
    with tempfile.TemporaryDirectory(prefix="attnlab_install_") as work:
        src = os.path.join(work, "src")
        shutil.copytree(os.path.join(REPO, "python"), os.path.join(src, "python"),
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        shutil.copy(os.path.join(REPO, "VERSION"), src)
        env_dir = os.path.join(work, "env")
        run([python, "-m", "venv", "--system-site-packages", env_dir])
        pip = [os.path.join(env_dir, "bin", "pip"), "install", "--no-index",
               "--no-build-isolation", os.path.join(src, "python")]
        p = run(pip, cwd=work)
        print("$ pip install --no-index --no-build-isolation ./python\n    "
              + p.stdout.strip().splitlines()[-1])
        runs = [train(os.path.abspath(args.attnlab), n, work) for n in RUNS]
        elsewhere = os.path.join(work, "elsewhere")
        os.makedirs(elsewhere)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        prefix = os.path.realpath(env_dir)
        p = run([os.path.join(env_dir, "bin", "python"), "-c", CHECK, *runs, version,
                 prefix], cwd=elsewhere, env=env)
        print("    " + "\n    ".join(p.stdout.strip().splitlines()))
    after = tree_state(sources)
    if before != after:
        changed = sorted(set(before) ^ set(after)) or \
            sorted(k for k in before if before[k] != after[k])
        print(f"FAILED: the install wrote into the source tree: {changed[:5]}")
        sys.exit(1)
    print("test_install.py: passed (the source tree is unchanged)")


if __name__ == "__main__":
    if importlib.util.find_spec("torch") is None:
        skip(f"{sys.executable} has no torch (Debian: python3-torch)")
    main()
