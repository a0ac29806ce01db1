#!/usr/bin/env bash
# The scaling table of the README (issue 17): events/s and peak RSS of a PFC-only random
# permutation on k = 8, 16, 32 and 48 fat trees (128 to 27,648 hosts), from
# benches/perm8192-pfc.toml with only `k` (and, for k = 48, the flow size: 1 MB, as issue 17
# sets it) changed. Runs `fabriclab bench` once per size, smallest first, and prints a
# Markdown table. k = 48 takes minutes and about 0.6 GB.
#
#   scripts/scaling.sh [FABRICLAB_BINARY] [K...]     (default: target/release/fabriclab, 8 16 32 48)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${CARGO_TARGET_DIR:-target}/release/fabriclab}
shift || true
ks=("$@")
[ ${#ks[@]} -gt 0 ] || ks=(8 16 32 48)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| hosts | switches | k | flow | events | wall | events/s | peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
for k in "${ks[@]}"; do
  size=2000000
  [ "$k" -ge 48 ] && size=1000000
  f="$tmp/perm-k$k.toml"
  sed -e "s/^k = 32$/k = $k/" -e "s/^size = \"2000000B\"$/size = \"${size}B\"/" -e "s/^name = .*/name = \"perm-k$k-pfc\"/" benches/perm8192-pfc.toml >"$f"
  out=$("$bin" bench "$f")
  # "NAME: setup S s, total T s, E events (R M/s), ... peak RSS P kB"
  total=$(sed -E 's/.*total ([0-9.]+) s.*/\1/' <<<"$out")
  events=$(sed -E 's/.*, ([0-9]+) events \(.*/\1/' <<<"$out")
  rate=$(sed -E 's/.*events \(([0-9.]+) M\/s\).*/\1/' <<<"$out")
  rss=$(sed -E 's/.*peak RSS ([0-9]+) kB.*/\1/' <<<"$out")
  hosts=$((k * k * k / 4))
  switches=$((5 * k * k / 4))
  printf '| %s | %s | %s | %s MB | %s | %s s | %s M | %s MB |\n' "$hosts" "$switches" "$k" "$((size / 1000000))" "$events" "$total" "$rate" "$((rss / 1024))"
done
