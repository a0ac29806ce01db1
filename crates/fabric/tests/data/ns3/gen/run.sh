#!/bin/bash
# Run one generated scenario: run.sh /work/ns3/runs/<name>
# Writes <name>/out/{fct,pfc,qsample,qstats}.txt, stdout.txt, time.txt, then summary.json via analyze.py.
set -e
RUN=$(readlink -f "$1")
BIN=$(ls /work/ns3/src/simulation/build/scratch/ns3.36.1-fabriclab-third-optimized)
mkdir -p "$RUN/out"
cd "$RUN"
echo "$BIN $RUN/config.txt" > out/cmdline.txt
/usr/bin/time -v -o out/time.txt nice -n 19 "$BIN" "$RUN/config.txt" > out/stdout.txt 2> out/stderr.txt
python3 /work/ns3/gen/analyze.py "$RUN" > out/analyze.txt
