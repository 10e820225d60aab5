#!/usr/bin/env bash
# Writes the CLI reference (docs/guide/cli-reference.md) from the binary's own --help, so the
# page cannot drift from the code: ctest `cli_reference` regenerates it and fails on any
# difference.
# usage: scripts/cli_reference.sh <attnlab> > docs/guide/cli-reference.md
set -euo pipefail
bin=$1
# The usage line names the binary as it was called: the reference says `attnlab`.
help_of() { "$bin" "$@" --help | sed -E "s#^Usage: [^ ]*attnlab#Usage: attnlab#"; }
commands=$("$bin" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
cat <<'EOF'
# CLI reference

Generated from `attnlab --help` and each command's `--help` by `scripts/cli_reference.sh`;
ctest `cli_reference` fails when this page and the binary disagree. Regenerate with
`scripts/cli_reference.sh build/app/attnlab > docs/guide/cli-reference.md`.
Exit codes, output streams and `--json`: [cli.md](cli.md).

EOF
printf '## attnlab\n\n```\n%s\n```\n' "$(help_of)"
for c in $commands; do
  printf '\n## attnlab %s\n\n```\n%s\n```\n' "$c" "$(help_of "$c")"
done
