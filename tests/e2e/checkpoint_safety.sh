#!/usr/bin/env bash
# Issue 46, finding 1: opening a run never runs its code. A real trained run is put in attnlab's
# old checkpoint layout (state.json format_version 1, model.pt and optimizer.pt with matching
# size and CRC records, as an attacker would write them), with a model.pt whose TorchScript
# __setstate__ creates a marker file when the archive is opened. Every reader of a run --
# export (--list, --figure, --weights), eval, analyze, train --resume, the window's Open and the
# Python package's attnlab.load -- must refuse it (exit 2, a message naming `attnlab migrate`)
# and the marker must never appear. migrate reads the archives as data only: it refuses the
# planted run (nothing runs, nothing changes) and converts an honest old run, which then resumes
# bit-identically. A control opens the planted archive with LibTorch (Python's torch.jit.load)
# and sees the marker appear: the archive is live, so its absence above means something.
# usage: checkpoint_safety.sh <attnlab> <source dir>
# Needs a python3 with torch (Debian's python3-torch) to plant the archive; exits 77 (skipped)
# without one.
set -u
bin=$1; src=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cli_tmpdir

PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import torch' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "skip: no python3 with torch (apt-get install python3-torch)"; exit 77; }

tiny_config tiny.json 40 10 5
"$bin" train --config tiny.json --out straight -q >log 2>&1 || fatal "train: $(cat log)"
"$bin" train --config tiny.json --out half --until 20 -q >log 2>&1 || fatal "train --until: $(cat log)"

# An honest old-format run (what attnlab wrote before): the hidden tests-only reverse conversion.
cp -r half old
"$bin" migrate --run old --to-old-format-for-tests >log 2>&1 || fatal "to old format: $(cat log)"
"$PY" - old/checkpoint <<'PY' && ok "the old layout: format_version 1, model.pt, optimizer.pt" || bad "old layout"
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "state.json")))
assert s["format_version"] == 1 and set(s["files"]) == {"model.pt", "optimizer.pt"}, s["files"]
assert sorted(os.listdir(d)) == ["model.pt", "optimizer.pt", "state.json"], os.listdir(d)
PY

# The planted run: the honest old run with a model.pt that runs code when opened, and
# state.json's records rewritten to match it (the attacker writes state.json too).
cat >plant.py <<'PY'
# plant.py OUT MARKER: a TorchScript archive whose __setstate__ creates MARKER when opened.
import sys
from typing import Tuple

import torch


class Planted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.x = torch.zeros(1)
        self.mark = sys.argv[2]

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return t

    @torch.jit.export
    def __getstate__(self) -> Tuple[torch.Tensor, str, bool]:
        return (self.x, self.mark, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[torch.Tensor, str, bool]) -> None:
        self.mark = state[1]
        self.x = state[0] + torch.from_file(state[1], True, 1)  # creates the file


torch.jit.script(Planted()).save(sys.argv[1])
PY
marker=$work/marker
cp -r old planted
"$PY" plant.py planted/checkpoint/model.pt "$marker" || fatal "cannot plant the archive"
"$PY" - planted/checkpoint <<'PY' || fatal "cannot rewrite state.json's records"
import json, os, sys, zlib
d = sys.argv[1]
p = os.path.join(d, "state.json")
s = json.load(open(p))
for name in ("model.pt", "optimizer.pt"):
    data = open(os.path.join(d, name), "rb").read()
    s["files"][name] = {"size": len(data), "crc32": zlib.crc32(data)}
json.dump(s, open(p, "w"), indent=1)
PY
[ ! -e "$marker" ] || fatal "planting created the marker already"

tree_sum() { find "$1" -type f ! -name .attnlab.lock -print0 | sort -z | xargs -0 sha256sum | sed "s|$1||"; }
planted_before=$(tree_sum planted)

# refused WHAT CMD...: exit 2, stderr names `attnlab migrate`, no marker, the run unchanged.
refused() {
  local what=$1 rc=0
  shift
  "$@" >out 2>err || rc=$?
  if [ $rc != 2 ]; then bad "$what: exit $rc (want 2): $(head -c 400 err)"
  elif ! grep -qF "attnlab migrate --run" err; then bad "$what: message lacks 'attnlab migrate --run': $(head -c 400 err)"
  elif [ -e "$marker" ]; then bad "$what: RAN THE CHECKPOINT'S CODE (the marker appeared)"; rm -f "$marker"
  elif [ "$(tree_sum planted)" != "$planted_before" ]; then bad "$what: changed the run directory"
  else ok "$what: refused naming attnlab migrate, nothing ran, nothing changed"; fi
}
refused "export --list" "$bin" export --run planted --list
refused "export --figure attention" "$bin" export --run planted --figure attention --out a.pdf
refused "export --weights" "$bin" export --run planted --weights w.safetensors
refused "eval" "$bin" eval --run planted --context 4
refused "analyze --importance" "$bin" analyze --run planted --importance
refused "train --resume" "$bin" train --resume planted --steps 40 -q
[ ! -e a.pdf ] && [ ! -e w.safetensors ] && ok "refused exports wrote no file" || bad "a refused export wrote a file"

# Python: attnlab.load refuses it the same way (needs the package's own reader, python/attnlab).
rc=0
PYTHONPATH=$src/python "$PY" -c 'import sys, attnlab; attnlab.load(sys.argv[1])' planted >out 2>err || rc=$?
if [ $rc = 0 ]; then bad "attnlab.load accepted the old format"
elif [ -e "$marker" ]; then bad "attnlab.load RAN THE CHECKPOINT'S CODE (the marker appeared)"; rm -f "$marker"
elif ! grep -qF "attnlab migrate" err; then bad "attnlab.load: message lacks 'attnlab migrate': $(tail -c 400 err)"
else ok "attnlab.load: refused naming attnlab migrate, nothing ran"; fi

# The window's Open (where there is a window and an Xvfb): refused naming attnlab migrate.
if command -v xvfb-run >/dev/null && "$bin" --help | grep -q "^  gui"; then
  ATTNLAB=$bin
  ATTN_GUI_OPEN_RUN=$work/planted ATTN_GUI_REPORT=$work/report.json XDG_CONFIG_HOME=$work/xdg \
    XDG_DATA_HOME=$work/xdg-data run_xvfb --config tiny.json --panel runs --frames 120 ||
    bad "the window exited with $? on Open of the planted run"
  if "$PY" - report.json <<'PY'; then ok "the window's Open: refused naming attnlab migrate"; else bad "the window's Open was not refused naming attnlab migrate"; fi
import json, sys
r = json.load(open(sys.argv[1]))
assert [x for x in r["runs"] if x["path"].endswith("/planted") and x["open"] == "failed"
        and "attnlab migrate" in x["open_error"]], r.get("runs")
PY
  [ ! -e "$marker" ] && ok "the window's Open ran nothing" || { bad "the window's Open RAN THE CHECKPOINT'S CODE"; rm -f "$marker"; }
else
  echo "skip: the window's Open (no xvfb-run or no window in this build)"
fi

# migrate reads the planted run as data: refused (exit 2, naming the archive and what it holds
# that no data reader follows), nothing ran, nothing changed; --trust (accepted for old scripts)
# changes none of that.
for flags in "" "--trust"; do
  rc=0; "$bin" migrate --run planted $flags >out 2>err || rc=$?
  if [ $rc != 2 ]; then bad "migrate $flags on the planted run: exit $rc (want 2): $(head -c 400 err)"
  elif ! grep -q "model.pt" err || ! grep -q "data-only reader refuses it" err; then
    bad "migrate $flags on the planted run: message does not name model.pt and the refusal: $(head -c 400 err)"
  elif [ -e "$marker" ]; then bad "migrate $flags RAN THE CHECKPOINT'S CODE (the marker appeared)"; rm -f "$marker"
  elif [ "$(tree_sum planted)" != "$planted_before" ]; then bad "migrate $flags changed the planted run"
  else ok "migrate $flags on the planted run: refused as data, nothing ran, nothing changed"; fi
done

# Control: the planted archive is live. Opened with LibTorch (torch.jit.load, as attnlab's old
# migrate --trust did), it runs: so the marker's absence above means nothing was opened that way.
"$PY" -c 'import sys, torch; torch.jit.load(sys.argv[1])' planted/checkpoint/model.pt >out 2>err
[ -e "$marker" ] && ok "control: opening the planted archive with LibTorch runs its code" ||
  bad "control: the planted archive did not run when opened (the checks above prove nothing)"
rm -f "$marker"

# migrate: an honest old run converted as data, no flag needed.
rc=0; "$bin" migrate --run old >out 2>err || rc=$?
[ $rc = 0 ] && grep -q "converted" out && ok "migrate converted the honest old run" || bad "migrate: exit $rc: $(cat err)"
"$PY" - old/checkpoint <<'PY' && ok "converted: format_version 2, safetensors only, no .pt left" || bad "converted layout"
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "state.json")))
assert s["format_version"] == 2, s["format_version"]
assert sorted(os.listdir(d)) == ["model.safetensors", "optimizer.safetensors", "state.json"], os.listdir(d)
PY
cmp -s old/checkpoint/model.safetensors half/checkpoint/model.safetensors &&
  cmp -s old/checkpoint/optimizer.safetensors half/checkpoint/optimizer.safetensors &&
  ok "old format and back: the very same weights and moments" || bad "the round trip through the old format changed the tensors"
"$bin" train --resume old -q >log 2>&1 || bad "resume after migrate: $(cat log)"
cut -d, -f1-5 straight/metrics.csv >a; cut -d, -f1-5 old/metrics.csv >b
cmp -s a b && ok "the migrated run resumes bit-identically to an uninterrupted one" ||
  bad "the migrated run's resume differs: $(diff a b | head -5)"
rc=0; "$bin" migrate --run old >out 2>err || rc=$?
[ $rc = 0 ] && grep -q "already in the current format" out && ok "migrate on a current run: nothing to do" ||
  bad "migrate on a current run: exit $rc: $(cat out err)"

# The tree never calls torch::load or torch::jit::load on anything (the data-only rule).
if grep -rnE "torch::(jit::)?load\(|InputArchive|load_from\(" "$src/core" "$src/app" >hits; then
  bad "product code opens TorchScript archives: $(head -3 hits)"
else ok "no torch::load, torch::jit::load or InputArchive in core/ or app/"; fi

finish
