#!/usr/bin/env bash
# Carries a reproduction's outputs between its working directory and the repository: the report
# in docs/repro/<paper>, its runs in data/repro/<paper>.
#
#   scripts/repro_runs.sh keep OUT PAPER      OUT (attnlab reproduce --out) -> docs/repro/PAPER, data/repro/PAPER/runs
#   scripts/repro_runs.sh park OUT PAPER      an unfinished OUT -> data/repro/PAPER/unfinished
#   scripts/repro_runs.sh restore PAPER OUT   data/repro/PAPER/[unfinished/]runs -> OUT/runs
#
# keep replaces docs/repro/PAPER with OUT's report (report.md, report.json, the figures,
# benchmark.json and invocations.json) and data/repro/PAPER with a slim copy of OUT/runs: every
# run's config.json, metrics.csv, summary.json, validation.json (the grid's cached validation
# figures), conn.json and C.csv, and each sweep directory's sweep.json; no checkpoints, no
# views.rec, no locks, and the mechanism views (mechanism_views.json, or an older run's
# connections.json) only for the first seed of an arm named "ky" (the report's connections
# figure). The report's "runs: `runs/`" (OUT's runs) becomes a link to
# data/repro/PAPER/runs/. From the two `attnlab reproduce --paper PAPER --out DIR --report-only`
# rewrites the same report (the repro_reports test copies them together and checks it). `park`
# keeps an unfinished reproduction's runs (with its benchmark and invocations.json, so that the
# report counts the time of every invocation) beside the paper's last ones, and `restore` lets it
# continue where it stopped: finished runs are skipped, the rest train.
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."
usage() { sed -n 5,7p "$self" | sed 's/^# *//' >&2; exit 2; }
[ $# -eq 3 ] || usage

slim_copy() {  # slim_copy OUT TO: OUT's top-level files and the slim runs/ into TO
  local from=$1 to=$2 first
  mkdir -p "$to"
  for f in "$from"/*; do
    [ -f "$f" ] && cp -p "$f" "$to/"
  done
  (cd "$from/runs" && find . -type f \( -name config.json -o -name metrics.csv -o -name summary.json \
      -o -name validation.json -o -name conn.json -o -name C.csv -o -name sweep.json \
      -o -name .attnlab-run \) -not -path '*/checkpoint/*' -print0) |
    while IFS= read -r -d '' f; do
      mkdir -p "$to/runs/$(dirname "$f")"
      cp -p "$from/runs/$f" "$to/runs/$f"
    done
  # The connections figure's run: the ky arm's first seed.
  [ -f "$from/report.json" ] || return 0
  first=$(python3 -c 'import json,sys; a=[a for a in json.load(open(sys.argv[1]))["arms"] if a["name"]=="ky"]; print(a[0]["seeds"][0]["run"] if a and a[0]["seeds"] else "")' "$from/report.json")
  if [ -n "$first" ]; then
    for side in mechanism_views.json connections.json; do
      if [ -f "$from/runs/$first/$side" ]; then cp -p "$from/runs/$first/$side" "$to/runs/$first/"; fi
    done
  fi
}

# link_runs REPORT PAPER: the report's runs (`runs/` of OUT) as a link to data/repro/PAPER/runs/,
# relative to docs/repro/PAPER/report.md.
link_runs() {
  local md=$1 paper=$2
  [ -f "$md" ] || return 0
  grep -qF 'runs: `runs/`.' "$md" || { echo "repro_runs: $md does not name its runs as \`runs/\`" >&2; return 1; }
  sed -i "s|runs: \`runs/\`\.|runs: [\`data/repro/$paper/runs/\`](../../../data/repro/$paper/runs/).|" "$md"
}

case $1 in
  keep)
    out=$2 paper=$3 dest=docs/repro/$3 data=data/repro/$3
    [ -s "$out/report.json" ] || { echo "repro_runs: $out/report.json is missing: run attnlab reproduce --out $out first" >&2; exit 1; }
    python3 - "$out/report.json" "$paper" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
if r.get("paper") != sys.argv[2]:
    sys.exit(f"repro_runs: {sys.argv[1]} is a report of {r.get('paper')!r}, not {sys.argv[2]!r}")
if r.get("quick"):
    sys.exit(f"repro_runs: {sys.argv[1]} is a --quick report; docs/repro keeps full ones")
PY
    mkdir -p docs/repro data/repro
    tmp=$(mktemp -d "docs/repro/.$paper.XXXXXX")
    tmp_data=$(mktemp -d "data/repro/.$paper.XXXXXX")
    trap 'rm -rf "$tmp" "$tmp_data"' EXIT
    slim_copy "$out" "$tmp"
    mv "$tmp/runs" "$tmp_data/runs"
    link_runs "$tmp/report.md" "$paper"
    rm -rf "$dest" "$data"
    mv "$tmp" "$dest"
    mv "$tmp_data" "$data"
    trap - EXIT
    echo "repro_runs: $dest now holds the report ($(du -sh "$dest" | cut -f1)), $data/runs its $(find "$data/runs" -name summary.json | wc -l) runs ($(du -sh "$data" | cut -f1))"
    ;;
  park)
    out=$2 paper=$3 dest=data/repro/$3/unfinished
    [ -d "$out/runs" ] || { echo "repro_runs: $out/runs does not exist" >&2; exit 1; }
    mkdir -p "data/repro/$paper"
    tmp=$(mktemp -d "data/repro/.$paper.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    slim_copy "$out" "$tmp"
    # An interrupted run's checkpoint is not kept, so it trains again from the start: its
    # directory goes, rather than a summary that says "interrupted" without the checkpoint.
    { grep -rl '"interrupted": true' "$tmp/runs" --include=summary.json || true; } | while read -r f; do
      rm -rf "$(dirname "$f")"
    done
    # Only what continuing needs: the paper's last report stays the paper's.
    find "$tmp" -maxdepth 1 -type f -not -name benchmark.json -not -name invocations.json -delete
    rm -rf "$dest"
    mv "$tmp" "$dest"
    trap - EXIT
    echo "repro_runs: $dest holds $(find "$dest/runs" -name summary.json | wc -l) finished runs; continue with: scripts/repro_runs.sh restore $paper DIR"
    ;;
  restore)
    paper=$2 out=$3 src=data/repro/$2
    [ -d "$src/unfinished/runs" ] && src=$src/unfinished
    [ -d "$src/runs" ] || { echo "repro_runs: $src/runs does not exist" >&2; exit 1; }
    if [ -e "$out/runs" ]; then
      echo "repro_runs: $out/runs exists; restore writes only into a new directory" >&2
      exit 1
    fi
    mkdir -p "$out"
    cp -rp "$src/runs" "$out/runs"
    # The finished report (its command, for --report-only), benchmark, invocations and scaling
    # sweeps sit beside it in docs/repro.
    [ "$src" = "data/repro/$paper" ] && src=docs/repro/$paper
    for f in benchmark.json invocations.json scaling.json report.json; do
      [ -f "$src/$f" ] && cp -p "$src/$f" "$out/"
    done
    echo "repro_runs: continue with: attnlab reproduce --paper $paper -j 2 --out $out"
    ;;
  *) usage ;;
esac
