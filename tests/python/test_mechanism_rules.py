#!/usr/bin/env python3
"""The Python package applies attnlab's mechanism rules from the registry's table, not from
copies of its own (issue 47, "each rule lives once"):

  - every config below resolves to the same model.attention in attnlab (`attnlab_mechanisms_json
    --resolve FILE`, the C++ parser) and in attnlab.config.resolve, or both refuse it with the
    same message (neural placed after layer 0 with placement "first-layer", one name expanded,
    lists kept, a second mechanism beside it);
  - attnlab.Transformer builds from an unresolved model section what the resolved one names
    (dot attention after a first-layer neural layer) and takes a resolved one unchanged;
  - the package's defaults are the table's (neural, ky, linear-sim), and no module of the package
    spells the placement rule itself;
  - a rule changed in the table changes the package: with the table's neural rule edited in a
    copy of the package (placement "all-layers" as the first-layer value), resolve follows it.

Plain python (no pytest): exit 0 when every check passed, 1 otherwise, 77 (skipped) without
torch or without the generator. usage: test_mechanism_rules.py --generator BIN
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tokenize
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PACKAGE_DIR = os.environ.get("ATTNLAB_PYTHON_DIR", os.path.join(REPO, "python"))
sys.path.insert(0, PACKAGE_DIR)

try:
    import torch  # noqa: F401  (attnlab's package imports it)
except ImportError:
    print(f"test_mechanism_rules.py: skipped: {sys.executable} has no torch")
    sys.exit(77)

from attnlab.config import ConfigError, resolve  # noqa: E402
from attnlab.models.transformer import Transformer  # noqa: E402

CONFIGS = {
    "one-name": {"model": {"layers": 3, "attention": "neural"}},
    "all-layers": {"model": {"layers": 3, "attention": "neural",
                             "attention_options": {"neural": {"placement": "all-layers"}}}},
    "deeper": {"model": {"layers": 2, "attention": ["dot", "neural"]}},
    "deeper-3": {"model": {"layers": 3, "attention": ["neural", "ky", "neural"]}},
    "list-first": {"model": {"layers": 2, "attention": ["neural", "dot"]}},
    "list-all": {"model": {"layers": 2, "attention": ["neural", "neural"],
                           "attention_options": {"neural": {"placement": "all-layers"}}}},
    "one-layer": {"model": {"layers": 1, "attention": "neural"}},
    "beside-ky": {"model": {"layers": 3, "attention": "neural",
                            "attention_options": {"ky": {"window": 4}}}},
    "dot": {"model": {"layers": 2, "attention": "dot"}},
}

failures = []


def check(name, fn):
    try:
        fn()
        print(f"ok   {name}")
    except Exception:  # noqa: BLE001 - report every failure, keep going
        failures.append(name)
        print(f"FAIL {name}\n{traceback.format_exc()}")


def cpp_resolve(generator, config, tmp):
    """(attention list, None) or (None, refusal message without the file prefix)."""
    path = os.path.join(tmp, "config.json")
    with open(path, "w") as f:
        json.dump(config, f)
    p = subprocess.run([generator, "--resolve", path], capture_output=True, text=True)
    if p.returncode == 0:
        return json.loads(p.stdout), None
    assert p.returncode == 2, (p.returncode, p.stderr)
    message = p.stderr.strip()
    assert message.startswith(path + ": "), message
    return None, message[len(path) + 2:]


def py_resolve(config):
    try:
        return resolve(config, "config.json")["model"]["attention"], None
    except ConfigError as e:
        message = str(e)
        assert message.startswith("config.json: "), message
        return None, message[len("config.json: "):]


def check_same_as_attnlab(generator):
    with tempfile.TemporaryDirectory() as tmp:
        refused = 0
        for name, config in CONFIGS.items():
            cpp, py = cpp_resolve(generator, config, tmp), py_resolve(config)
            assert cpp == py, f"{name}: attnlab {cpp}, python {py}"
            refused += cpp[0] is None
        assert refused == 2, refused  # the two "deeper" configs
        assert cpp_resolve(generator, CONFIGS["one-name"], tmp)[0] == ["neural", "dot", "dot"]


def check_transformer_resolves():
    m = resolve({"model": {"layers": 3, "d_model": 16, "heads": 2}})["model"]
    m["attention"] = ["neural"]  # unresolved: one name for every layer
    kinds = [type(b.attention).__name__ for b in Transformer(m, 7, 8).blocks]
    assert kinds == ["NeuralAttention", "DotAttention", "DotAttention"], kinds
    m["attention_options"] = {"neural": {"placement": "all-layers"}}
    kinds = [type(b.attention).__name__ for b in Transformer(m, 7, 8).blocks]
    assert kinds == ["NeuralAttention"] * 3, kinds
    m["attention"], m["attention_options"] = ["dot", "neural", "dot"], {}
    try:
        Transformer(m, 7, 8)
    except ValueError as e:
        assert "model.attention[1] is \"neural\"" in str(e), e
    else:
        raise AssertionError("a deeper neural layer was built")


def check_defaults_from_table():
    from attnlab.mechanisms import MECHANISMS, option_defaults
    from attnlab.models.ky import KY_DEFAULTS
    from attnlab.models.neural import NEURAL_DEFAULTS
    assert list(MECHANISMS) == ["dot", "ky", "neural", "pseudo", "semi-fusion", "gaussian",
                                "linear-sim"], list(MECHANISMS)
    assert NEURAL_DEFAULTS == option_defaults("neural")
    assert NEURAL_DEFAULTS["placement"] == "first-layer" and NEURAL_DEFAULTS["hidden"] == 64
    assert KY_DEFAULTS == option_defaults("ky") and KY_DEFAULTS["window"] == 16
    assert option_defaults("linear-sim")["max_len"] == 256
    # No string constant of the package's code is a value the rules hold (docstrings may say
    # what the rule is).
    rule_values = {"first-layer"}
    for path in glob.glob(os.path.join(PACKAGE_DIR, "attnlab", "**", "*.py"), recursive=True):
        with open(path) as f:
            for t in tokenize.generate_tokens(f.readline):
                if t.type == tokenize.STRING and t.string.strip("'\"") in rule_values:
                    raise AssertionError(f"{path}:{t.start[0]} spells a rule's value itself: "
                                         f"{t.string}")


def check_table_changes_package():
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(PACKAGE_DIR, "attnlab"), os.path.join(tmp, "attnlab"))
        path = os.path.join(tmp, "attnlab", "mechanisms.json")
        with open(path) as f:
            doc = json.load(f)
        for row in doc["mechanisms"]:
            if row["first_layer"]:
                row["first_layer"]["value"] = "all-layers"
        with open(path, "w") as f:
            json.dump(doc, f)
        code = ("import json, attnlab; print(json.dumps(attnlab.resolve({'model': {'layers': 3, "
                "'attention': 'neural', 'attention_options': {'neural': {'placement': "
                "'all-layers'}}}})['model']['attention']))")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=tmp))
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout) == ["neural", "dot", "dot"], p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True, help="the attnlab_mechanisms_json binary")
    args = ap.parse_args()
    if not os.path.exists(args.generator):
        print(f"test_mechanism_rules.py: skipped: no generator at {args.generator}")
        return 77
    check("python resolves every config as attnlab does", lambda: check_same_as_attnlab(
        args.generator))
    check("the Transformer builds the resolved layout", check_transformer_resolves)
    check("the package's defaults are the table's", check_defaults_from_table)
    check("a rule changed in the table changes the package", check_table_changes_package)
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
