#!/usr/bin/env python3
"""The tree's structural rules (docs/guide/development.md, "Structure"), checked on the product
sources (core/, app/, render/). Exits 1 naming every breach; --report prints the measurements
(files naming each mechanism, the longest functions) whether or not they pass.

1. A mechanism is its folder and one registry row: outside the mechanism's own places (its
   folder core/attention/<name>/; its files under app/panels/mechanisms/, every one named with
   its panel's prefix: the panel, its model and its self-registering figures
   (<prefix>_figures.*, app/figures/catalog/mechanism_figures.h); the stated exceptions below), at
   most LIMITS[mechanism] product files name it (a class `Ky...`, an identifier `ky_...`, or the
   string "ky"). The exceptions: the fused kernels (core/kernels/, core/attention/cuda_ops.*,
   core/attention/fused_attention.*), the registry row (core/attention/mechanisms.def), the
   paper reproductions (app/cli/repro/) and the labs (app/cli/labs/, the KY lab panel and its
   figures app/figures/models/ky_lab_figures.*, the KY transform maths core/analysis/ky_transform.*).
2. One include root: every quoted include of a product file starts with app/, core/ or render/.
3. Dependencies point one way: core/ includes no app/ or render/ header, render/ no app/ header
   and no torch, app/gui/ and app/panels/ nothing of app/cli/.
4. No product function longer than MAX_FUNCTION_LINES lines (signature to closing brace).

usage: check_structure.py [--report] [source root]"""
import os
import re
import sys

MAX_FUNCTION_LINES = 120
# Files naming a mechanism outside its own places, at most (the targets: 2 for ky and
# neural; 4 for the Connection Transformer, an architecture the model builder must choose).
TARGETS = {"ky": 2, "neural": 2, "conn": 4}
# What the tree holds today, as a ratchet: a change may lower these, never exceed them. The
# Connection Transformer is named by its config section (config.h/.cpp) and the model builder
# (model.h/.cpp) only: it publishes generic views through its architecture row and monitor.
LIMITS = {"ky": 0, "neural": 0, "conn": 4}
# Identifiers are looked for in the code (comments and strings blanked: a config file
# "ky_fortunes.json" or a paper's title names nothing); the bare name string on the raw text.
PATTERNS = {
    "ky": (re.compile(r'\bKy[A-Z]\w*|\bky_\w+'), re.compile(r'"ky"')),
    "neural": (re.compile(r'\bNeural[A-Z]\w*|\bneural_\w+'), re.compile(r'"neural"')),
    "conn": (re.compile(r'\bConn[A-Z]\w*|\bconn_\w+'), re.compile(r'"conn"')),
}
# A mechanism's own places: its folder, its views, and every file under app/panels/mechanisms/
# that starts with its panel's prefix (the panel, its model, its figures).
OWN = {
    "ky": [r"core/attention/ky/", r"app/panels/mechanisms/ky_connections_"],
    "neural": [r"core/attention/neural/", r"app/panels/mechanisms/neural_"],
    "conn": [r"core/models/conn/", r"app/panels/mechanisms/conn_transformer_"],
}
EXCEPTIONS = [r"core/kernels/", r"core/attention/cuda_ops\.", r"core/attention/fused_attention\.",
              r"core/attention/mechanisms\.def", r"app/cli/repro/", r"app/cli/labs/",
              r"app/panels/mechanisms/ky_lab_", r"app/figures/models/ky_lab_figures\.",
              r"core/analysis/ky_transform\."]
PRODUCT = ("core", "app", "render")
SOURCE = (".h", ".cpp", ".cu", ".cuh", ".def")
GENERATED = {"attnlab_build_info.h"}  # written by CMake into the build tree (cmake/install.cmake)
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
TORCH = re.compile(r'^\s*#\s*include\s*<(torch|ATen|c10)/')


def product_files(root):
    for top in PRODUCT:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(SOURCE):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, root), open(path, encoding="utf-8").read()


def strip_comments_and_strings(text):
    """Comments and string/char literals blanked (newlines kept), so braces inside them do not
    count."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    # Preprocessor lines hold no braces that matter and would run into a signature.
    return re.sub(r"(?m)^[ \t]*#.*$", "", "".join(out))


FUNCTION_HEAD = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?"
                           r"(->\s*[\w:<>,\s*&]+)?$")
NAME = re.compile(r"([~\w:]+)\s*\([^()]*(\([^()]*\)[^()]*)*\)[^()]*$")


def functions(text):
    """(name, first line, line count) of every function body: a brace block opened right after a
    parameter list while no other function body is open (lambdas count toward their function)."""
    code = strip_comments_and_strings(text)
    found, stack, line, start = [], [], 1, 0
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            head = code[start:i].rstrip()
            is_function = not any(kind == "f" for kind, *_ in stack) and FUNCTION_HEAD.search(head)
            if is_function:
                name = NAME.search(head.replace("\n", " "))
                lead = len(code[start:i]) - len(code[start:i].lstrip())
                sig_line = line - code[start + lead:i].count("\n")
                stack.append(("f", name.group(1) if name else "?", sig_line))
            else:
                stack.append(("b", "", line))
            start = i + 1
        elif c == "}":
            if stack:
                kind, name, first = stack.pop()
                if kind == "f":
                    found.append((name, first, line - first + 1))
            start = i + 1
        elif c == ";":
            start = i + 1
    return found


def main(argv):
    report = "--report" in argv
    args = [a for a in argv if a != "--report"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems, naming, longest = [], {m: [] for m in PATTERNS}, []
    for path, text in product_files(root):
        if any(re.match(e, path) for e in EXCEPTIONS):
            pass
        else:
            code = strip_comments_and_strings(text)
            for mechanism, (identifier, string) in PATTERNS.items():
                if any(re.match(o, path) for o in OWN[mechanism]):
                    continue
                hit = identifier.search(code) or string.search(text)
                if hit:
                    naming[mechanism].append((path, hit.group(0)))
        top = path.split("/")[0]
        for line_no, line in enumerate(text.splitlines(), 1):
            inc = INCLUDE.match(line)
            if inc:
                target = inc.group(1)
                first = target.split("/")[0]
                if first not in PRODUCT and target not in GENERATED:
                    problems.append(f"{path}:{line_no}: include \"{target}\" is not spelled from "
                                    f"the one include root (app/, core/ or render/)")
                elif top == "core" and first != "core":
                    problems.append(f"{path}:{line_no}: core/ includes {target}; core depends "
                                    f"on nothing above it")
                elif top == "render" and first == "app":
                    problems.append(f"{path}:{line_no}: render/ includes {target}")
                elif path.startswith(("app/gui/", "app/panels/")) and \
                        target.startswith("app/cli/"):
                    problems.append(f"{path}:{line_no}: {path.split('/')[1]}/ includes {target}; "
                                    f"what the window and the CLI share lives in app/common/")
            if top == "render" and TORCH.match(line):
                problems.append(f"{path}:{line_no}: render/ includes torch")
        if path.endswith((".cpp", ".h", ".cu", ".cuh")):
            for name, first, count in functions(text):
                longest.append((count, f"{path}:{first}", name))
                if count > MAX_FUNCTION_LINES:
                    problems.append(f"{path}:{first}: {name} is {count} lines (at most "
                                    f"{MAX_FUNCTION_LINES}); split it into named steps")
    for mechanism, files in naming.items():
        if len(files) > LIMITS[mechanism]:
            listed = ", ".join(f"{p} ({w})" for p, w in files)
            problems.append(f"{len(files)} product files name the mechanism '{mechanism}' outside "
                            f"its own places (at most {LIMITS[mechanism]}): {listed}")
    if report:
        for mechanism, files in naming.items():
            print(f"files naming {mechanism} outside its places: {len(files)} (limit "
                  f"{LIMITS[mechanism]}, target {TARGETS[mechanism]})")
            for p, w in files:
                print(f"  {p}  ({w})")
        print("longest functions:")
        for count, where, name in sorted(longest, reverse=True)[:12]:
            print(f"  {count:4d}  {name}  {where}")
    for p in problems:
        print(p)
    print(f"check_structure: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
