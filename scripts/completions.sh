#!/usr/bin/env bash
# Regenerates the committed shell completions and man pages (man/) from the current CLI
# (tests/completions.rs checks they are current). man/ is a link to packaging/wheel-data/data/share/man/man1,
# the wheel's data (pyproject.toml), so the pages land there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --quiet
for pair in bash:memctl.bash zsh:_memctl fish:memctl.fish; do
  target/debug/memctl completions "${pair%%:*}" > "completions/${pair#*:}"
done
rm -f man/*.1
target/debug/memctl man man > /dev/null
