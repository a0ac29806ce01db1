#!/usr/bin/env python3
"""Derives a small leaf-spine (leaf1, leaf2, spine1, spine2) from one real SONiC config_db.

Source: sonic-utilities tests/counterpoll_input/config_db.json at
691b1bbc4fd2b71657d1b0b334c37136deb51526 (a Dell S6000, Force10-S6000 SKU, with SONiC's
lossless profiles pg_lossless_40000_{5m,40m,300m}_profile), copied verbatim in
../sonic-utilities__tests__counterpoll_input__config_db.json.

Each switch keeps the source's values for four of its ports and drops the rest:
  leaves: Ethernet4, Ethernet8 (hosts, 5 m cables), Ethernet112 -> spine1, Ethernet116 -> spine2 (40 m)
  spines: Ethernet112 -> leaf1, Ethernet116 -> leaf2 (40 m)
Changed from the source: DEVICE_METADATA hostname, DEVICE_NEIGHBOR (rewritten to the links
above; the leaves' host ports keep their Servers0/Servers1 entries), and only the tables
fabriclab verify reads (plus SCHEDULER and MAP_PFC_PRIORITY_TO_QUEUE) are kept.
Run from this directory: python3 make.py
"""
import json

SRC = "../sonic-utilities__tests__counterpoll_input__config_db.json"
KEEP_WHOLE = ["DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
              "BUFFER_POOL", "BUFFER_PROFILE", "WRED_PROFILE", "SCHEDULER"]
PER_PORT = ["PORT", "PORT_QOS_MAP", "BUFFER_PG", "BUFFER_QUEUE", "QUEUE"]

SWITCHES = {
    "leaf1": {"Ethernet4": None, "Ethernet8": None, "Ethernet112": ("spine1", "Ethernet112"), "Ethernet116": ("spine2", "Ethernet112")},
    "leaf2": {"Ethernet4": None, "Ethernet8": None, "Ethernet112": ("spine1", "Ethernet116"), "Ethernet116": ("spine2", "Ethernet116")},
    "spine1": {"Ethernet112": ("leaf1", "Ethernet112"), "Ethernet116": ("leaf2", "Ethernet112")},
    "spine2": {"Ethernet112": ("leaf1", "Ethernet116"), "Ethernet116": ("leaf2", "Ethernet116")},
}


def port_of(key):
    return key.split("|")[0]


def derive(src, name, ports):
    out = {t: src[t] for t in KEEP_WHOLE if t in src}
    for t in PER_PORT:
        out[t] = {k: v for k, v in src[t].items() if port_of(k) in ports}
    out["CABLE_LENGTH"] = {k: {p: l for p, l in v.items() if p in ports} for k, v in src["CABLE_LENGTH"].items()}
    meta = dict(src["DEVICE_METADATA"]["localhost"])
    meta["hostname"] = name
    out["DEVICE_METADATA"] = {"localhost": meta}
    nb = {}
    for p, peer in ports.items():
        if peer is None:
            nb[p] = src["DEVICE_NEIGHBOR"][p]
        else:
            nb[p] = {"name": peer[0], "port": peer[1]}
    out["DEVICE_NEIGHBOR"] = nb
    return out


def main():
    src = json.load(open(SRC))
    for name, ports in SWITCHES.items():
        with open(f"{name}.json", "w") as f:
            json.dump(derive(src, name, ports), f, indent=2, sort_keys=True)
            f.write("\n")


main()
