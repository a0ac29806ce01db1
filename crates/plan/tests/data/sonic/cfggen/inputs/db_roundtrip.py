#!/usr/bin/env python3
"""What CONFIG_DB holds after `sonic-cfggen ... --write-to-db` and what `config save`
(`sonic-cfggen -d --print-data`) reads back: every field through ConfigDBConnector's
typed_to_raw (str(value); a list joined with "," under "field@"; an empty entry as
NULL:NULL) and raw_to_typed (back to a list for "field@"; NULL dropped), as
sonic-swss-common common/configdb.h (00b2c8938f22) defines them. --print-data stops before
this, so None (e.g. DEVICE_METADATA region) would stay null instead of the "None" a switch
stores.

usage: db_roundtrip.py IN.json OUT.json"""
import json
import sys


def typed_to_raw(typed):
    if typed is None:
        return {}
    if len(typed) == 0:
        return {"NULL": "NULL"}
    return {(k + "@" if isinstance(v, list) else k): (",".join(v) if isinstance(v, list) else str(v)) for k, v in typed.items()}


def raw_to_typed(raw):
    out = {}
    for k, v in raw.items():
        if k == "NULL":
            continue
        if k.endswith("@"):
            out[k[:-1]] = v.split(",")
        else:
            out[k] = v
    return out


data = json.load(open(sys.argv[1]))
db = {}
for table, rows in data.items():
    if rows is None:
        continue
    if not isinstance(rows, dict):
        sys.exit(f"{table}: not a table")
    db[table] = {key: raw_to_typed(typed_to_raw(entry)) for key, entry in rows.items()}
with open(sys.argv[2], "w") as f:
    json.dump(db, f, indent=4, sort_keys=True)
    f.write("\n")
