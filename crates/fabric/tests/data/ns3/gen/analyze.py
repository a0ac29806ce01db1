#!/usr/bin/env python3
"""Summarises one ns-3 run directory (written by gen.py, run by fabriclab-third):
out/fct.txt, out/pfc.txt, out/qsample.txt, out/qstats.txt -> out/summary.json, and copies
small CSV/JSON figures to /work/ns3/figures/<run>/.

fct.txt columns (third.cc qp_finish): sip dip sport dport size_B start_ns fct_ns standalone_fct_ns
pfc.txt columns (third.cc get_pfc): time_ns node node_type ifindex type (1 pause, 0 resume),
  logged by the device that RECEIVES the PFC frame (the paused transmitter).
"""
import collections
import json
import math
import os
import shutil
import sys

# ns-3-alibabacloud packet sizes on the wire (PointToPointNetDevice, interframe gap 0):
# data = payload + PPP 2 + IPv4 20 + UDP 8 + SimpleSeqTsHeader 10 (seq u64 + pg u16; INT 0 B in CC_MODE 1)
DATA_OVERHEAD = 40
# ACK: padded to 60-14-20 = 26 B of qbbHeader+payload, + IPv4 20 + PPP 2
ACK_BYTES = 48

BUCKETS = [(0, 10_000, "<=10KB"), (10_000, 100_000, "10KB-100KB"), (100_000, 1_000_000, "100KB-1MB"),
           (1_000_000, 10_000_000, "1MB-10MB"), (10_000_000, 1 << 62, ">10MB")]


def pct(sorted_vals, q):
    """fabriclab's report.rs pct(): element ceil(q*n)-1 (nearest rank)."""
    if not sorted_vals:
        return None
    i = min(max(math.ceil(q * len(sorted_vals)), 1), len(sorted_vals)) - 1
    return sorted_vals[i]


def ip2node(h):
    return (int(h, 16) >> 8) & 0xffff


def paths(meta):
    """hops and summed propagation (ns) between every pair of hosts, by BFS on the link list."""
    adj = collections.defaultdict(list)
    for a, b, r, d in meta["links_list"]:
        adj[a].append((b, r, d))
        adj[b].append((a, r, d))
    H = meta["hosts"]
    cache = {}

    def from_src(s):
        if s in cache:
            return cache[s]
        dist = {s: (0, 0)}
        q = [s]
        for u in q:
            if u < H and u != s:
                continue  # do not route through hosts
            for v, r, d in adj[u]:
                if v not in dist:
                    dist[v] = (dist[u][0] + 1, dist[u][1] + d)
                    q.append(v)
        cache[s] = dist
        return dist
    return from_src


def ideal_sf(size, payload, hops, prop_ns, rate_gbps):
    """store-and-forward, equal-rate links, ns-3 wire sizes; + the last ACK's return."""
    n = max(1, math.ceil(size / payload))
    last = size - (n - 1) * payload
    ser = lambda b: b * 8 / rate_gbps  # ns
    s, l = ser(payload + DATA_OVERHEAD), ser(last + DATA_OVERHEAD)
    data = (n + hops - 2) * s + l + prop_ns if n >= 2 else hops * l + prop_ns
    return data + hops * ser(ACK_BYTES) + prop_ns


def analyze(rundir, figroot="/work/ns3/figures"):
    meta = json.load(open(os.path.join(rundir, "meta.json")))
    out = os.path.join(rundir, "out")
    payload = meta["payload"]
    rate = meta["links_list"][0][2]
    P = paths(meta)
    flows = []
    for line in open(os.path.join(out, "fct.txt")):
        f = line.split()
        if len(f) < 8:
            continue
        src, dst = ip2node(f[0]), ip2node(f[1])
        size, start, fct, sa = int(f[4]), int(f[5]), int(f[6]), int(f[7])
        hops, prop = P(src)[dst]
        ideal = ideal_sf(size, payload, hops, prop, rate)
        flows.append(dict(src=src, dst=dst, sport=int(f[2]), size=size, start_ns=start, fct_ns=fct,
                          end_ns=start + fct, standalone_ns=sa, ideal_sf_ns=round(ideal, 1),
                          slowdown_sf=fct / ideal, slowdown_ns3=max(1.0, fct / sa), hops=hops))
    nflows_expected = meta["flows"]
    fcts = sorted(f["fct_ns"] for f in flows)
    s = dict(run=meta["name"], scenario=meta["scenario"], flows_expected=nflows_expected,
             flows_done=len(flows))
    if flows:
        t0 = min(f["start_ns"] for f in flows)
        tend = max(f["end_ns"] for f in flows)
        s.update(fct_max_ns=fcts[-1], fct_mean_ns=sum(fcts) / len(fcts), fct_p50_ns=pct(fcts, 0.5),
                 fct_p99_ns=pct(fcts, 0.99), fct_min_ns=fcts[0], last_completion_ns=tend, first_start_ns=t0)
        sl = sorted(f["slowdown_sf"] for f in flows)
        sl3 = sorted(f["slowdown_ns3"] for f in flows)
        s.update(slowdown_sf_p50=pct(sl, .5), slowdown_sf_p99=pct(sl, .99), slowdown_sf_max=sl[-1],
                 slowdown_ns3_p50=pct(sl3, .5), slowdown_ns3_p99=pct(sl3, .99), slowdown_ns3_max=sl3[-1])
        # goodput of all data over the whole run
        s["aggregate_goodput_gbps"] = sum(f["size"] for f in flows) * 8 / (tend - t0)
        buckets = []
        for lo, hi, name in BUCKETS:
            b = [f for f in flows if lo < f["size"] <= hi]
            if not b:
                continue
            x = sorted(f["slowdown_sf"] for f in b)
            y = sorted(f["slowdown_ns3"] for f in b)
            buckets.append(dict(bucket=name, lo_exclusive=lo, hi_inclusive=hi, flows=len(b),
                                reported=len(b) >= 100,
                                slowdown_sf_p50=pct(x, .5), slowdown_sf_p99=pct(x, .99),
                                slowdown_ns3_p50=pct(y, .5), slowdown_ns3_p99=pct(y, .99),
                                fct_p50_ns=pct(sorted(f["fct_ns"] for f in b), .5),
                                fct_p99_ns=pct(sorted(f["fct_ns"] for f in b), .99)))
        s["buckets"] = buckets
    # PFC
    pauses = collections.Counter()
    resumes = collections.Counter()
    paused_since = {}
    paused_time = collections.Counter()
    npfc = 0
    pfc_path = os.path.join(out, "pfc.txt")
    if os.path.exists(pfc_path):
        for line in open(pfc_path):
            f = line.split()
            if len(f) < 5:
                continue
            t, node, ntype, ifi, typ = int(f[0]), int(f[1]), int(f[2]), int(f[3]), int(f[4])
            key = (node, ifi)
            if typ == 1:
                pauses[key] += 1
                paused_since.setdefault(key, t)
            else:
                resumes[key] += 1
                if key in paused_since:
                    paused_time[key] += t - paused_since.pop(key)
    s["pfc_pause_frames"] = sum(pauses.values())
    so = os.path.join(out, "stdout.txt")
    s["drops_headroom_full"] = sum(1 for l in open(so) if " Drop: " in l) if os.path.exists(so) else None
    s["pfc_resume_frames"] = sum(resumes.values())
    # runs with the driver's NV_* keys print "NV_STATS cnp_tx N cnp_rx N cuts N" at the end
    if os.path.exists(so):
        for l in open(so):
            if l.startswith("NV_STATS "):
                v = l.split()[1:]
                s["nv_stats"] = {v[i]: int(v[i + 1]) for i in range(0, len(v) - 1, 2)}
    names = meta.get("node_names", {})
    nm = lambda n: names.get(str(n), f"h{n}" if n < meta["hosts"] else str(n))
    s["pfc_by_paused_port"] = [dict(node=k[0], name=nm(k[0]), ifindex=k[1], pauses=v, resumes=resumes[k],
                                    paused_ns=paused_time[k]) for k, v in sorted(pauses.items())][:200]
    s["pfc_paused_ports"] = len(pauses)
    # queues: time series of chosen ports over [first start, last completion]
    qs_path = os.path.join(out, "qsample.txt")
    s["queues"] = []
    if os.path.exists(qs_path) and flows:
        series = collections.defaultdict(list)
        for line in open(qs_path):
            t, sw, port, b = map(int, line.split())
            if t0 <= t <= tend:
                series[(sw, port)].append(b)
        for (sw, port), v in sorted(series.items()):
            v2 = sorted(v)
            s["queues"].append(dict(node=sw, name=nm(sw), dev=port, samples=len(v),
                                    interval_ns=meta["qsample_interval_ns"], mean_bytes=sum(v) / len(v),
                                    p99_bytes=pct(v2, .99), max_bytes=v2[-1]))
    qst = os.path.join(out, "qstats.txt")
    if os.path.exists(qst):
        rows = [l.split() for l in open(qst)][1:]
        rows = [(int(a), int(b), int(c), float(d), int(e)) for a, b, c, d, e in rows]
        rows.sort(key=lambda r: -r[4])
        s["busiest_ports_whole_run"] = [dict(node=r[0], name=nm(r[0]), dev=r[1], samples=r[2], mean_bytes=r[3],
                                             max_bytes=r[4]) for r in rows[:10]]
    json.dump(s, open(os.path.join(out, "summary.json"), "w"), indent=1)
    # figures
    fd = os.path.join(figroot, meta["name"])
    os.makedirs(fd, exist_ok=True)
    json.dump(s, open(os.path.join(fd, "summary.json"), "w"), indent=1)
    with open(os.path.join(fd, "flows.csv"), "w") as f:
        cols = ["src", "dst", "sport", "size", "start_ns", "fct_ns", "standalone_ns", "ideal_sf_ns",
                "slowdown_sf", "slowdown_ns3", "hops"]
        f.write(",".join(cols) + "\n")
        for x in sorted(flows, key=lambda x: (x["start_ns"], x["src"], x["dst"], x["sport"])):
            f.write(",".join(str(round(x[c], 4) if isinstance(x[c], float) else x[c]) for c in cols) + "\n")
    if s.get("buckets"):
        with open(os.path.join(fd, "slowdown_buckets.csv"), "w") as f:
            f.write("bucket,flows,reported,slowdown_sf_p50,slowdown_sf_p99,slowdown_ns3_p50,slowdown_ns3_p99\n")
            for b in s["buckets"]:
                f.write(f"{b['bucket']},{b['flows']},{int(b['reported'])},{b['slowdown_sf_p50']:.3f},"
                        f"{b['slowdown_sf_p99']:.3f},{b['slowdown_ns3_p50']:.3f},{b['slowdown_ns3_p99']:.3f}\n")
    # small queue series (<= 5000 points per port, max per bucket)
    if os.path.exists(qs_path) and flows and meta["qsample_ports"] and len(meta["qsample_ports"]) <= 8:
        shutil.copy(pfc_path, os.path.join(fd, "pfc.txt")) if os.path.getsize(pfc_path) < 2_000_000 else None
        ser = collections.defaultdict(list)
        for line in open(qs_path):
            t, sw, port, b = map(int, line.split())
            if t <= tend:
                ser[(sw, port)].append((t, b))
        with open(os.path.join(fd, "queue_series.csv"), "w") as f:
            f.write("time_ns,node,dev,bytes_max_in_bucket\n")
            for (sw, port), v in sorted(ser.items()):
                step = max(1, len(v) // 5000)
                for i in range(0, len(v), step):
                    chunk = v[i:i + step]
                    f.write(f"{chunk[0][0]},{sw},{port},{max(b for _, b in chunk)}\n")
    return s


if __name__ == "__main__":
    for d in sys.argv[1:]:
        s = analyze(d)
        brief = {k: v for k, v in s.items() if k not in ("pfc_by_paused_port", "buckets", "busiest_ports_whole_run")}
        print(json.dumps(brief, indent=1))
