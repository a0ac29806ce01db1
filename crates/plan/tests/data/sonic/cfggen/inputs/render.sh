#!/bin/sh
# Renders complete CONFIG_DBs for the leaf-spine, as a SONiC switch builds them on
# `config load_minigraph` (sonic-utilities config/main.py at 691b1bbc4fd2):
#   0. (at image build) j2 files/build_templates/init_cfg.json.j2 > /etc/sonic/init_cfg.json
#   1. sonic-cfggen -H -m minigraph.xml -j /etc/sonic/init_cfg.json --write-to-db
#   2. config qos reload --no-dynamic-buffer: buffer_model "traditional", then
#      sonic-cfggen -d -t buffers.json.j2,buffers.json -t qos.json.j2,qos.json -y sonic_version.yml
#      sonic-cfggen -j buffers.json -j qos.json --write-to-db
#      (MODEL dynamic: `config qos reload` without --no-dynamic-buffer, as an operator runs it
#      on a Mellanox switch: buffer_model "dynamic" and buffers_dynamic.json.j2)
#   3. pfcwd start_default: writes PFC_WD only when default_pfcwd_status is "enable" (it is
#      "disable" in a default build), so nothing here.
# Here Redis is a file: --print-data instead of --write-to-db, -j base.json instead of -d,
# -a gives what -H reads from the hardware (platform from machine.conf, mac from the EEPROM),
# and db_roundtrip.py turns the result into what the database holds and `config save` writes.
# usage: render.sh ASIC(mellanox|broadcom) SKU_DIR PLATFORM MINIGRAPH_DIR OUT_DIR [traditional|dynamic]
set -eu
ASIC=$1 SKU_DIR=$2 PLATFORM=$3 MG=$4 OUT=$5 MODEL=${6:-traditional}
case $MODEL in traditional) BUF=buffers.json.j2 ;; dynamic) BUF=buffers_dynamic.json.j2 ;; *) echo "bad model $MODEL" >&2; exit 2 ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${SONIC_BUILDIMAGE:-/work/cfggen}   # sonic-buildimage 086b03bd70f9's files
export PLATFORM
export PYTHONPATH=$HERE/stubs:$SRC/src/sonic-py-common:$SRC/src/sonic-config-engine
CFG="${PYTHON:-/work/cfggen-venv/bin/python} $SRC/src/sonic-config-engine/sonic-cfggen"
T=$(mktemp -d)
mkdir -p "$OUT"

# 0. init_cfg.json: the build variables, plus the platform's (SONIC_BUFFER_MODEL is "dynamic"
#    in platform/mellanox/rules.mk and unset for Broadcom).
(set -a; . "$HERE/build_vars.env"; sonic_asic_platform=$ASIC
 default_buffer_model=$([ "$ASIC" = mellanox ] && echo dynamic || echo "")
 ${J2:-/work/cfggen-venv/bin/j2} "$SRC/files/build_templates/init_cfg.json.j2") > "$T/init_cfg.json"
# /etc/sonic/sonic_version.yml: only asic_type is read here.
printf "build_version: 'master.0-086b03bd7'\nasic_type: %s\ncommit_id: '086b03bd7'\nbranch: 'master'\nrelease: 'none'\n" "$ASIC" > "$T/sonic_version.yml"

# buffers_config.j2 / qos_config.j2 sit beside the SKU's templates on a switch; copy them the
# way the upstream tests do (src/sonic-config-engine/tests/test_j2files.py).
mkdir "$T/sku"
for f in "$SKU_DIR"/*; do [ -f "$f" ] && cp -L "$f" "$T/sku/"; done
cp "$SRC/files/build_templates/buffers_config.j2" "$SRC/files/build_templates/qos_config.j2" "$T/sku/"

n=0
for mg in "$MG"/*.xml; do
  host=$(basename "$mg" .xml); n=$((n + 1))
  hw="{\"DEVICE_METADATA\": {\"localhost\": {\"platform\": \"$PLATFORM\", \"mac\": \"02:00:00:00:00:0$n\"}}}"
  $CFG -m "$mg" -p "$T/sku/port_config.ini" -j "$T/init_cfg.json" -a "$hw" --print-data > "$T/base.json"
  $CFG -j "$T/base.json" -a "{\"DEVICE_METADATA\": {\"localhost\": {\"buffer_model\": \"$MODEL\"}}}" --print-data > "$T/db.json"
  $CFG -j "$T/db.json" -y "$T/sonic_version.yml" -t "$T/sku/$BUF,$T/buffers.json" -t "$T/sku/qos.json.j2,$T/qos.json"
  $CFG -j "$T/db.json" -j "$T/buffers.json" -j "$T/qos.json" --print-data > "$T/all.json"
  python3 "$HERE/db_roundtrip.py" "$T/all.json" "$OUT/$host.config_db.json"
  echo "$OUT/$host.config_db.json"
done
rm -rf "$T"
