#!/usr/bin/env bash
# `cmake --install` into a temporary prefix gives a binary that runs from any directory and
# finds its data there, even after the prefix is moved (the lookup is relative to the
# executable); `cpack -G DEB` gives a package whose metadata and contents are right.
# usage: install_test.sh <build dir>
set -u
build=$(realpath "$1")
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
need cmake

cmake --install "$build" --prefix "$work/prefix" >"$work/log" 2>&1 || fatal "cmake --install failed"
for f in bin/attnlab share/attnlab/configs/copy.json share/attnlab/configs/repro/conn/repro.json; do
  [ -e "$work/prefix/$f" ] && ok "installed $f" || bad "not installed: $f"
done

# Moved after installing, and run from an unrelated directory: nothing may point back into the
# build or source tree.
mv "$work/prefix" "$work/moved"
bin=$work/moved/bin/attnlab
mkdir "$work/elsewhere" && cd "$work/elsewhere" || exit 1
"$bin" --version >"$work/version" 2>&1 || bad "--version failed: $(cat "$work/version")"
grep -q "^attnlab [0-9]" "$work/version" && grep -q "^LibTorch " "$work/version" \
  && grep -Eq "^compute: (CPU|CUDA)" "$work/version" && ok "--version: version, LibTorch, CPU or CUDA" \
  || bad "--version: $(cat "$work/version")"
grep -qx "configs: $work/moved/share/attnlab/configs" "$work/version" \
  && ok "the moved install finds its own configs" || bad "configs found at: $(grep configs: "$work/version")"

cfg=$work/moved/share/attnlab/configs/copy.json
"$bin" train --config "$cfg" --steps 5 --out run -q >"$work/log" 2>&1 \
  && [ -s run/summary.json ] && ok "train --config <installed copy.json> --steps 5 from another directory" \
  || bad "installed train: $(tail -5 "$work/log")"
# The reproduction configs are found without --configs: the plan is built, then --out fails.
"$bin" reproduce --paper conn --quick --out /dev/null/report >"$work/log" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "cannot create" "$work/log" && ok "reproduce finds the installed repro configs" \
  || bad "reproduce lookup: rc $rc $(tail -3 "$work/log")"

# The .deb: the build's CPack config (name, version, Depends) packaging the same install rules,
# checked with dpkg-deb (installing it needs root and a container; its metadata and file list
# are checked instead). The install is staged first: a plain `cpack` would build the `all`
# target before packaging, which is not this test's business.
if command -v dpkg-deb >/dev/null && command -v cpack >/dev/null; then
  cmake --install "$build" --prefix "$work/stage" >"$work/log" 2>&1 || fatal "staging install failed"
  (cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/deb" \
    -D CPACK_INSTALL_CMAKE_PROJECTS= -D "CPACK_INSTALLED_DIRECTORIES=$work/stage;usr") >"$work/log" 2>&1 \
    || fatal "cpack failed: $(tail -5 "$work/log")"
  deb=$(ls "$work"/deb/attnlab_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || fatal "no .deb in $work/deb: $(ls "$work/deb")"
  dpkg-deb -I "$deb" >"$work/info"
  grep -q "^ Package: attnlab$" "$work/info" && ok "deb: Package" || bad "deb Package: $(cat "$work/info")"
  grep -Eq "^ Version: [0-9]+\.[0-9]+\.[0-9]+$" "$work/info" && ok "deb: Version" || bad "deb Version"
  for dep in libtorch1.13 libcairo2 libmuparser2v5 fonts-dejavu-core; do
    grep -E "^ Depends:" "$work/info" | grep -q "\b$dep\b" && ok "deb depends on $dep" || bad "deb Depends lacks $dep: $(grep Depends "$work/info")"
  done
  # Every Depends entry is a package Debian has (known to this machine's dpkg database).
  for dep in $(grep -E "^ Depends:" "$work/info" | sed 's/^ Depends://; s/([^)]*)//g; s/,/ /g'); do
    dpkg-query -W "$dep" >/dev/null 2>&1 || bad "deb depends on $dep, which is not an installed package here"
  done
  dpkg-deb -c "$deb" >"$work/contents"
  grep -q " ./usr/bin/attnlab$" "$work/contents" && grep -q " ./usr/share/attnlab/configs/repro/conn/repro.json$" "$work/contents" \
    && ok "deb: /usr/bin/attnlab and /usr/share/attnlab/configs" || bad "deb contents: $(head "$work/contents")"
else
  echo "skip: dpkg-deb or cpack not found, the .deb is not checked"
fi
finish
