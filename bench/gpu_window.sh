#!/usr/bin/env bash
# The window's frame times on the GPU machine (issue 50): attnlab's real window at 1920x1080 under
# Xvfb, rendered through GLX by the NVIDIA driver (glvnd, __GLX_VENDOR_LIBRARY_NAME=nvidia), while
# copy trains on the GPU, then the Geometry explorer's 256 x 256-line warped grid. Prints the
# renderer, frame-time p50/p99 against 16.7 ms (60 fps), and the window's training steps/s.
# usage:
#   eval "$(bench/gpu_window.sh --unpack)"   before scripts/setup.sh: unpacks the carry
#       (scripts/device_gl.sh), puts the glvnd .debs in place, and prints the exports that make
#       setup.sh find ImGui, GLFW and epoxy (and so build the window)
#   bench/gpu_window.sh OUT_DIR              after the build: Xvfb, glxinfo, the two runs
# Environment: GL_CARRY (.devcarry/gl/gl.tar.xz), GL_DIR (/tmp/attn-gl: where it is unpacked),
# DEB_ROOT (/: where the .debs are unpacked; elsewhere their libraries are added to the paths),
# GL_VENDOR (nvidia; "mesa" renders with the client's Mesa, for a dry run on a machine without
# the NVIDIA driver), ATTNLAB (build/app/attnlab), FRAMES (600), BUDGET_S (90: the whole stage,
# every step has a timeout within it), DISPLAY_NUM (99), GEOMETRY ("256,16,gpu,drag-full":
# ATTN_GEOMETRY_BENCH, see app/panels/geometry/geometry_panel.h).
# Every step says on one line what failed; nothing here waits without a timeout.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${GL_CARRY:-.devcarry/gl/gl.tar.xz}
G=${GL_DIR:-/tmp/attn-gl}
deb_root=${DEB_ROOT:-/}
deb_lib=""
[ "$deb_root" = / ] || deb_lib=$deb_root/usr/lib/x86_64-linux-gnu

# Unpacks the carry once; messages on stderr, exports on stdout.
unpack() {
  if [ ! -e "$G/.unpacked" ]; then
    [ -f "$carry" ] || { echo "gpu_window: no $carry (make it with scripts/device_gl.sh)" >&2; return 1; }
    mkdir -p "$G" && timeout 60 tar -xJf "$carry" -C "$G" ||
      { echo "gpu_window: unpacking $carry into $G failed" >&2; return 1; }
    for deb in "$G"/debs/*.deb; do
      dpkg -x "$deb" "$deb_root" || { echo "gpu_window: dpkg -x $deb $deb_root failed" >&2; return 1; }
    done
    [ "$deb_root" = / ] && ldconfig
    # Xvfb runs xkbcomp from its compiled-in /usr/bin; the image has none.
    [ -x /usr/bin/xkbcomp ] || cp "$G/xvfb/bin/xkbcomp" /usr/bin/xkbcomp 2>/dev/null ||
      echo "gpu_window: no /usr/bin/xkbcomp and it cannot be copied there: Xvfb will fail" >&2
    touch "$G/.unpacked"
    echo "gpu_window: unpacked $carry ($(stat -c %s "$carry") bytes) into $G" >&2
  fi
  echo "export PKG_CONFIG_PATH=\"$G/prefix/lib/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}\""
  echo "export CMAKE_PREFIX_PATH=\"$G/prefix\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}\""
  echo "export LIBRARY_PATH=\"$G/prefix/lib\${LIBRARY_PATH:+:\$LIBRARY_PATH}\""
  echo "export LD_LIBRARY_PATH=\"$G/prefix/lib${deb_lib:+:$deb_lib}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
}

if [ "${1:-}" = --unpack ]; then
  unpack
  exit
fi
out=${1:?usage: bench/gpu_window.sh --unpack | OUT_DIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
start=$(date +%s)
budget=${BUDGET_S:-90}
left() { echo $((budget - ($(date +%s) - start))); }
fail() { echo "gpu_window: FAILED: $*"; }
exports=$(unpack) || { fail "the carry could not be unpacked"; exit 1; }
eval "$exports"
attnlab=${ATTNLAB:-build/app/attnlab}
[ -x "$attnlab" ] || { fail "no $attnlab (build first)"; exit 1; }
timeout 10 "$attnlab" gui --help >/dev/null 2>&1 ||
  { fail "$attnlab has no window (setup.sh built without ImGui/GLFW/epoxy: was the --unpack eval run before it?)"; exit 1; }

# Xvfb with its carried libraries; attnlab and glxinfo never see them.
num=${DISPLAY_NUM:-99}
while [ -e "/tmp/.X$num-lock" ] && [ "$num" -lt $((${DISPLAY_NUM:-99} + 20)) ]; do num=$((num + 1)); done
env LD_LIBRARY_PATH="$G/xvfb/lib:$G/prefix/lib${deb_lib:+:$deb_lib}" LIBGL_DRIVERS_PATH="$G/xvfb/lib/dri" \
  timeout "$(left)" "$G/xvfb/bin/Xvfb" ":$num" -screen 0 2000x1200x24 -nolisten tcp \
  -xkbdir "$G/xvfb/share/X11/xkb" >"$out/xvfb.log" 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null' EXIT
for _ in $(seq 1 50); do [ -S "/tmp/.X11-unix/X$num" ] && break; sleep 0.2; done
if ! kill -0 $xvfb 2>/dev/null || [ ! -S "/tmp/.X11-unix/X$num" ]; then
  fail "Xvfb :$num did not start; its log:"; tail -15 "$out/xvfb.log"; exit 1
fi
export DISPLAY=:$num
echo "Xvfb :$num 2000x1200x24 up, its libraries and config-only DRI driver from $G/xvfb"

if [ "${GL_VENDOR:-nvidia}" = nvidia ]; then
  export __GLX_VENDOR_LIBRARY_NAME=nvidia __GL_SYNC_TO_VBLANK=0
  if ! ldconfig -p | grep -q "libGLX_nvidia.so.0 .*x86-64"; then
    nv=$(ls /usr/local/nvidia/lib64/libGLX_nvidia.so.0 /usr/local/nvidia/lib/libGLX_nvidia.so.0 \
      /usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0 /usr/lib64/libGLX_nvidia.so.0 2>/dev/null | head -1)
    [ -n "$nv" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$nv")"
    echo "libGLX_nvidia.so.0 not in ldconfig's cache; ${nv:-not found in the driver folders either}"
  fi
fi
echo "GL vendor library: ${__GLX_VENDOR_LIBRARY_NAME:-as the server says (mesa)}"
timeout 15 "$G/prefix/bin/glxinfo" -B >"$out/glxinfo.txt" 2>&1 ||
  fail "glxinfo -B (exit $?): $(tail -2 "$out/glxinfo.txt" | tr '\n' ' ')"
grep -E "direct rendering|OpenGL (vendor|renderer|core profile version) string" "$out/glxinfo.txt"

# run NAME TIMEOUT [env ...] -- attnlab gui args: one window run into $out/window_NAME.*
run() {
  local name=$1 limit=$2; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  [ "$limit" -ge 10 ] || { fail "$name: no time left in the ${budget} s budget"; return 1; }
  mkdir -p "$out/layout_$name"
  env "${envs[@]}" ATTN_GL_INFO=1 ATTN_GUI_REPORT="$out/report_$name.json" \
    timeout -k 5 "$limit" "$attnlab" gui "$@" --frames "${FRAMES:-600}" --size 1920x1080 \
    --frame-stats "$out/window_$name.json" --layout "$out/layout_$name/layout.ini" \
    --runs-dir "$out/runs_$name" >"$out/window_$name.log" 2>&1
  local rc=$?
  [ $rc = 0 ] || { fail "$name: attnlab exit $rc$([ $rc = 124 ] && echo " (timed out after $limit s)"):"; tail -6 "$out/window_$name.log"; }
  grep -h "GL_RENDERER" "$out/window_$name.log" | head -1
  return $rc
}
long=$(printf '%s' '--set train.steps=1000000')  # training all through the frames
run copy 40 -- --config assets/configs/copy.json $long --autostart
run geometry 35 "ATTN_GEOMETRY_BENCH=${GEOMETRY:-256,16,gpu,drag-full}" -- \
  --config assets/configs/copy.json $long --autostart

python3 - "$out" "${HEADLESS_RUN:-$out/../runs/copy-graph}" <<'PY'
import csv, glob, json, os, statistics, sys
out, headless = sys.argv[1], sys.argv[2]
for name in ("copy", "geometry"):
    try:
        s = json.load(open(os.path.join(out, f"window_{name}.json")))
    except Exception as e:
        print(f"{name}: no frame statistics ({e})"); continue
    p99 = s["frame_ms_p99"]
    print(f"{name}: frame ms p50 {s['frame_ms_p50']:.2f}  p99 {p99:.2f}  max {s['frame_ms_max']:.2f}"
          f"  ({s['frames_measured']} frames)  target p99 <= 16.7 ms: {'met' if p99 <= 16.7 else 'MISSED'}")
    for run in glob.glob(os.path.join(out, f"runs_{name}", "*", "metrics.csv")):
        rows = list(csv.DictReader(open(run)))
        rates = [float(r["steps_per_s"]) for r in rows[1:] if r.get("steps_per_s")]
        try:
            sm = json.load(open(os.path.join(os.path.dirname(run), "summary.json")))
        except Exception:
            sm = {}
        line = (f"  training in the window: {sm.get('steps', '?')} steps, "
                f"{sm.get('steps_per_second', 0):.0f} steps/s overall")
        if rates:
            line += f", median {statistics.median(rates):.0f} over {len(rates)} metrics rows"
        line += f"; device {sm.get('device', '?')}, step path {sm.get('step_path', '?')}"
        print(line)
        try:
            h = list(csv.DictReader(open(os.path.join(headless, "metrics.csv"))))
            hr = statistics.median(float(r["steps_per_s"]) for r in h[1:])
            if rates and name == "copy":
                print(f"  headless {hr:.0f} steps/s ({headless}): window / headless "
                      f"{statistics.median(rates) / hr:.2f}x")
        except Exception:
            pass
    if name == "geometry":
        try:
            g = json.load(open(os.path.join(out, "report_geometry.json")))["geometry"]["grid"]
            print(f"  grid: {g.get('lines_drawn')} lines drawn, path {g.get('path')}")
        except Exception as e:
            print(f"  grid: no report ({e})")
PY
echo "window stage done in $(($(date +%s) - start)) s"
