#!/usr/bin/env bash
# Copies the Debian packages the CUDA build needs but the GPU machine lacks (header-only
# nlohmann-json, CLI11, doctest, and muparser) into DIR as an install prefix, to carry there.
# usage: scripts/device_deps.sh DIR   (then ATTN_DEPS_PREFIX=DIR scripts/cuda_build.sh there)
set -euo pipefail
dir=${1:?usage: scripts/device_deps.sh DIR}
mkdir -p "$dir/include" "$dir/lib" "$dir/share/cmake" "$dir/lib/cmake"
dir=$(cd "$dir" && pwd)
cp -r /usr/include/nlohmann /usr/include/CLI /usr/include/doctest "$dir/include/"
cp /usr/include/muParser*.h "$dir/include/"
cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 "$dir/share/cmake/"
cp -r /usr/lib/cmake/doctest "$dir/lib/cmake/"
cp -L /usr/lib/x86_64-linux-gnu/libmuparser.so.2 "$dir/lib/"
ln -sf libmuparser.so.2 "$dir/lib/libmuparser.so"

# Figure export's libraries (cairo with its PDF and FreeType backends, FreeType, libpng,
# fontconfig): headers, the libraries and every library they load, and pkg-config files that
# name only what the build links (the GPU image has no pkg-config data for X11, pixman, ...).
# On the machine, bench/gpu_session.sh drops the copies of libraries it already has.
arch=/usr/lib/x86_64-linux-gnu
mkdir -p "$dir/lib/pkgconfig"
cp -r /usr/include/cairo /usr/include/freetype2 /usr/include/fontconfig /usr/include/libpng16 "$dir/include/"
cp /usr/include/png.h /usr/include/pngconf.h /usr/include/pnglibconf.h /usr/include/zlib.h \
  /usr/include/zconf.h "$dir/include/"
for lib in libcairo.so.2 libfreetype.so.6 libpng16.so.16 libfontconfig.so.1; do
  cp -L "$arch/$lib" "$dir/lib/"
  for dep in $(ldd "$arch/$lib" | awk '/=> \//{print $3}'); do
    case $(basename "$dep") in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
      *) [ -e "$dir/lib/$(basename "$dep")" ] || cp -L "$dep" "$dir/lib/" ;;
    esac
  done
done
ln -sf libcairo.so.2 "$dir/lib/libcairo.so"
ln -sf libfreetype.so.6 "$dir/lib/libfreetype.so"
ln -sf libpng16.so.16 "$dir/lib/libpng16.so"
ln -sf libfontconfig.so.1 "$dir/lib/libfontconfig.so"
ln -sf libz.so.1 "$dir/lib/libz.so"
pc() {  # name, version, cflags, libs
  printf 'prefix=%s\nName: %s\nDescription: %s\nVersion: %s\nCflags: %s\nLibs: -L${prefix}/lib %s\n' \
    "$dir" "$1" "$1" "$2" "$3" "$4" >"$dir/lib/pkgconfig/$1.pc"
}
pc cairo 1.16.0 '-I${prefix}/include/cairo -I${prefix}/include/freetype2 -I${prefix}/include' -lcairo
pc cairo-pdf 1.16.0 '-I${prefix}/include/cairo' -lcairo
pc cairo-ft 1.16.0 '-I${prefix}/include/cairo -I${prefix}/include/freetype2' -lcairo
pc freetype2 24.3.18 '-I${prefix}/include/freetype2' -lfreetype
pc libpng 1.6.39 '-I${prefix}/include/libpng16' -lpng16
pc fontconfig 2.14.1 '-I${prefix}/include' -lfontconfig
