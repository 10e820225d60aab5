#!/usr/bin/env bash
# Packs what attnlab's window needs on the GPU machine (an image with no X server, no GLFW, ImGui
# or epoxy, no X11 pkg-config data, and no network) into DIR/gl.tar.xz, to carry there with
# .devcarry/ and unpack with bench/gpu_window.sh. usage: scripts/device_gl.sh DIR
# The archive holds:
#   prefix/  the window's build dependencies as an install prefix: ImGui 1.86 (Debian's static
#            lib with its backends; stb, which it needs), GLFW 3.3, epoxy, glm headers, and the X11
#            client libraries GLFW links or dlopens, with link-time .so names, pkg-config files
#            (prefix=${pcfiledir}/../.., so they need no rewriting) and CMake configs for
#            find_package(glfw3) and find_package(glm); bin/glxinfo (mesa-utils) for proof of the
#            renderer.
#   xvfb/    Xvfb and xkbcomp with every library they load that prefix/ and the .debs do not
#            hold (not the libc family, libstdc++ or libgcc_s, which every machine that runs
#            PyTorch has), the xkb data, and lib/dri/swrast_dri.so: Xvfb offers the GLX extension
#            only when a DRI driver loads, and Mesa's needs LLVM (about 40 MB compressed), so a
#            stand-in built from scripts/device_gl/glx_configs_dri.c serves Mesa swrast's configs
#            (read here by scripts/device_gl/dri_dump.c) and renders nothing: clients render
#            directly, on the GPU machine through the NVIDIA driver's GLX.
#   debs/    the libglvnd packages the device README names (libGL, libGLX, libEGL, libOpenGL,
#            libGLdispatch, libGLES, libvulkan), unpacked into / there.
# Needs, here: the Debian packages of scripts/setup.sh --tests (xvfb, libgl1-mesa-dri,
# libimgui-dev, libglfw3-dev, libepoxy-dev, libglm-dev), gcc, and apt-get download (the .debs,
# mesa-utils-bin for glxinfo, mesa-common-dev for dri_interface.h).
set -euo pipefail
dir=${1:?usage: scripts/device_gl.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
arch=/usr/lib/x86_64-linux-gnu
stage=$(mktemp -d /tmp/attn-device-gl.XXXXXX)
trap 'rm -rf "$stage"' EXIT
P=$stage/prefix X=$stage/xvfb
mkdir -p "$P/include" "$P/lib/pkgconfig" "$P/lib/cmake/glfw3" "$P/lib/cmake/glm" "$P/bin" \
  "$X/bin" "$X/lib/dri" "$X/share/X11" "$stage/debs"

# Copies library $1 into $2 unless it is there, is of the libc family or the C++ runtime (every
# machine that runs PyTorch has those), or its name matches the pattern $3.
copy_lib() {
  case $(basename "$1") in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libstdc++* | \
      libgcc_s*) ;;
    ${3:-@}) ;;
    *) [ -e "$2/$(basename "$1")" ] || cp -L "$1" "$2/" ;;
  esac
}
copy_deps() {  # every library $1 loads (ldd), as copy_lib
  local dep
  for dep in $(ldd "$1" | awk '/=> \//{print $3}'); do copy_lib "$dep" "$2" "${3:-@}"; done
}

# --- (a) the window's build dependencies ---
cp -r /usr/include/imgui /usr/include/GLFW /usr/include/epoxy /usr/include/glm "$P/include/"
cp "$arch/libimgui.a" "$P/lib/"
x_libs="libX11.so.6 libX11-xcb.so.1 libxcb.so.1 libXau.so.6 libXdmcp.so.6 libXext.so.6
  libXrandr.so.2 libXrender.so.1 libXinerama.so.1 libXcursor.so.1 libXfixes.so.3 libXi.so.6
  libXxf86vm.so.1"  # GLFW 3.3 links libX11 and dlopens the others
for lib in libstb.so.0 libglfw.so.3 libepoxy.so.0 $x_libs; do
  cp -L "$arch/$lib" "$P/lib/"
  copy_deps "$arch/$lib" "$P/lib"
done
for lib in "$P"/lib/lib*.so.*; do  # link-time names: libglfw.so -> libglfw.so.3, ...
  name=$(basename "$lib")
  ln -sf "$name" "$P/lib/${name%%.so.*}.so"
done
pc() {  # name, version, cflags, libs[, requires]
  printf 'prefix=${pcfiledir}/../..\nName: %s\nDescription: %s (carried)\nVersion: %s\n%sCflags: %s\nLibs: -L${prefix}/lib %s\n' \
    "$1" "$1" "$2" "${5:+Requires: $5
}" "$3" "$4" >"$P/lib/pkgconfig/$1.pc"
}
pc imgui 1.86 '-I${prefix}/include/imgui' -limgui stb
pc stb 0.0 '-I${prefix}/include' -lstb
pc glfw3 3.3.8 '-I${prefix}/include' -lglfw
pc epoxy 1.5.10 '-I${prefix}/include' -lepoxy  # no Requires.private: the image has no x11.pc
pc glm 0.9.9.8 '-I${prefix}/include' ''
for x in x11:libX11:1.8.4 x11-xcb:libX11-xcb:1.8.4 xcb:libxcb:1.15 xau:libXau:1.0.9 \
  xdmcp:libXdmcp:1.1.2 xext:libXext:1.3.4 xrandr:libXrandr:1.5.2 xrender:libXrender:0.9.10 \
  xinerama:libXinerama:1.1.4 xcursor:libXcursor:1.2.1 xfixes:libXfixes:6.0.0 xi:libXi:1.8 \
  xxf86vm:libXxf86vm:1.1.4; do
  IFS=: read -r name lib version <<<"$x"
  pc "$name" "$version" '-I${prefix}/include' "-l${lib#lib}"
done
cat >"$P/lib/cmake/glfw3/glfw3Config.cmake" <<'EOF'
# find_package(glfw3) for the carried prefix (scripts/device_gl.sh): the imported target glfw.
if(NOT TARGET glfw)
  get_filename_component(_glfw_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
  add_library(glfw SHARED IMPORTED)
  set_target_properties(glfw PROPERTIES IMPORTED_LOCATION "${_glfw_prefix}/lib/libglfw.so.3"
    IMPORTED_SONAME libglfw.so.3 INTERFACE_INCLUDE_DIRECTORIES "${_glfw_prefix}/include")
endif()
EOF
cp "$arch/cmake/glfw3/glfw3ConfigVersion.cmake" "$P/lib/cmake/glfw3/"
cat >"$P/lib/cmake/glm/glmConfig.cmake" <<'EOF'
# find_package(glm) for the carried prefix (scripts/device_gl.sh): the header-only target glm::glm.
if(NOT TARGET glm::glm)
  get_filename_component(_glm_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
  add_library(glm::glm INTERFACE IMPORTED)
  set_target_properties(glm::glm PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_glm_prefix}/include")
endif()
EOF
cp /usr/share/cmake/glm/glmConfigVersion.cmake "$P/lib/cmake/glm/"

# Packages fetched by name: the libglvnd loaders (device README) and glxinfo.
(cd "$stage/debs" && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 \
  libgles2 mesa-utils-bin >/dev/null 2>"$stage/apt.log") ||
  { echo "device_gl.sh: apt-get download failed:" >&2; cat "$stage/apt.log" >&2; exit 1; }
dpkg --fsys-tarfile "$stage"/debs/mesa-utils-bin_*.deb |
  tar -xO ./usr/bin/glxinfo.x86_64-linux-gnu >"$P/bin/glxinfo"
chmod +x "$P/bin/glxinfo"
rm "$stage"/debs/mesa-utils-bin_*.deb

# --- (b) Xvfb, xkbcomp, the xkb data, a config-only DRI driver ---
cp /usr/bin/Xvfb /usr/bin/xkbcomp "$X/bin/"
cp -r /usr/share/X11/xkb "$X/share/X11/"
# libGL, libGLX, libGLdispatch come from the .debs; the X client libraries from prefix/lib.
for bin in /usr/bin/Xvfb /usr/bin/xkbcomp; do
  for dep in $(ldd "$bin" | awk '/=> \//{print $3}'); do
    [ -e "$P/lib/$(basename "$dep")" ] || copy_lib "$dep" "$X/lib" 'libGL*'
  done
done
# Xvfb offers GLX only when a DRI driver loads. Mesa's swrast_dri.so needs LLVM (with ICU and
# z3, 40 MB compressed), so scripts/device_gl/glx_configs_dri.c stands in for it, serving the
# configs that dri_dump reads here from the real driver (see that file for why that is enough).
(cd "$stage" && apt-get download mesa-common-dev >/dev/null 2>"$stage/apt.log") ||
  { echo "device_gl.sh: apt-get download mesa-common-dev failed:" >&2; cat "$stage/apt.log" >&2; exit 1; }
dpkg -x "$stage"/mesa-common-dev_*.deb "$stage/mesa"
src=$(cd "$(dirname "$0")/device_gl" && pwd)
gcc -O1 -I"$stage/mesa/usr/include" -o "$stage/dri_dump" "$src/dri_dump.c" -ldl
"$stage/dri_dump" "$arch/dri/swrast_dri.so" >"$stage/configs.h"
gcc -O2 -shared -fPIC -fvisibility=hidden -I"$stage/mesa/usr/include" -I"$stage" \
  -o "$X/lib/dri/swrast_dri.so" "$src/glx_configs_dri.c"

rm -f "$dir/gl.tar.xz"
XZ_OPT="-9 -T2" nice tar -cJf "$dir/gl.tar.xz" -C "$stage" prefix xvfb debs
echo "device_gl.sh: $dir/gl.tar.xz, $(stat -c %s "$dir/gl.tar.xz") bytes" \
  "($(du -sb "$stage" | cut -f1) unpacked)"
