#!/usr/bin/env python3
"""check_structure.py can fail: on a small tree that breaks each rule once it exits 1 naming each
breach, and on the same tree with the breaches mended it exits 0.
usage: check_structure_test.py"""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_structure.py")


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def long_function(name, lines):
    body = "".join(f"  x += {i};\n" for i in range(lines - 3))
    return f"int {name}(int x) {{\n  // a brace in a comment {{ and a string \"}}\"\n{body}}}\n"


def tree(root, broken):
    write(root, "core/base/ok.cpp", '#include "core/base/ok.h"\n' + long_function("short_one", 40))
    write(root, "core/base/ok.h", "#pragma once\nint short_one(int x);\n")
    write(root, "core/attention/ky/ky_attention.cpp", 'const char* n = "ky";\nstruct KyAttention {};\n')
    write(root, "app/gui/view.cpp", '#include "app/common/paths.h"\n')
    write(root, "app/common/paths.h", "#pragma once\n")
    if broken:
        write(root, "core/runs/reader.cpp", 'bool is_ky(const char* s) { return s == "ky"; }\n')
        write(root, "core/views/long.cpp", long_function("too_long", 130))
        write(root, "app/gui/menu.cpp", '#include "app/cli/cli.h"\n')
        write(root, "app/panels/p.cpp", '#include "gui/panel.h"\n')
        write(root, "render/plot/r.cpp", '#include "app/figures/catalog/figures.h"\n#include <torch/torch.h>\n')
        write(root, "core/models/m.cpp", '#include "render/plot/figure.h"\n')


def run(root):
    out = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return out.returncode, out.stdout


def main():
    failures = []
    with tempfile.TemporaryDirectory() as good, tempfile.TemporaryDirectory() as bad:
        tree(good, broken=False)
        tree(bad, broken=True)
        code, text = run(good)
        if code != 0:
            failures.append(f"a clean tree exits {code}:\n{text}")
        code, text = run(bad)
        if code != 1:
            failures.append(f"a broken tree exits {code}, not 1")
        for expected in ["name the mechanism 'ky'", "core/runs/reader.cpp",
                         "too_long is 130 lines", "includes app/cli/cli.h",
                         'include "gui/panel.h" is not spelled from the one include root',
                         "render/ includes app/figures/catalog/figures.h", "render/ includes torch",
                         "core/ includes render/plot/figure.h"]:
            if expected not in text:
                failures.append(f"the broken tree's report lacks: {expected}")
        if "short_one" in text:
            failures.append("a 40-line function was reported")
    for f in failures:
        print("FAIL:", f)
    print(f"check_structure_test: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
