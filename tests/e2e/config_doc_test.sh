#!/usr/bin/env bash
# docs/guide/config.md is what `attnlab config --doc` prints: the page comes from the table the
# parser reads every key with (core/config/config_keys.cpp) and the mechanisms' descriptors, so a
# key, range, default or option changed there and not regenerated fails here.
# usage: config_doc_test.sh <attnlab> <source dir>
set -u
bin=$1 src=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_tmpdir; work=$E2E_TMP
if "$bin" config --doc > "$work/config.md" 2> "$work/err"; then
  ok "attnlab config --doc prints the page"
else
  bad "attnlab config --doc failed: $(cat "$work/err")"
fi
if cmp -s "$work/config.md" "$src/docs/guide/config.md"; then
  ok "docs/guide/config.md is the generated page"
else
  bad "docs/guide/config.md differs from what attnlab config --doc prints; regenerate it with
     $bin config --doc > $src/docs/guide/config.md
$(diff "$src/docs/guide/config.md" "$work/config.md" | head -20)"
fi
"$bin" config > /dev/null 2>&1; rc=$?
[ $rc = 2 ] && ok "attnlab config without --doc is a usage error (exit 2)" || bad "attnlab config: exit $rc"
summary
