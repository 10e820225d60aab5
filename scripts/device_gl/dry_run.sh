#!/usr/bin/env bash
# Dry run, on a CPU machine, of the window stage of the GPU call: builds the carry
# (scripts/device_gl.sh), unpacks it away from the system (the .debs into a scratch root), and
#  1. checks that Xvfb, xkbcomp, glxinfo and the prefix's libraries resolve every library they
#     load inside the carry, but the libc family and the C++ runtime (ldd, the carry's paths only);
#  2. builds a small GLFW + epoxy + ImGui (GL3 backend) + glm program against the prefix alone
#     (pkg-config limited to it, CMake's find_package(glfw3) and find_package(glm) from it) and
#     opens its window on the carried Xvfb;
#  3. runs bench/gpu_window.sh with the carried Xvfb and Mesa's software GL on the client side
#     (GL_VENDOR=mesa: there is no NVIDIA driver here), producing the two frame-stats files.
# usage: scripts/device_gl/dry_run.sh [WORK_DIR]   (default /tmp/attn-gl-dry; attnlab: build/)
set -uo pipefail
cd "$(dirname "$0")/../.."
work=${1:-/tmp/attn-gl-dry}
rm -rf "$work" && mkdir -p "$work"
bad=0
scripts/device_gl.sh "$work/carry" || { echo "dry run: device_gl.sh failed"; exit 1; }
G=$work/gl root=$work/root
mkdir -p "$root"
export GL_DIR=$G DEB_ROOT=$root GL_CARRY=$work/carry/gl.tar.xz
exports=$(bench/gpu_window.sh --unpack) || { echo "dry run: --unpack failed"; exit 1; }
deb_lib=$root/usr/lib/x86_64-linux-gnu

# 1. Every library from the carry (or the libc family / C++ runtime).
check() {  # LD_LIBRARY_PATH, binaries...
  local path=$1 f; shift
  for f in "$@"; do
    LD_LIBRARY_PATH=$path ldd "$f" | awk -v ok="^($G|$root)/" '
      /not found/ {print "  NOT FOUND: " $1; bad = 1; next}
      /=> \// && $3 !~ ok && $1 !~ /^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so/ {
        print "  from the system: " $1 " => " $3; bad = 1 }
      END {exit bad}' || { echo "dry run: $f loads libraries not in the carry"; bad=1; }
  done
}
check "$G/xvfb/lib:$G/prefix/lib:$deb_lib" "$G/xvfb/bin/Xvfb" "$G/xvfb/bin/xkbcomp"
check "$G/prefix/lib:$deb_lib" "$G/prefix/bin/glxinfo" "$G"/prefix/lib/lib*.so.*
need=$(for f in "$G"/xvfb/bin/* "$G"/xvfb/lib/*.so* "$G"/prefix/lib/*.so.* "$G"/prefix/bin/*; do
  objdump -T "$f" 2>/dev/null | grep -o "GLIBC_[0-9.]*"; done | sort -uV | tail -1)
echo "1. libraries: $([ $bad = 0 ] && echo "all from the carry" || echo FAILED); newest glibc symbol needed: $need"

# 2. A GLFW + epoxy + ImGui program built against the prefix alone, opened on the carried Xvfb.
mkdir -p "$work/probe"
cat >"$work/probe/probe.cpp" <<'EOF'
#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <cstdio>
#include <glm/glm.hpp>
int main() {
  if (!glfwInit()) return std::puts("probe: glfwInit failed"), 1;
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow* w = glfwCreateWindow(320, 200, "probe", nullptr, nullptr);
  if (!w) return std::puts("probe: glfwCreateWindow failed"), 1;
  glfwMakeContextCurrent(w);
  ImGui::CreateContext();
  ImGui_ImplGlfw_InitForOpenGL(w, true);
  ImGui_ImplOpenGL3_Init("#version 330");
  for (int i = 0; i < 3; i++) {
    ImGui_ImplOpenGL3_NewFrame(), ImGui_ImplGlfw_NewFrame(), ImGui::NewFrame();
    ImGui::Text("%f", glm::length(glm::vec2(3, 4)));
    ImGui::Render();
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glfwSwapBuffers(w);
  }
  std::printf("probe: GL_RENDERER %s, ImGui %s, GLFW %s\n", glGetString(GL_RENDERER),
              ImGui::GetVersion(), glfwGetVersionString());
  return 0;
}
EOF
cat >"$work/probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(probe CXX)
find_package(PkgConfig REQUIRED)
pkg_check_modules(IMGUI REQUIRED IMPORTED_TARGET imgui)
pkg_check_modules(EPOXY REQUIRED IMPORTED_TARGET epoxy)
find_package(glfw3 3.3 REQUIRED)
find_package(glm REQUIRED)
message(STATUS "probe: glfw3 from ${glfw3_DIR}; glm from ${glm_DIR}; imgui ${IMGUI_LINK_LIBRARIES}; epoxy ${EPOXY_LINK_LIBRARIES}")
add_executable(probe probe.cpp)
target_link_libraries(probe PkgConfig::IMGUI PkgConfig::EPOXY glfw glm::glm ${CMAKE_DL_LIBS})
EOF
eval "$exports"  # as the GPU call does before scripts/setup.sh
# pkg-config sees the prefix alone; CMake searches it before the system (CMAKE_PREFIX_PATH).
PKG_CONFIG_LIBDIR=$G/prefix/lib/pkgconfig cmake -S "$work/probe" -B "$work/probe/build" \
  -DCMAKE_BUILD_TYPE=Release >"$work/probe.log" 2>&1 &&
  grep -o "probe: .*" "$work/probe.log" &&
  nice cmake --build "$work/probe/build" >>"$work/probe.log" 2>&1 ||
  { echo "2. FAILED: the probe did not configure or build:"; tail -15 "$work/probe.log"; bad=1; }
if [ -x "$work/probe/build/probe" ]; then
  check "$G/prefix/lib:$deb_lib" "$work/probe/build/probe"
  grep -q "$G/prefix" "$work/probe/build/CMakeCache.txt" || { echo "2. FAILED: not from the prefix"; bad=1; }
  env LD_LIBRARY_PATH="$G/xvfb/lib:$G/prefix/lib:$deb_lib" LIBGL_DRIVERS_PATH="$G/xvfb/lib/dri" \
    timeout 30 "$G/xvfb/bin/Xvfb" :181 -screen 0 640x480x24 -nolisten tcp \
    -xkbdir "$G/xvfb/share/X11/xkb" >"$work/xvfb_probe.log" 2>&1 &
  xvfb=$!
  for _ in $(seq 1 50); do [ -S /tmp/.X11-unix/X181 ] && break; sleep 0.2; done
  DISPLAY=:181 timeout 20 "$work/probe/build/probe" || { echo "2. FAILED: the probe's window"; bad=1; }
  kill $xvfb 2>/dev/null
fi

# 3. The stage itself, Mesa on the client side.
GL_VENDOR=mesa DISPLAY_NUM=183 BUDGET_S=${BUDGET_S:-170} bench/gpu_window.sh "$work/out" || bad=1
ls -la "$work/out"/window_*.json 2>/dev/null || { echo "3. FAILED: no frame statistics"; bad=1; }
echo "dry run: $([ $bad = 0 ] && echo passed || echo FAILED); carry $(stat -c %s "$work/carry/gl.tar.xz") bytes"
exit $bad
