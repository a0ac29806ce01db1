#!/usr/bin/env bash
# Checks that two fabriclab binaries' subnet managers program the same tables: runs
# `fabriclab sm FILE --routing E --json` (every LFT entry, LIDs, dfsssp's path VLs, path
# and port statistics, SMP counts) with both for every engine and compares the outputs
# byte for byte (by SHA-256; the k=32 document is ~200 MB).
#
#   scripts/sm-identical.sh BASE_BIN NEW_BIN [FILE]...
#
# Without FILE: the k=32 fat tree of `fabriclab sm --bench` (8,192 hosts, 1,280 switches),
# written to a temporary scenario. About 15 s per engine and binary.
# Exit status 0: identical; 1: some output differs; 2: usage error.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,11p' "$0"; exit 2; }
base=$1 new=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  cat > "$tmp/k32.toml" <<'TOML'
[scenario]
name = "k32"
seed = 1
[topology]
kind = "fat-tree"
k = 32
host_link = { speed = "400Gbps", cable = "3m" }
fabric_link = { speed = "400Gbps", cable = "20m" }
[infiniband]
mtu = "4096B"
data_vls = 1
sl_to_vl = { 0 = 0 }
vl_buffer = "128KiB"
hoq_lifetime = "auto"
switch_lifetime = "auto"
routing = "ftree"
timeout = 20
retry_cnt = 7
forwarding = "cut-through"
switch_latency = "auto"
[[traffic]]
kind = "message"
src = 0
dst = 1
size = "4KB"
at = "0us"
sl = 0
TOML
  files=("$tmp/k32.toml")
fi
status=0
for f in "${files[@]}"; do
  for e in minhop updn ftree dfsssp; do
    a=$("$base" sm "$f" --routing "$e" --json | sha256sum | cut -c1-16)
    b=$("$new" sm "$f" --routing "$e" --json | sha256sum | cut -c1-16)
    if [ "$a" = "$b" ]; then
      echo "same     $e $(basename "$f") $a"
    else
      echo "DIFFERS  $e $(basename "$f") base $a new $b"
      status=1
    fi
  done
done
exit $status
