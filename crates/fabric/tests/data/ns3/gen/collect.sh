#!/bin/bash
# Copy a run's inputs and small outputs next to its summary in /work/ns3/figures/<run>/
set -e
RUN=$(readlink -f "$1"); N=$(basename "$RUN"); F=/work/ns3/figures/$N
mkdir -p "$F/inputs" "$F/outputs"
cp "$RUN/config.txt" "$RUN/trace.txt" "$F/inputs/"
for x in topology.txt flow.txt; do [ $(stat -c %s "$RUN/$x") -lt 600000 ] && cp "$RUN/$x" "$F/inputs/" || gzip -c "$RUN/$x" > "$F/inputs/$x.gz"; done
python3 -c "import json,sys; m=json.load(open('$RUN/meta.json')); m.pop('links_list'); json.dump(m, open('$F/inputs/meta.json','w'), indent=1)"
cp "$RUN/out/cmdline.txt" "$RUN/out/time.txt" "$RUN/out/fct.txt" "$RUN/out/qstats.txt" "$F/outputs/"
grep -v "^(" "$RUN/out/stdout.txt" | head -200 > "$F/outputs/stdout_head.txt"
for x in pfc.txt qsample.txt; do
  [ -f "$RUN/out/$x" ] || continue
  if [ $(stat -c %s "$RUN/out/$x") -lt 1500000 ]; then cp "$RUN/out/$x" "$F/outputs/"; else gzip -c "$RUN/out/$x" > "$F/outputs/$x.gz"; fi
done
rm -f "$F/pfc.txt"
du -sh "$F"
