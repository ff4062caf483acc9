#!/usr/bin/env bash
# Builds memctl's Python wheel and checks it the way a user gets it (issue #32):
#   1. the crate's package list (`cargo package --list`): has the sources, tiktoken's token
#      lists, README and LICENSE, and nothing of fixtures/, tests/, benches/, scripts/, man/,
#      completions/, packaging/, docs/ or a venv; the .crate's size is printed;
#   2. maturin (the version pinned in pyproject.toml's build-system, from PyPI, in
#      .venv/maturin) builds the wheel: `maturin build --release --locked` into
#      <target dir>/wheels/. It builds in the same target dir, with the same release profile
#      and features, as `cargo build --release`: nothing already built is compiled again;
#   3. the wheel is installed into a fresh venv (no index: the wheel needs nothing else), and
#      that venv's bin/memctl runs `--version` (Cargo's version; the wheel's metadata says the
#      same) and `threads list --db fixtures/new.sqlite`; the installed binary is the one
#      cargo built (target/release/memctl), byte for byte; the venv has the man pages
#      (share/man/man1: every page of man/, byte for byte, and `man` finds them through the
#      venv's bin/ on the PATH) and the completions (share/bash-completion/completions/memctl,
#      share/zsh/site-functions/_memctl, share/fish/vendor_completions.d/memctl.fish: those of
#      completions/), from pyproject.toml's [tool.maturin] data (packaging/wheel-data).
# Prints the wheel's size and how long the build and `pip install` took. Run by scripts/test.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

log() { printf 'wheel: %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

meta="$(cargo metadata --no-deps --format-version 1 --locked)"
field() { printf '%s' "$meta" | "$PYTHON" -c 'import json,sys; p=[p for p in json.load(sys.stdin)["packages"] if p["name"]=="memctl"][0]; print(p[sys.argv[1]])' "$1"; }
VERSION="$(field version)"
SUMMARY="$(field description)"
TARGET_DIR="$(printf '%s' "$meta" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"

# ---- 1. what `cargo publish` would ship ---------------------------------------------------
list="$(cargo package --list --locked --allow-dirty 2>/dev/null)"
bad="$(printf '%s\n' "$list" | grep -E '^(fixtures|tests|benches|scripts|man|completions|packaging|docs|target)/|(^|/)(\.venv|node_modules)/' || true)"
[[ -z "$bad" ]] || fail "the crate package would ship files it does not need:"$'\n'"$bad"
for need in src/main.rs src/lib.rs data/tiktoken/o200k_base.tokens.gz \
  data/tiktoken/cl100k_base.tokens.gz README.md LICENSE Cargo.toml Cargo.lock; do
  # Not `printf | grep -q`: grep -q exits at its match, and a list longer than one write
  # then kills printf with SIGPIPE, which pipefail turns into a failure.
  grep -xF "$need" <<<"$list" >/dev/null || fail "the crate package lacks $need"
done
cargo package --locked --allow-dirty --no-verify --quiet 2>/dev/null
crate="$TARGET_DIR/package/memctl-$VERSION.crate"
[[ -f "$crate" ]] || fail "cargo package made no $crate"
log "crate package: $(printf '%s\n' "$list" | wc -l) files, $(du -k "$crate" | cut -f1) KiB ($crate)"

# ---- 2. the wheel -------------------------------------------------------------------------
MATURIN_PIN="$(grep -oE 'maturin==[0-9][0-9.]*' pyproject.toml | head -n1)"
[[ -n "$MATURIN_PIN" ]] || fail "pyproject.toml pins no maturin==X.Y.Z"
TOOLS="$ROOT/.venv/maturin"
if [[ "$("$TOOLS/bin/maturin" --version 2>/dev/null || true)" != "maturin ${MATURIN_PIN#maturin==}" ]]; then
  log "installing $MATURIN_PIN into $TOOLS"
  rm -rf "$TOOLS"
  "$PYTHON" -m venv "$TOOLS"
  "$TOOLS/bin/pip" install --quiet "$MATURIN_PIN"
fi

WHEELS="$TARGET_DIR/wheels"
rm -f "$WHEELS"/memctl-*.whl
start="$(now)"
"$TOOLS/bin/maturin" build --release --locked --out "$WHEELS" --quiet >&2
log "maturin build --release: $(since "$start")"
shopt -s nullglob
wheels=("$WHEELS"/memctl-"$VERSION"-*.whl)
shopt -u nullglob
[[ ${#wheels[@]} -eq 1 ]] || fail "expected one memctl-$VERSION wheel in $WHEELS, found ${#wheels[@]}"
wheel="${wheels[0]}"
log "built $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB"

# ---- 3. installed in a fresh venv ---------------------------------------------------------
VENV="$(mktemp -d /tmp/memctl-wheel.XXXXXX)"
trap 'rm -rf "$VENV"' EXIT
"$PYTHON" -m venv "$VENV"
start="$(now)"
"$VENV/bin/pip" install --quiet --no-index "$wheel"
log "pip install (from the wheel, fresh venv): $(since "$start")"

got="$("$VENV/bin/memctl" --version)"
[[ "$(head -n1 <<<"$got")" == "memctl $VERSION" ]] || fail "memctl --version says '$(head -n1 <<<"$got")', Cargo.toml says $VERSION"
grep -q '^LangGraph formats:' <<<"$got" || fail "memctl --version lists no LangGraph formats"
[[ "$("$VENV/bin/memctl" -V)" == "memctl $VERSION" ]] || fail "memctl -V is not 'memctl $VERSION'"

# The metadata PyPI would show: the version and summary of Cargo.toml, MIT, the README.
"$VENV/bin/python" - "$VERSION" "$SUMMARY" <<'PY' || fail "the wheel's metadata differs from Cargo.toml"
import sys
from importlib.metadata import metadata
m = metadata("memctl")
want_version, want_summary = sys.argv[1], sys.argv[2]
licence = m.get("License-Expression") or m.get("License")
problems = []
if m["Version"] != want_version:
    problems.append(f"Version {m['Version']!r} != {want_version!r}")
if m["Summary"] != want_summary:
    problems.append(f"Summary {m['Summary']!r} != {want_summary!r}")
if licence != "MIT":
    problems.append(f"licence {licence!r} != 'MIT'")
if m.get("Description-Content-Type") != "text/markdown" or "# memctl" not in (m.get_payload() or ""):
    problems.append("the README is not the long description")
for p in problems:
    print("wheel metadata:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY

out="$("$VENV/bin/memctl" threads list --db fixtures/new.sqlite)"
[[ -n "$out" ]] || fail "memctl threads list printed nothing"
want="$("$TARGET_DIR/release/memctl" threads list --db fixtures/new.sqlite)"
[[ "$out" == "$want" ]] || fail "the installed memctl lists threads differently from target/release/memctl"
cmp -s "$VENV/bin/memctl" "$TARGET_DIR/release/memctl" \
  || fail "the installed memctl is not target/release/memctl"
log "ok: $VENV/bin/memctl is Cargo's release binary; --version and threads list run"

# The man pages and completions the wheel installs (its data directory, unpacked into the
# venv's prefix): every committed page and completion script, byte for byte, and nothing else.
installed_pages="$(cd "$VENV/share/man/man1" 2>/dev/null && ls)" || fail "the venv has no share/man/man1"
[[ "$installed_pages" == "$(cd man && ls)" ]] \
  || fail "the venv's share/man/man1 differs from man/:"$'\n'"$(diff <(printf '%s\n' "$installed_pages") <(cd man && ls) || true)"
for page in man/*.1; do
  cmp -s "$page" "$VENV/share/man/man1/$(basename "$page")" || fail "the installed $(basename "$page") is not $page"
done
for pair in bash-completion/completions/memctl:memctl.bash zsh/site-functions/_memctl:_memctl \
  fish/vendor_completions.d/memctl.fish:memctl.fish; do
  cmp -s "completions/${pair#*:}" "$VENV/share/${pair%%:*}" \
    || fail "the venv's share/${pair%%:*} is not completions/${pair#*:}"
done
if command -v man >/dev/null; then
  found="$(env -u MANPATH PATH="$VENV/bin:$PATH" man -w memctl-trim 2>/dev/null || true)"
  [[ "$found" == "$VENV/share/man/man1/memctl-trim.1" ]] \
    || fail "man -w memctl-trim with the venv's bin/ on the PATH gives '$found'"
fi
log "ok: the venv has $(wc -l <<<"$installed_pages") man pages (man finds them) and the bash, zsh and fish completions"
