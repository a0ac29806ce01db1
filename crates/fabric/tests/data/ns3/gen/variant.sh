#!/bin/bash
# variant.sh BASE_RUN NEW_RUN RNGRUN [KEY=VALUE]...
# A run derived from BASE_RUN: the same inputs, its config pointed at NEW_RUN, keys given
# here replacing the base's (or added), PATHS_FILE dropped (the base's paths hold), then run
# with ns-3's NS_GLOBAL_VALUE=RngRun=RNGRUN (1 = ns-3's default) and analysed (analyze.py).
set -e
SRC=$(readlink -f "$1"); NEW=$(readlink -m "$2"); RNG=$3; shift 3
BIN=$(ls /work/ns3/src/simulation/build/scratch/ns3.36.1-fabriclab-third-optimized)
rm -rf "$NEW"; mkdir -p "$NEW/out"
for f in topology.txt flow.txt trace.txt meta.json; do cp "$SRC/$f" "$NEW/$f"; done
sed -e "s|$SRC/|$NEW/|g" -e "/^PATHS_FILE /d" "$SRC/config.txt" > "$NEW/config.txt"
for kv in "$@"; do k=${kv%%=*}; sed -i "/^$k /d" "$NEW/config.txt"; echo "$k ${kv#*=}" >> "$NEW/config.txt"; done
python3 -c "import json,sys,os; d=sys.argv[1]; m=json.load(open(d+'/meta.json')); m['name']=os.path.basename(d); m['derived_from']=os.path.basename(sys.argv[2]); m['rng_run']=int(sys.argv[3]); json.dump(m,open(d+'/meta.json','w'),indent=1)" "$NEW" "$SRC" "$RNG"
cd "$NEW"
echo "NS_GLOBAL_VALUE=RngRun=$RNG $BIN $NEW/config.txt" > out/cmdline.txt
NS_GLOBAL_VALUE=RngRun=$RNG /usr/bin/time -v -o out/time.txt nice -n 19 "$BIN" "$NEW/config.txt" > out/stdout.txt 2> out/stderr.txt
python3 /work/ns3/gen/analyze.py "$NEW" > out/analyze.txt
