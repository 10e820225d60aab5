#!/usr/bin/env bash
# Soak test: long training runs that print resident memory (RSS) as they go and fail when it
# grows after warm-up (a leak), and a GUI session under Xvfb with training and panel switching
# that also reports the frame-time p99.
# usage: scripts/soak.sh [options]
#   --bin PATH            attnlab executable (default build/app/attnlab)
#   --config FILE         experiment (default assets/configs/copy.json; train.steps is raised
#                         so training never finishes during the soak)
#   --headless SECONDS    headless `attnlab train` run (default 1800; 0 skips)
#   --gui SECONDS         GUI session under Xvfb (default 600; 0 skips)
#   --interval SECONDS    RSS sample interval (default 30)
#   --warmup SECONDS      samples before this are warm-up (default 20% of each run)
#   --max-growth PERCENT  fail if RSS after warm-up grows more than this (default 5)
#   --cycle FRAMES        GUI: switch panel every FRAMES frames (default 120)
# Growth = (mean of the last 3 samples - mean of the first 3 after warm-up) / the latter.
# Output: "rss <run> t=<s> <MiB>" lines, then "soak <run>: ..." summary lines.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/app/attnlab config=assets/configs/copy.json headless=1800 gui=600 interval=30
warmup="" max_growth=5 cycle=120
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --headless) headless=$2; shift 2 ;;
    --gui) gui=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --max-growth) max_growth=$2; shift 2 ;;
    --cycle) cycle=$2; shift 2 ;;
    *) echo "soak.sh: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
bin=$(realpath "$bin")
work=$(mktemp -d)
children=()
cleanup() {
  for pid in "${children[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# The experiment with enough steps that it trains through the whole soak.
python3 - "$config" "$work/soak.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.setdefault("train", {})["steps"] = 100000000
json.dump(c, open(sys.argv[2], "w"))
PY

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# sample <name> <pid> <seconds>: prints RSS every $interval s into $work/<name>.rss
sample() {
  local name=$1 pid=$2 seconds=$3 t=0
  : >"$work/$name.rss"
  while [ "$t" -le "$seconds" ] && kill -0 "$pid" 2>/dev/null; do
    local kib; kib=$(rss_kib "$pid")
    echo "$t $kib" >>"$work/$name.rss"
    awk -v n="$name" -v t="$t" -v k="$kib" 'BEGIN { printf "rss %s t=%ss %.1f MiB\n", n, t, k / 1024 }'
    [ "$t" -ge "$seconds" ] && break
    sleep "$interval"; t=$((t + interval))
  done
}

# verdict <name> <seconds>: growth after warm-up; fails past --max-growth
verdict() {
  local name=$1 seconds=$2 w=${warmup:-$(($2 / 5))}
  python3 - "$work/$name.rss" "$w" "$max_growth" "$name" <<'PY'
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
warm, limit, name = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
after = [kib for t, kib in rows if t >= warm and kib > 0]
if len(after) < 4:
    print(f"soak {name}: FAIL: only {len(after)} samples after warm-up ({len(rows)} in all)")
    sys.exit(1)
base = sum(after[:3]) / 3
end = sum(after[-3:]) / 3
growth = 100.0 * (end - base) / base
peak = max(after)
print(f"soak {name}: rss after warm-up {base/1024:.1f} MiB -> {end/1024:.1f} MiB "
      f"(growth {growth:+.2f}%, peak {peak/1024:.1f} MiB, {len(after)} samples, limit {limit}%)")
sys.exit(0 if growth <= limit else 1)
PY
}

status=0
if [ "$headless" -gt 0 ]; then
  "$bin" train --config "$work/soak.json" --out "$work/run" --quiet >"$work/train.log" 2>&1 &
  pid=$!; children+=("$pid")
  sample headless "$pid" "$headless"
  kill -0 "$pid" 2>/dev/null || { echo "soak headless: FAIL: train exited early"; cat "$work/train.log"; exit 1; }
  kill "$pid"; wait "$pid" 2>/dev/null || true
  verdict headless "$headless" || status=1
fi

if [ "$gui" -gt 0 ]; then
  command -v xvfb-run >/dev/null || { echo "soak gui: FAIL: xvfb-run not found"; exit 1; }
  export XDG_CONFIG_HOME=$work/xdg XDG_DATA_HOME=$work/xdg-data  # the runs the window records
  (cd "$work" && exec xvfb-run -a -s "-screen 0 1280x800x24" sh -c 'echo $$ >gui.pid; exec "$@"' \
     sh "$bin" gui --config "$work/soak.json" --autostart --cycle-panels "$cycle" \
     --frame-stats "$work/frames.json" --layout "$work/layout.ini" >"$work/gui.log" 2>&1) &
  children+=("$!")
  for _ in $(seq 100); do [ -s "$work/gui.pid" ] && break; sleep 0.1; done
  gpid=$(cat "$work/gui.pid")
  sample gui "$gpid" "$gui"
  kill -0 "$gpid" 2>/dev/null || { echo "soak gui: FAIL: the window died"; cat "$work/gui.log"; exit 1; }
  kill -TERM "$gpid"  # the window quits cleanly and writes its frame statistics
  for _ in $(seq 300); do kill -0 "$gpid" 2>/dev/null || break; sleep 0.1; done
  wait 2>/dev/null || true
  verdict gui "$gui" || status=1
  if [ -s "$work/frames.json" ]; then
    python3 - "$work/frames.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"soak gui: {s['frames']} frames, frame time p50 {s['frame_ms_p50']:.2f} ms, "
      f"p99 {s['frame_ms_p99']:.2f} ms, max {s['frame_ms_max']:.2f} ms")
PY
  else
    echo "soak gui: FAIL: no frame statistics written"; cat "$work/gui.log"; status=1
  fi
fi
exit $status
