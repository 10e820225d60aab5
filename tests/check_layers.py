#!/usr/bin/env python3
"""core/'s folders are layers (docs/design/ARCHITECTURE.md, "Layers of core/"): a file includes
only headers of its own folder or of folders below it, and the torch-free folders include no
torch header, directly or through another header. Exits 1 naming every include that breaks this.
usage: check_layers.py <source root>"""
import os
import re
import sys

# Bottom up. A folder may include its own headers and those of any folder before it.
LAYERS = ["base", "json", "views", "analysis", "kernels", "random", "attention", "config",
          "models", "runs", "data", "training"]
# Compiled without torch (attnlab_base, attnlab_core_torchfree): no torch header may reach them.
TORCH_FREE = {"base", "json", "views", "analysis", "config", "runs"}
TORCH = re.compile(r'#\s*include\s*<(torch|ATen|c10)/')
LOCAL = re.compile(r'#\s*include\s*"(core/[^"]+)"')


def main(root):
    core = os.path.join(root, "core")
    texts = {}
    for folder, _, files in os.walk(core):
        for name in files:
            if name.endswith((".h", ".cpp", ".cu", ".cuh", ".def")):
                path = os.path.join(folder, name)
                texts[os.path.relpath(path, root)] = open(path, encoding="utf-8").read()
    rank = {name: i for i, name in enumerate(LAYERS)}
    problems = []
    unknown = {p.split("/")[1] for p in texts if p.count("/") >= 2} - set(LAYERS)
    for folder in sorted(unknown):
        problems.append(f"core/{folder}/ is in no layer: add it to LAYERS in {sys.argv[0]}")

    torch_memo = {}

    def reaches_torch(header, seen=()):
        """The chain of headers by which `header` includes torch, or None."""
        if header in torch_memo:
            return torch_memo[header]
        text = texts.get(header, "")
        chain = [header] if TORCH.search(text) else None
        for included in LOCAL.findall(text):
            if chain or included in seen:
                break
            sub = reaches_torch(included, seen + (header,))
            if sub:
                chain = [header] + sub
        torch_memo[header] = chain
        return chain

    for path, text in sorted(texts.items()):
        parts = path.split("/")
        if len(parts) < 3:
            continue  # core/pch.h and the like
        mine = parts[1]
        for line_no, line in enumerate(text.splitlines(), 1):
            local = LOCAL.search(line)
            if local:
                target = local.group(1).split("/")[1]
                if target in rank and mine in rank and rank[target] > rank[mine]:
                    problems.append(f"{path}:{line_no}: {mine}/ includes {local.group(1)}, a "
                                    f"higher layer ({target}/); includes point down")
                if mine in TORCH_FREE:
                    chain = reaches_torch(local.group(1))
                    if chain:
                        problems.append(f"{path}:{line_no}: {mine}/ is torch-free, but "
                                        f"{' -> '.join(chain)} includes torch")
            elif mine in TORCH_FREE and TORCH.search(line):
                problems.append(f"{path}:{line_no}: {mine}/ is torch-free, but includes torch")
    # A mechanism is its folder plus its row in mechanisms.def: only core/attention/ may include a
    # mechanism's folder or compare a layer's name with a mechanism's.
    mechanisms = sorted({name for path in texts if path.startswith("core/attention/")
                         for name in [path.split("/")[2]] if path.count("/") == 3} - {"position"})
    names = set(mechanisms)
    for line in texts.get("core/attention/mechanisms.def", "").splitlines():
        row = re.match(r"ATTN_MECHANISM\((\w+)\)", line)
        if row:
            names |= {row.group(1), row.group(1).replace("_", "-")}
    spelled = re.compile(r'(?<!\\)"(' + "|".join(sorted(map(re.escape, names))) + r')"')
    for path, text in sorted(texts.items()):
        if path.startswith("core/attention/"):
            continue
        for line_no, line in enumerate(text.splitlines(), 1):
            local = LOCAL.search(line)
            if local and local.group(1).split("/")[2:3] and local.group(1).count("/") == 3 and \
                    local.group(1).startswith("core/attention/") and \
                    local.group(1).split("/")[2] in mechanisms and path.startswith("core/config/"):
                problems.append(f"{path}:{line_no}: the config parser includes a mechanism's "
                                f"folder ({local.group(1)}); ask core/attention/registry.h")
            if path.startswith("core/config/") and path.endswith(".cpp") and spelled.search(line):
                problems.append(f"{path}:{line_no}: the config parser names a mechanism; its rule "
                                f"belongs in the mechanism's descriptor (resolve hook)")
    for p in problems:
        print(p)
    print(f"check_layers: {len(texts)} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
