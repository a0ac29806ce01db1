#!/usr/bin/env bash
# Checks that a change does not alter results: builds REV (default HEAD) in a temporary
# worktree and the working tree as it is, runs both binaries on every example and bench —
# `run --json`, `compare --json` (two-fabric files; a file compare refuses must be refused
# the same way) and `run --out` (the CSVs) — and compares the outputs byte for byte.
#
#   scripts/identical.sh [REV] [--skip NAME]...
#
# --skip leaves out a file by name (e.g. `--skip allreduce1024`, 2 × ~2 minutes; the perm8192
# benches take 1–2 minutes per run and perm27648-pfc several).
# Exit status 0: identical; 1: some output differs (the differing files are listed, and
# kept under $OUT, default /tmp/identical.<pid>); 2: usage or build error.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=HEAD
skip=()
while [ $# -gt 0 ]; do
  case "$1" in
    --skip) skip+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) rev="$1"; shift ;;
  esac
done
out=${OUT:-/tmp/identical.$$}
mkdir -p "$out"
base_tree="$out/base-src"
git worktree add --detach -f "$base_tree" "$rev" >/dev/null 2>&1 || { echo "cannot check out $rev" >&2; exit 2; }
trap 'git worktree remove --force "$base_tree" >/dev/null 2>&1 || true' EXIT
echo "building $rev and the working tree (release)..." >&2
(cd "$base_tree" && CARGO_TARGET_DIR="$out/base-target" cargo build --release -q -p fabriclab) || exit 2
cargo build --release -q -p fabriclab || exit 2
declare -A bin=([base]="$out/base-target/release/fabriclab" [new]="${CARGO_TARGET_DIR:-target}/release/fabriclab")

files=(examples/*.toml benches/*.toml)
for side in base new; do
  mkdir -p "$out/$side"
  for f in "${files[@]}"; do
    name=$(basename "$f" .toml)
    for s in "${skip[@]:-}"; do [ "$s" = "$name" ] && continue 2; done
    b=${bin[$side]}
    # The working tree's files for both sides: the scenario is the input, the binary the
    # thing under test.
    { "$b" run --json "$f" || echo "exit $?"; } >"$out/$side/$name.run.json" 2>"$out/$side/$name.run.err"
    { "$b" compare --json "$f" || echo "exit $?"; } >"$out/$side/$name.compare.json" 2>"$out/$side/$name.compare.err"
    mkdir -p "$out/$side/$name.csv"
    "$b" run --out "$out/$side/$name.csv" "$f" >/dev/null 2>&1 || true
  done
done

if diff -r -q "$out/base" "$out/new"; then
  echo "identical: run --json, compare --json and --out CSVs of ${#files[@]} files against $rev"
  exit 0
fi
echo "DIFFERENT (outputs kept in $out)" >&2
exit 1
