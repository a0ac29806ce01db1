#!/usr/bin/env python3
"""Writes topology.txt, flow.txt, trace.txt and config.txt for the ns-3 cross-check runs.

Formats are those of HPCC's simulation/mix/ files as read by scratch/third.cc (and by our
driver fabriclab-third.cc): topology "nodes switches links", the switch ids, then
"a b rate delay error_rate" per link; flows "count", then "src dst pg dport bytes start_s".

Node numbering here: hosts first (0..H-1), then switches. Links are written hosts first,
then fabric links in fabriclab's `Topology::leaf_spine` / `Topology::fat_tree` order
(crates/fabric/src/topology.rs), so ns-3 device index d on a switch = fabriclab port d-1.

Usage: gen.py OUTDIR  (writes OUTDIR/<run>/...)
"""
import json
import math
import os
import random
import sys

GBPS = 1_000_000_000


# --------------------------------------------------------------------------------------
# topologies
# --------------------------------------------------------------------------------------
def leaf_spine(leaves, spines, hosts_per_leaf, uplinks, rate_gbps, host_delay_ns, fabric_delay_ns):
    H = leaves * hosts_per_leaf
    leaf = [H + l for l in range(leaves)]
    spine = [H + leaves + s for s in range(spines)]
    links = []
    names = {}
    for l in range(leaves):
        names[leaf[l]] = f"leaf{l}"
    for s in range(spines):
        names[spine[s]] = f"spine{s}"
    for h in range(H):
        names[h] = f"h{h}"
        links.append((h, leaf[h // hosts_per_leaf], rate_gbps, host_delay_ns))
    for l in range(leaves):
        for s in range(spines):
            for u in range(uplinks):
                links.append((leaf[l], spine[s], rate_gbps, fabric_delay_ns))
    return dict(hosts=H, switches=leaf + spine, links=links, names=names,
                desc=f"leaf-spine {leaves} leaves x {spines} spines, {hosts_per_leaf} hosts/leaf, "
                     f"{uplinks} uplink(s) per leaf-spine pair, {rate_gbps} Gb/s, host link {host_delay_ns} ns, "
                     f"fabric link {fabric_delay_ns} ns; hosts 0..{H-1}, leaf l = {H}+l, spine s = {H+leaves}+s")


def fat_tree(k, rate_gbps, host_delay_ns, fabric_delay_ns):
    h = k // 2
    H = k * h * h
    edges, aggs = [], []
    nid = H
    names = {}
    for p in range(k):
        for e in range(h):
            edges.append(nid); names[nid] = f"edge{p}-{e}"; nid += 1
    for p in range(k):
        for a in range(h):
            aggs.append(nid); names[nid] = f"agg{p}-{a}"; nid += 1
    cores = []
    for c in range(h * h):
        cores.append(nid); names[nid] = f"core{c}"; nid += 1
    links = []
    for ei, edge in enumerate(edges):
        for j in range(h):
            hid = ei * h + j
            names[hid] = f"h{hid}"
            links.append((hid, edge, rate_gbps, host_delay_ns))
    for p in range(k):
        for e in range(h):
            for a in range(h):
                links.append((edges[p * h + e], aggs[p * h + a], rate_gbps, fabric_delay_ns))
        for a in range(h):
            for c in range(h):
                links.append((aggs[p * h + a], cores[a * h + c], rate_gbps, fabric_delay_ns))
    return dict(hosts=H, switches=edges + aggs + cores, links=links, names=names,
                desc=f"k={k} fat tree, {H} hosts, {rate_gbps} Gb/s, host link {host_delay_ns} ns, fabric link "
                     f"{fabric_delay_ns} ns; hosts 0..{H-1}, edges {edges[0]}..{edges[-1]} (pod-major), aggs "
                     f"{aggs[0]}..{aggs[-1]}, cores {cores[0]}..{cores[-1]}")


def write_topology(path, topo):
    n = topo["hosts"] + len(topo["switches"])
    with open(path, "w") as f:
        f.write(f"{n} {len(topo['switches'])} {len(topo['links'])}\n")
        f.write(" ".join(str(s) for s in topo["switches"]) + "\n")
        for a, b, r, d in topo["links"]:
            f.write(f"{a} {b} {r}Gbps {d}ns 0\n")


def device_index(topo, node, peer):
    """ns-3 device index of `node`'s link to `peer` (1-based; 0 is the loopback)."""
    idx = 0
    for a, b, _, _ in topo["links"]:
        if a == node or b == node:
            idx += 1
            if (a == node and b == peer) or (b == node and a == peer):
                return idx
    raise KeyError((node, peer))


def switch_ports(topo):
    out = []
    for s in topo["switches"]:
        idx = 0
        for a, b, _, _ in topo["links"]:
            if a == s or b == s:
                idx += 1
                out.append((s, idx))
    return out


# --------------------------------------------------------------------------------------
# flows
# --------------------------------------------------------------------------------------
def write_flows(path, flows):
    flows = sorted(flows, key=lambda x: (x[3], x[0], x[1]))
    with open(path, "w") as f:
        f.write(f"{len(flows)}\n")
        for src, dst, size, t in flows:
            f.write(f"{src} {dst} 3 100 {size} {t:.9f}\n")
    return flows


class CustomRand:  # HPCC traffic_gen/custom_rand.py
    def __init__(self, cdf):
        self.cdf = cdf

    def getAvg(self):
        s = 0
        last_x, last_y = self.cdf[0]
        for x, y in self.cdf[1:]:
            s += (x + last_x) / 2.0 * (y - last_y)
            last_x, last_y = x, y
        return s / 100

    def rand(self, rng):
        r = rng.random() * 100
        for i in range(1, len(self.cdf)):
            if r <= self.cdf[i][1]:
                x0, y0 = self.cdf[i - 1]
                x1, y1 = self.cdf[i]
                return x0 + (x1 - x0) / (y1 - y0) * (r - y0)


def poisson_flows(cdf_path, nhost, load, bw_bps, duration_s, seed):
    """HPCC traffic_gen/traffic_gen.py's algorithm (heap of next arrival per host), base 0."""
    import heapq
    rng = random.Random(seed)
    cdf = [tuple(map(float, l.split())) for l in open(cdf_path) if l.strip()]
    cr = CustomRand(cdf)
    avg = cr.getAvg()
    avg_inter_arrival = 1 / (bw_bps * load / 8. / avg) * 1e9  # ns
    time_ns = duration_s * 1e9

    def poisson(lam):
        return -math.log(1 - rng.random()) * lam

    host_list = [(int(poisson(avg_inter_arrival)), i) for i in range(nhost)]
    heapq.heapify(host_list)
    flows = []
    while host_list:
        t, src = host_list[0]
        inter_t = int(poisson(avg_inter_arrival))
        dst = rng.randint(0, nhost - 1)
        while dst == src:
            dst = rng.randint(0, nhost - 1)
        if t + inter_t > time_ns:
            heapq.heappop(host_list)
        else:
            size = int(cr.rand(rng))
            if size <= 0:
                size = 1
            flows.append((src, dst, size, t * 1e-9))
            heapq.heapreplace(host_list, (t + inter_t, src))
    return flows, avg


def derangement(n, seed):
    rng = random.Random(seed)
    while True:
        p = list(range(n))
        rng.shuffle(p)
        if all(p[i] != i for i in range(n)):
            return p


# --------------------------------------------------------------------------------------
# config (HPCC run.py template, --cc dcqcn, plus our keys)
# --------------------------------------------------------------------------------------
def dcqcn_params(kind, bw_gbps):
    if kind == "mlx-runpy":  # run.py --cc dcqcn at --bw bw_gbps
        return dict(CC_MODE=1, ALPHA_RESUME_INTERVAL=1, RATE_DECREASE_INTERVAL=4, CLAMP_TARGET_RATE=0,
                    RP_TIMER=300, EWMA_GAIN=0.00390625, FAST_RECOVERY_TIMES=1,
                    RATE_AI=f"{5 * bw_gbps // 25}Mb/s", RATE_HAI=f"{50 * bw_gbps // 25}Mb/s",
                    MIN_RATE="1000Mb/s")
    if kind == "nvidia":  # ConnectX firmware defaults, in HPCC's mlx (CC_MODE 1) model
        return dict(CC_MODE=1, ALPHA_RESUME_INTERVAL=1, RATE_DECREASE_INTERVAL=4, CLAMP_TARGET_RATE=0,
                    RP_TIMER=300, EWMA_GAIN=5 / 1024, FAST_RECOVERY_TIMES=1,
                    RATE_AI="5Mb/s", RATE_HAI="50Mb/s", MIN_RATE="1Mb/s")
    if kind == "nvidia-connectx":  # the NVIDIA set with ConnectX's rules: local opt-in NV_* switches
        d = dcqcn_params("nvidia", bw_gbps)
        d.update(NV_RP=1, NV_DEFERRED_CUT=1, NV_INCREASE=1, NV_BYTE_RESET=32767, NV_CLAMP_RULE=1,
                 NV_CLAMP_ATI=1, NV_INITIAL_ALPHA=1023 / 1024, NV_RETIME=1, NV_CNP_PACKET=1,
                 NV_MIN_TIME_BETWEEN_CNPS=4)
        return d
    if kind == "nvidia-minrate1g":  # diagnostic: the NVIDIA set with run.py's 1 Gb/s rate floor
        d = dcqcn_params("nvidia", bw_gbps)
        d["MIN_RATE"] = "1000Mb/s"
        return d
    raise ValueError(kind)


def ecn_runpy(bw_gbps):
    # run.py: kmax 400*bw/25 KB, kmin 100*bw/25 KB, pmax 0.2 (for bw and 4*bw)
    return dict(kmin_kb=100 * bw_gbps // 25, kmax_kb=400 * bw_gbps // 25, pmax=0.2)


def write_config(path, rundir, bw_gbps, payload, dcqcn, ecn, buffer_mb, stop_s, qsample_ports, qinterval_ns,
                 pfc_alpha_shift=3, global_routing=1, headroom_bytes=37500, extra=()):
    # run.py writes the maps for bw and 4*bw, thresholds scaled with the rate
    rates = sorted({bw_gbps, 4 * bw_gbps})
    kmax = " ".join(f"{r * GBPS} {ecn['kmax_kb'] * r // bw_gbps}" for r in rates)
    kmin = " ".join(f"{r * GBPS} {ecn['kmin_kb'] * r // bw_gbps}" for r in rates)
    pmax = " ".join(f"{r * GBPS} {ecn['pmax']:.2f}" for r in rates)
    d = dcqcn
    lines = f"""ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1

PACKET_PAYLOAD_SIZE {payload}

TOPOLOGY_FILE {rundir}/topology.txt
FLOW_FILE {rundir}/flow.txt
TRACE_FILE {rundir}/trace.txt
TRACE_OUTPUT_FILE {rundir}/out/mix.tr
FCT_OUTPUT_FILE {rundir}/out/fct.txt
PFC_OUTPUT_FILE {rundir}/out/pfc.txt

SIMULATOR_STOP_TIME {stop_s}

CC_MODE {d['CC_MODE']}
ALPHA_RESUME_INTERVAL {d['ALPHA_RESUME_INTERVAL']}
RATE_DECREASE_INTERVAL {d['RATE_DECREASE_INTERVAL']}
CLAMP_TARGET_RATE {d['CLAMP_TARGET_RATE']}
RP_TIMER {d['RP_TIMER']}
EWMA_GAIN {d['EWMA_GAIN']}
FAST_RECOVERY_TIMES {d['FAST_RECOVERY_TIMES']}
RATE_AI {d['RATE_AI']}
RATE_HAI {d['RATE_HAI']}
MIN_RATE {d['MIN_RATE']}
DCTCP_RATE_AI 1000Mb/s

ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0

HAS_WIN 0
GLOBAL_T 1
VAR_WIN 0
FAST_REACT 0
U_TARGET 0.95
MI_THRESH 0
INT_MULTI 1
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE 1.01
PINT_PROB 1.0

RATE_BOUND 1

ACK_HIGH_PRIO 1

LINK_DOWN 0 0 0

ENABLE_TRACE 0

KMAX_MAP {len(rates)} {kmax}
KMIN_MAP {len(rates)} {kmin}
PMAX_MAP {len(rates)} {pmax}
BUFFER_SIZE {buffer_mb}

PFC_ALPHA_SHIFT {pfc_alpha_shift}
HEADROOM_BYTES {headroom_bytes}
GLOBAL_ROUTING {global_routing}
STOP_WHEN_DONE 1
QSAMPLE_FILE {rundir}/out/qsample.txt
QSTATS_FILE {rundir}/out/qstats.txt
QSAMPLE_INTERVAL {qinterval_ns}
QSAMPLE_PORTS {len(qsample_ports)} {' '.join(f'{a} {b}' for a, b in qsample_ports)}
"""
    # keys after the template: driver options (NIC_WAKE_SKIP_DRAINED, PATHS_FILE) and the
    # NV_* switches of the dcqcn kind
    for k, v in list(extra) + [(k, v) for k, v in d.items() if k.startswith("NV_")]:
        lines += f"{k} {v}\n"
    with open(path, "w") as f:
        f.write(lines)


# --------------------------------------------------------------------------------------
# scenarios
# --------------------------------------------------------------------------------------
def make(outdir, name, topo, flows, bw_gbps, payload, dcqcn_kind, ecn, buffer_mb, qports, qinterval_ns,
         meta, stop_s=1.0, global_routing=1, extra=()):
    rundir = os.path.join(outdir, name)
    os.makedirs(os.path.join(rundir, "out"), exist_ok=True)
    write_topology(os.path.join(rundir, "topology.txt"), topo)
    flows = write_flows(os.path.join(rundir, "flow.txt"), flows)
    with open(os.path.join(rundir, "trace.txt"), "w") as f:
        f.write("0\n")
    dc = dcqcn_params(dcqcn_kind, bw_gbps)
    write_config(os.path.join(rundir, "config.txt"), rundir, bw_gbps, payload, dc, ecn, buffer_mb, stop_s,
                 qports, qinterval_ns, global_routing=global_routing,
                 extra=[(k, v.replace("{rundir}", rundir)) for k, v in extra])
    m = dict(name=name, topology=topo["desc"], hosts=topo["hosts"], switches=len(topo["switches"]),
             links=len(topo["links"]), flows=len(flows), payload=payload, dcqcn=dcqcn_kind, dcqcn_params=dc,
             ecn=ecn, buffer_mb=buffer_mb, qsample_ports=qports, qsample_interval_ns=qinterval_ns,
             node_names={str(k): v for k, v in topo["names"].items() if k >= topo["hosts"]}, **meta)
    # per-link info for the analysis (hop counts / ideal FCT)
    m["links_list"] = topo["links"]
    with open(os.path.join(rundir, "meta.json"), "w") as f:
        json.dump(m, f, indent=1)
    return rundir


def main():
    outdir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "/work/ns3/runs")
    only = set(sys.argv[2:])
    bw = 100
    cdf = "/work/main/examples/data/WebSearch_distribution.txt"

    def want(n):
        return not only or n in only

    # 1. 16->1 incast: examples/roce-incast.toml topology (4 leaves x 2 spines, 8 hosts/leaf, 100G,
    #    host cable 3 m = 15 ns, fabric cable 20 m = 100 ns at 5 ns/m), h8..h23 -> h0, 1 MB (10^6 B) each.
    inc = leaf_spine(4, 2, 8, 1, bw, 15, 100)
    inc_flows = [(s, 0, 1_000_000, 0.0) for s in range(8, 24)]
    leaf0, sp0, sp1 = 32, 36, 37
    inc_ports = [(leaf0, device_index(inc, leaf0, 0)), (sp0, device_index(inc, sp0, leaf0)),
                 (sp1, device_index(inc, sp1, leaf0))]
    for payload in (4096, 1024):
        n = f"s1-incast16-mlx-runpy-p{payload}"
        if want(n):
            make(outdir, n, inc, inc_flows, bw, payload, "mlx-runpy", ecn_runpy(bw), 32, inc_ports, 100,
                 dict(scenario=1, bottleneck=f"leaf0 (node {leaf0}) dev {inc_ports[0][1]} -> h0"))
    n = "s1-incast16-nvidia-example-p4096"  # as examples/roce-incast.toml: ECN 150/1500 KB 0.1, 16 MiB
    if want(n):
        make(outdir, n, inc, inc_flows, bw, 4096, "nvidia", dict(kmin_kb=150, kmax_kb=1500, pmax=0.1), 16,
             inc_ports, 100, dict(scenario=1, bottleneck=f"leaf0 (node {leaf0}) dev {inc_ports[0][1]} -> h0"))

    # 2. all-to-all: 16 hosts, 4 leaves x 2 spines (4 hosts/leaf, 1 uplink per spine: 2:1), 100G,
    #    every host sends 1 MiB to each of the other 15 at t=0.
    a2a = leaf_spine(4, 2, 4, 1, bw, 15, 100)
    a2a_flows = [(s, d, 1 << 20, 0.0) for s in range(16) for d in range(16) if s != d]
    a2a_ports = switch_ports(a2a)
    for kind in ("mlx-runpy", "nvidia"):
        for payload in (4096, 1024):
            n = f"s2-a2a16-{kind}-p{payload}"
            if want(n):
                make(outdir, n, a2a, a2a_flows, bw, payload, kind, ecn_runpy(bw), 32, a2a_ports, 1000,
                     dict(scenario=2))

    # NVIDIA's values with ConnectX's rules (NV_* switches), HPCC's NIC wake-up rule, paths dumped
    n = "s2-a2a16-nvidia-connectx-p4096"
    if want(n):
        make(outdir, n, a2a, a2a_flows, bw, 4096, "nvidia-connectx", ecn_runpy(bw), 32, a2a_ports, 1000,
             dict(scenario=2), extra=[("NIC_WAKE_SKIP_DRAINED", "1"), ("PATHS_FILE", "{rundir}/out/paths.txt")])

    n = "s2-a2a16-nvidia-minrate1g-p4096"
    if want(n):
        make(outdir, n, a2a, a2a_flows, bw, 4096, "nvidia-minrate1g", ecn_runpy(bw), 32, a2a_ports, 1000,
             dict(scenario=2))

    # check of analyze.py's ideal FCT: one flow at a time on the scenario-2 topology
    n = "check-single-flow-p4096"
    if want(n):
        make(outdir, n, a2a, [(0, 4, 1 << 20, 0.0), (1, 2, 1000, 0.01), (5, 9, 10_000_000, 0.02)], bw, 4096,
             "mlx-runpy", ecn_runpy(bw), 32, [], 1000, dict(scenario=0))

    # 3. web-search at 50 % load on the same 2:1 leaf-spine (16 hosts), HPCC traffic_gen algorithm,
    #    100 ms of arrivals from t=0, seed 1.
    ws_flows, avg = poisson_flows(cdf, 16, 0.5, bw * GBPS, 0.1, seed=1)
    for payload in (4096,):
        n = f"s3-websearch50-mlx-runpy-p{payload}"
        if want(n):
            make(outdir, n, a2a, ws_flows, bw, payload, "mlx-runpy", ecn_runpy(bw), 32, [], 1000,
                 dict(scenario=3, cdf=cdf, load=0.5, arrivals_s=0.1, seed=1, cdf_mean_bytes=avg), stop_s=2.0)

    # 4. perm1024: benches/perm1024.toml: k=16 fat tree, 100G, 1 us per link, MTU 4096, 2,000,000 B
    #    to a random permutation peer (a derangement from Python's random, seed 1).
    ft = fat_tree(16, bw, 1000, 1000)
    perm = derangement(1024, 1)
    pflows = [(i, perm[i], 2_000_000, 0.0) for i in range(1024)]
    n = "s4-perm1024-mlx-runpy-p4096"
    if want(n):
        make(outdir, n, ft, pflows, bw, 4096, "mlx-runpy", ecn_runpy(bw), 32, [], 1000,
             dict(scenario=4, permutation_seed=1), global_routing=0)
    # sensitivity: payload 1024, other permutations (seeds 2, 3)
    n = "s4-perm1024-mlx-runpy-p1024"
    if want(n):
        make(outdir, n, ft, pflows, bw, 1024, "mlx-runpy", ecn_runpy(bw), 32, [], 1000,
             dict(scenario=4, permutation_seed=1), global_routing=0)
    for seed in (2, 3):
        perm_s = derangement(1024, seed)
        n = f"s4-perm1024-mlx-runpy-p4096-seed{seed}"
        if want(n):
            make(outdir, n, ft, [(i, perm_s[i], 2_000_000, 0.0) for i in range(1024)], bw, 4096, "mlx-runpy",
                 ecn_runpy(bw), 32, [], 1000, dict(scenario=4, permutation_seed=seed), global_routing=0)


if __name__ == "__main__":
    main()
