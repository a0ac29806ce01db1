#!/usr/bin/env bash
# Writes crates/plan/data/pg_profile_lookup.csv, the pg_profile_lookup.ini tables that
# `fabriclab verify` knows, from a bare git dir of sonic-net/sonic-buildimage:
#
#   scripts/pg_profile_lookup.sh GIT_DIR [COMMIT] > crates/plan/data/pg_profile_lookup.csv
#
# One row per table line: platform and hwsku are the directories of
# device/<vendor>/<platform>/<hwsku>/pg_profile_lookup.ini, which buffermgrd reads as
# /usr/share/sonic/hwsku/pg_profile_lookup.ini (dockers/docker-orchagent/buffermgrd.sh;
# the hwsku directory is mounted from /usr/share/sonic/device/<platform>/<hwsku>). A path
# that is a symlink (hwsku -> ../../../common/profiles/...) is followed; `file` is the
# file read. Columns as buffermgrd reads a line (sonic-swss cfgmgr/buffermgr.cpp
# readPgProfileLookupFile): speed cable size xon xoff threshold [xon_offset].
set -euo pipefail
g="$1"; rev="${2:-HEAD}"
commit=$(git --git-dir="$g" rev-parse "$rev")
hwskus=(
  device/arista/x86_64-arista_7050sx3_48c8/Arista-7050SX3-48C8
  device/arista/x86_64-arista_7060_cx32s/Arista-7060CX-32S
  device/arista/x86_64-arista_7060_cx32s/Arista-7060CX-32S-C32
  device/arista/x86_64-arista_7260cx3_64/Arista-7260CX3-C64
  device/arista/x86_64-arista_7800r3_48cq2_lc/Arista-7800R3-48CQ2-C48
  device/dell/x86_64-dell_s6000_s1220-r0/Force10-S6000
  device/dell/x86_64-dellemc_z9264f_c3538-r0/DellEMC-Z9264f-C64
  device/marvell/x86_64-marvell_d64p512t-r0/d64p512t_128x400G-2x10G
  device/mellanox/x86_64-mlnx_msn2700-r0/ACS-MSN2700
  device/mellanox/x86_64-mlnx_msn2700-r0/Mellanox-SN2700
  device/mellanox/x86_64-mlnx_msn4600c-r0/Mellanox-SN4600C-C64
  device/mellanox/x86_64-nvidia_sn4280-r0/Mellanox-SN4280-C48
  device/mellanox/x86_64-nvidia_sn6600_ld-r0/ACS-SN6600_LD
  device/nokia/x86_64-nokia_ixr7220_h5_64o-r0/Nokia-IXR7220-H5-64O
)
# Follows symlinks in PATH (any component) inside the tree at $commit.
resolve() {
  local p="$1" out="" part mode obj
  IFS=/ read -ra parts <<<"$p"
  for part in "${parts[@]}"; do
    local cand="${out:+$out/}$part"
    read -r mode _ obj _ < <(git --git-dir="$g" ls-tree "$commit" "$cand")
    if [ "$mode" = 120000 ]; then
      local target; target=$(git --git-dir="$g" cat-file -p "$obj")
      cand=$(realpath -m --relative-to=/ "/$out/$target")
      cand=$(resolve "$cand")
    fi
    out="$cand"
  done
  echo "$out"
}
echo "# sonic-net/sonic-buildimage at $commit; written by scripts/pg_profile_lookup.sh"
echo "platform,hwsku,speed_mbps,cable_length,size,xon,xoff,threshold,xon_offset,file"
for h in "${hwskus[@]}"; do
  platform=$(basename "$(dirname "$h")"); hwsku=$(basename "$h")
  file=$(resolve "$h/pg_profile_lookup.ini")
  git --git-dir="$g" show "$commit:$file" | tr -d '\r' | grep -v '^[[:space:]]*#' | grep -v '^[[:space:]]*$' |
    awk -v p="$platform" -v h="$hwsku" -v f="$file" '{print p "," h "," $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7 "," f}'
done
