//! Failure modes, one regression test each: every expected number is derived here from
//! the scenario (routes, buffer sizes, configured delays), not copied from a run.

mod common;
use common::*;
use std::collections::BTreeSet;

use fabric::topology::PortId;
use report::Report;

/// The ports ("node:port") that dropped anything.
fn dropping_ports(r: &Report) -> Vec<String> {
    r.ports.iter().filter(|p| !p.drops.is_empty()).map(|p| format!("{}:{}", p.node, p.port)).collect()
}

const STORM: &str = "examples/roce-pfc-storm.toml";

fn example(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Ports that back-pressure from `start` reaches: an egress on a flow's path upstream of a
/// paused port is paused in turn once the buffer between them fills (hop-by-hop PFC), so
/// the set is the closure over the flows' paths.
fn pause_closure(w: &scenario::World, sim: &fabric::Sim, start: PortId) -> BTreeSet<String> {
    let paths: Vec<Vec<PortId>> = sim.stats.qp_paths.iter().flatten().cloned().collect();
    let mut reached = BTreeSet::from([start]);
    loop {
        let before = reached.len();
        for p in &paths {
            if let Some(k) = p.iter().position(|q| reached.contains(q)) {
                reached.extend(p[..k].iter().copied());
            }
        }
        if reached.len() == before {
            break;
        }
    }
    reached.into_iter().map(|p| w.topo.port_name(p)).collect()
}

#[test]
fn stuck_nic_storm_spreads_upstream_and_the_watchdog_contains_it() {
    let w = load(&example(STORM));
    let (sim, r) = report::run(&w, false);
    let t = &w.topo;
    let h0 = t.nodes.iter().position(|n| n.name == "h0").unwrap();
    let root = t.port(t.port_of(fabric::topology::NodeId(h0 as u32), 0)).peer.unwrap();
    // The storm reaches exactly the closure of leaf0's port to h0 before the watchdog fires.
    let fired = first(&r, "watchdog-fired");
    let reached: BTreeSet<String> = r.incidents.timeline.iter().filter(|e| e.event == "paused" && e.t_ps < fired).map(|e| e.port.clone().unwrap()).collect();
    let expected = pause_closure(&w, &sim, root);
    assert_eq!(reached, expected);
    assert_eq!(expected.len(), 5, "leaf0->h0, spine->leaf0, leaf1->spine, h4's and h5's NICs: {expected:?}");
    // The watchdog fires on the root only, detection time after its pause began (stuck at
    // 50 us, plus the 100G pause response time: 394 quanta of 5.12 ns).
    assert_eq!(r.incidents.storms.len(), 1);
    let storm = &r.incidents.storms[0];
    assert_eq!(storm.port, w.topo.port_name(root));
    // h0's PFC frame (84 B on the wire: 6.72 ns) crosses 3 m of cable (15 ns) and acts
    // after leaf0's response time; at most an ACK h0 was sending goes first.
    let earliest = 50_000_000 + 6_720 + 15_000 + 394 * 5_120;
    assert!((earliest..earliest + 20_000).contains(&storm.paused_from_ps), "{}", storm.paused_from_ps);
    assert_eq!(storm.detected_ps, storm.paused_from_ps + 400_000_000);
    // Restored once the restoration time has passed without a PFC frame: h0's last one is
    // the XON it sends when it recovers at 3.05 ms (on the wire 6.72 ns + 15 ns later).
    let restored = storm.restored_ps.expect("restored");
    let last_pfc = 3_050_000_000 + 6_720 + 15_000;
    assert!((last_pfc + 400_000_000..last_pfc + 400_000_000 + 20_000).contains(&restored), "{restored}");
    assert!(storm.dropped_pkts > 0);
    let wd_drops = r.totals.drops_by_cause.iter().find(|(c, _)| c == "pfc-watchdog").unwrap().1;
    assert_eq!(wd_drops, storm.dropped_pkts, "every watchdog drop is this storm's");
    assert!(r.incidents.paused_at_end.is_empty(), "nothing stays paused after restoration");
    // Victims: h5 -> h1 shares the paused spine->leaf0 and leaf1->spine links; h2 -> h3
    // crosses nothing paused; h4 -> h0 is the storm's own traffic.
    assert_eq!(r.victims.victim_flows, vec![1]);
    // Before the spine is paused, leaf0 can take at most its whole buffer (4 MiB) of h4's
    // data at 100 Gb/s; until the watchdog fires 400 us after the root's pause, h5's flow
    // is stopped for the rest of that time at least.
    let fill_ps = 4 * 1_048_576 * 8 * 10; // 4 MiB at 100 Gb/s (10 ps per bit)
    let stalled = 400_000_000 - fill_ps as u64;
    let f1 = &r.flow_records.get(1).unwrap();
    assert!(f1.fct_ps.unwrap() >= f1.ideal_ps + stalled, "{:?}", f1);
    assert!(r.flow_records.get(2).unwrap().slowdown.unwrap() < 1.01, "h2 -> h3 is untouched");
    assert_eq!(r.flows.completed, 3, "h4 -> h0 recovers by retransmission after the storm");
}

#[test]
fn without_a_watchdog_the_victim_waits_out_the_storm() {
    let s = example(STORM).replace("watchdog = { detection_time = \"400us\", restoration_time = \"400us\", action = \"drop\" }", "");
    let (_, r) = report::run(&load(&s), false);
    assert!(r.incidents.storms.is_empty());
    // By 50 us h5 sent at most 625 KB; while h0 is stuck (to 3.05 ms) at most leaf0's
    // 4 MiB buffer more gets past the spine: the rest of its 8 MB leaves after 3.05 ms,
    // at 100 Gb/s (80 ps a byte) at best.
    let left: u64 = 8_000_000 - 625_000 - 4 * 1_048_576;
    assert!(r.flow_records.get(1).unwrap().fct_ps.unwrap() >= 3_050_000_000 + left * 80);
}

/// `BUFFER` with a 2 MiB switch: small enough for these incasts to reach the thresholds.
fn small_buffer() -> String {
    BUFFER.replace("total = \"16MiB\"", "total = \"2MiB\"")
}

/// 3 senders on leaf1 write to h0 while h15 writes to h1, all through one spine.
fn slow_receiver(extra_fault: &str) -> String {
    let topo = "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 8\nhost_link = { speed = \"100Gbps\", cable = \"3m\" }\nfabric_link = { speed = \"400Gbps\", cable = \"10m\" }\n";
    let mut traffic = String::new();
    for s in 8..11 {
        traffic += &format!("[[traffic]]\nkind = \"message\"\nsrc = {s}\ndst = 0\nsize = \"2MB\"\nat = \"0us\"\ndscp = 26\n");
    }
    traffic += "[[traffic]]\nkind = \"message\"\nsrc = 15\ndst = 1\nsize = \"4MB\"\nat = \"0us\"\ndscp = 26\n";
    traffic += extra_fault;
    scenario(topo, "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }\nreroute_delay = \"1ms\"", &small_buffer(), &traffic)
}

#[test]
fn slow_receiver_pauses_hop_by_hop_and_names_its_victims() {
    let fault = "[[faults]]\nkind = \"slow-receiver\"\nnode = \"h0\"\nat = \"0us\"\ndrain_rate = \"10Gbps\"\nbuffer = \"1MiB\"\n";
    let w = load(&slow_receiver(fault));
    let (sim, r) = report::run(&w, false);
    assert_eq!(r.totals.lossless_drops, 0, "a slow receiver pauses, it does not drop");
    assert_eq!(r.flows.completed, 4);
    // h0 absorbs 10 Gb/s: 6 MB cannot be in before 4.8 ms.
    let last = r.flow_records.iter().take(3).map(|f| f.fct_ps.unwrap()).max().unwrap();
    assert!(last >= 6_000_000 * 8 * 100, "{last}");
    // Pause climbs from leaf0's port to h0 along the senders' paths.
    let t = &w.topo;
    let root = t.port(t.ep_port(0)).peer.unwrap();
    let paused: BTreeSet<String> = r.incidents.timeline.iter().filter(|e| e.event == "paused").map(|e| e.port.clone().unwrap()).collect();
    assert_eq!(paused, pause_closure(&w, &sim, root));
    // h15 -> h1 shares the paused spine links and is the only victim. Its packets queue
    // behind h0's in the same FIFOs (leaf1's uplink, the spine's port to leaf0), which
    // drain only as fast as h0 absorbs: a fair share of those queues while h0's 6 MB
    // drain at 10 Gb/s would stretch its 4 MB over milliseconds (slowdown ~20, vs a
    // 0.33 ms ideal). Asserted conservatively: at least 2.
    assert_eq!(r.victims.victim_flows, vec![3]);
    let v = &r.flow_records.get(3).unwrap();
    assert!(v.slowdown.unwrap() > 2.0, "{v:?}");
}

#[test]
fn headroom_too_small_on_one_port_drops_there_and_says_why() {
    let mut traffic = String::from("[[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [8, 9, 10, 11, 12, 13, 14, 15]\nsize = \"1MB\"\ndscp = 26\n");
    traffic += "[[faults]]\nkind = \"misconfigured-port\"\nport = \"spine0:0\"\nat = \"0us\"\nheadroom = \"4KB\"\n";
    traffic += "[[faults]]\nkind = \"misconfigured-port\"\nport = \"spine1:0\"\nat = \"0us\"\nheadroom = \"4KB\"\n";
    let s = scenario(LEAF_SPINE, "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }\nreroute_delay = \"1ms\"", &small_buffer(), &traffic);
    let (_, r) = report::run(&load(&s), false);
    // spine:0 faces leaf0; what the spines receive from leaf0 are ACKs. The incast's data
    // enters leaf0 from the spines: the ingress ports that need headroom are leaf0's.
    assert_eq!(r.totals.lossless_drops, 0, "ACK ingress never fills 4 KB of headroom");
    let mut traffic = String::from("[[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [8, 9, 10, 11, 12, 13, 14, 15]\nsize = \"1MB\"\ndscp = 26\n");
    traffic += "[[faults]]\nkind = \"misconfigured-port\"\nport = \"leaf0:8\"\nat = \"0us\"\nheadroom = \"4KB\"\n";
    let s = scenario(LEAF_SPINE, "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }\nreroute_delay = \"1ms\"", &small_buffer(), &traffic);
    let (_, r) = report::run(&load(&s), false);
    // 4 KB is one 4 KiB-MTU frame: less than the frames in flight after a pause (IEEE
    // 802.1Qbb: the 20 m cable alone holds two at 100 Gb/s, and the peer finishes one).
    let hd = r.totals.drops_by_cause.iter().find(|(c, _)| c == "headroom-overflow").unwrap().1;
    assert!(hd > 0);
    assert_eq!(hd, r.totals.lossless_drops, "every lossless drop is a headroom overflow");
    let at: Vec<String> =
        r.ports.iter().filter(|p| p.drops.iter().any(|(c, n)| c == "headroom-overflow" && *n > 0)).map(|p| format!("{}:{}", p.node, p.port)).collect();
    assert_eq!(at, vec!["leaf0:8".to_string()], "only the misconfigured port drops");
}

fn incast_with(fault: &str) -> Report {
    let mut traffic = String::from("[[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [1, 2, 3, 4]\nsize = \"1MB\"\ndscp = 26\n");
    traffic += fault;
    let s = scenario(LEAF_SPINE, "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }\nreroute_delay = \"1ms\"", &small_buffer(), &traffic);
    report::run(&load(&s), false).1
}

#[test]
fn pfc_off_on_one_side_drops_in_the_lossless_class() {
    // Senders h1..h4 share leaf0 with the receiver h0: leaf0's port to h0 is 4:1 overloaded
    // and leaf0 must pause the senders. The healthy fabric does, and drops nothing.
    assert_eq!(incast_with("").totals.lossless_drops, 0);
    // The switch port facing h1 with PFC off: it cannot pause h1, so h1's packets are
    // dropped at that ingress where it should have paused, attributed to that.
    let r = incast_with("[[faults]]\nkind = \"misconfigured-port\"\nport = \"leaf0:1\"\nat = \"0us\"\npfc = false\n");
    let off = r.totals.drops_by_cause.iter().find(|(c, _)| c == "pfc-disabled").unwrap().1;
    assert!(off > 0);
    assert_eq!(off, r.totals.drops);
    assert_eq!(dropping_ports(&r), vec!["leaf0:1"]);
    // h2's NIC with PFC off: leaf0 pauses it in vain and its headroom overflows.
    let r = incast_with("[[faults]]\nkind = \"misconfigured-port\"\nport = \"h2\"\nat = \"0us\"\npfc = false\n");
    let hd = r.totals.drops_by_cause.iter().find(|(c, _)| c == "headroom-overflow").unwrap().1;
    assert!(hd > 0);
    assert_eq!(hd, r.totals.drops);
    assert_eq!(dropping_ports(&r), vec!["leaf0:2"]);
    assert_eq!(r.flows.completed, 4, "the RC transport recovers what was dropped");
}

#[test]
fn a_mismatched_dscp_map_puts_roce_in_a_lossy_class() {
    // leaf0's port facing h3 maps DSCP 26 to class 0 (lossy): h3's data is dropped at that
    // ingress when the shared pool's dynamic threshold is reached, instead of pausing h3.
    let r = incast_with("[[faults]]\nkind = \"misconfigured-port\"\nport = \"leaf0:3\"\nat = \"0us\"\ndscp_to_tc = { 26 = 0 }\n");
    let dt = r.totals.drops_by_cause.iter().find(|(c, _)| c == "dynamic-threshold").unwrap().1;
    assert!(dt > 0);
    assert_eq!(dt, r.totals.drops);
    assert_eq!(dropping_ports(&r), vec!["leaf0:3"]);
    assert_eq!(r.totals.lossless_drops, 0, "dropped in class 0, where the switch put them");
}

/// The two directed rings of `ring(n)`: port 1 of every switch (clockwise) or port 2.
fn ring_cycles(n: usize) -> [BTreeSet<String>; 2] {
    [(0..n).map(|i| format!("s{i}:1")).collect(), (0..n).map(|i| format!("s{i}:2")).collect()]
}

fn assert_ring_deadlock(r: &Report, n: usize, timeout_ps: u64) {
    let dl = r.totals.deadlock.as_ref().expect("the detector must report the deadlock");
    let hops: BTreeSet<String> = r.incidents.deadlock_cycle.iter().map(|h| h.port.clone()).collect();
    assert!(ring_cycles(n).contains(&hops), "cycle {:?}", r.incidents.deadlock_cycle);
    assert_eq!(r.incidents.deadlock_cycle.len(), n);
    // Each hop feeds the switch the next hop leaves from.
    let c = &r.incidents.deadlock_cycle;
    for k in 0..n {
        assert_eq!(c[k].towards, c[(k + 1) % n].port.split(':').next().unwrap(), "{c:?}");
    }
    assert!(dl.detected_at_ps >= dl.formed_at_ps + timeout_ps, "no queue moved for the timeout");
    assert!(r.flows.completed < r.flows.count);
    assert_eq!(first(r, "deadlock-formed"), dl.formed_at_ps);
}

#[test]
fn the_same_looping_routes_deadlock_roce_and_infiniband_and_dfsssp_completes() {
    // 7 switches in a ring: every shortest path is unique, so RoCE's ECMP and the SM's
    // minhop route alike, and each route s_i -> s_{i+1} -> s_{i+2} makes channel (i, i+1)
    // wait on (i+1, i+2): a cyclic channel dependency (Dally & Seitz 1987; under PFC, Hu et
    // al., HotNets 2016). All-to-all fills the cycle: RoCE pauses each ingress at 16 KB,
    // as the IB run's input buffers hold 16 KiB per VL.
    let topo = ring(7, "2m");
    let roce = scenario(
        &topo,
        "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }",
        &BUFFER.replace("total = \"16MiB\"", "total = \"256KiB\"").replace("xoff = \"dynamic\"", "xoff = \"16KB\""),
        "[[traffic]]\nkind = \"all-to-all\"\nsize = \"1MB\"\ndscp = 26\n",
    )
    .replace("[scenario]\nname = \"test\"\nseed = 7\n", "[scenario]\nname = \"test\"\nseed = 7\ndeadlock_timeout = \"500us\"\n");
    let (_, r) = report::run(&load(&roce), false);
    assert_ring_deadlock(&r, 7, 500_000_000);
    assert_eq!(r.totals.lossless_drops, 0, "PFC deadlocks without dropping");
    let ib = ib_scenario(
        &topo,
        &[("vl_buffer", "\"16KiB\""), ("hoq_lifetime", "\"infinite\""), ("switch_lifetime", "\"infinite\""), ("routing", "\"minhop\"")],
        "[[traffic]]\nkind = \"all-to-all\"\nsize = \"1MB\"\nsl = 0\n",
    )
    .replace("[scenario]\nname = \"test\"\nseed = 7\n", "[scenario]\nname = \"test\"\nseed = 7\ndeadlock_timeout = \"500us\"\n");
    let (_, r) = report::run(&load(&ib), false);
    assert_ring_deadlock(&r, 7, 500_000_000);
    assert_eq!(r.totals.drops, 0, "credits deadlock without dropping");
    // InfiniBand's deadlock-free engine on the same fabric and traffic completes.
    let free = ib.replace("routing = \"minhop\"", "routing = \"dfsssp\"").replace("data_vls = 1", "data_vls = 4");
    let (_, r) = report::run(&load(&free), false);
    assert!(r.totals.deadlock.is_none());
    assert_eq!(r.flows.completed, r.flows.count);
    assert_eq!(r.totals.drops, 0);
}

#[test]
fn a_stuck_hca_starves_credits_hop_by_hop_and_vl_stall_contains_it() {
    let w = load(&example("examples/ib-stuck-hca.toml"));
    let (sim, r) = report::run(&w, false);
    let t = &w.topo;
    let root = t.port(t.ep_port(0)).peer.unwrap();
    // No pause frames on InfiniBand: the same closure, reached by credit starvation.
    let starved: BTreeSet<String> = r.incidents.timeline.iter().filter(|e| e.event == "credit-starved").map(|e| e.port.clone().unwrap()).collect();
    assert_eq!(starved, pause_closure(&w, &sim, root));
    assert_eq!(r.totals.pfc_frames, 0);
    // The head of leaf0's queue to h0 is discarded every HOQ lifetime (50 us); the 7th
    // discard in a row stalls the VL for 8 x 50 us. The first head became the head when
    // the last packet h0 had credit for left, at most one packet time (336 ns at 100G)
    // before the port's first credit wait.
    let root_name = w.topo.port_name(root);
    let since = r.incidents.timeline.iter().find(|e| e.event == "credit-starved" && e.port.as_deref() == Some(&root_name)).unwrap().t_ps;
    let stalls: Vec<u64> = r.incidents.timeline.iter().filter(|e| e.event == "vl-stalled").map(|e| e.t_ps).collect();
    let first_stall = since + 7 * 50_000_000;
    assert!((first_stall - 336_000..=first_stall).contains(&stalls[0]), "stalled at {} ps, first credit wait {since} ps", stalls[0]);
    // While h0 stays stuck the cycle repeats: stalled 400 us, then 7 discards of 50 us
    // (a head's lifetime runs from when it became the head: up to one lifetime early if
    // it arrived during the stall, a packet's arrival late if the queue was empty).
    for k in 1..stalls.len() {
        let gap = stalls[k] - stalls[k - 1];
        assert!((700_000_000..=751_000_000).contains(&gap), "{gap}");
    }
    assert!(stalls.len() >= 3 && *stalls.last().unwrap() < 3_050_000_000, "stalls until h0 recovers at 3.05 ms: {stalls:?}");
    let hoq = r.totals.drops_by_cause.iter().find(|(c, _)| c == "hoq-lifetime").unwrap().1;
    assert_eq!(hoq, r.totals.drops, "every drop is a lifetime discard at the stuck port");
    // The victim h5 -> h1 is released by the stall, long before h0 recovers; without a
    // HOQ lifetime it waits for h0.
    assert_eq!(r.victims.victim_flows, vec![1]);
    assert!(r.flow_records.get(1).unwrap().fct_ps.unwrap() < 3_050_000_000);
    let infinite = example("examples/ib-stuck-hca.toml").replace("hoq_lifetime = \"50us\"", "hoq_lifetime = \"infinite\"");
    let (_, r) = report::run(&load(&infinite), false);
    assert!(r.flow_records.get(1).unwrap().fct_ps.unwrap() > 3_050_000_000);
    assert_eq!(r.totals.drops, 0);
}

#[test]
fn the_forward_action_ignores_the_storm_and_the_stuck_nic_drops() {
    // pfcwd's forward action: the stormed queue stops obeying pause and keeps sending;
    // what it sends into the stuck NIC is lost there, not in the switch.
    let s = example(STORM).replace("action = \"drop\"", "action = \"forward\"");
    let (_, r) = report::run(&load(&s), false);
    assert_eq!(r.incidents.storms.len(), 1);
    assert_eq!(r.incidents.storms[0].dropped_pkts, 0);
    let cause = |c: &str| r.totals.drops_by_cause.iter().find(|(n, _)| n == c).unwrap().1;
    assert_eq!(cause("pfc-watchdog"), 0);
    assert!(cause("receiver-stuck") > 0);
    assert_eq!(cause("receiver-stuck"), r.totals.drops);
    assert_eq!(r.victims.victim_flows, vec![1]);
    assert!(r.flow_records.get(1).unwrap().fct_ps.unwrap() < 3_050_000_000, "the victim is released");
}

#[test]
fn a_pfc_watchdog_breaks_the_ring_deadlock_by_dropping() {
    let roce = scenario(
        &ring(7, "2m"),
        "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }\ntimeout = 8",
        &BUFFER.replace("total = \"16MiB\"", "total = \"256KiB\"").replace("xoff = \"dynamic\"", "xoff = \"16KB\""),
        "[[traffic]]\nkind = \"all-to-all\"\nsize = \"1MB\"\ndscp = 26\n",
    )
    .replace("timeout = 14\n", "")
    .replace("response = \"auto\" }", "response = \"auto\", watchdog = { detection_time = \"200us\", restoration_time = \"200us\", action = \"drop\" } }");
    let (_, r) = report::run(&load(&roce), false);
    // The cycle forms as without the watchdog; the watchdog fires on ring ports after
    // 200 us of unbroken pause, before the 1 ms deadlock detector would, and its drops let
    // the RC transport finish every transfer.
    assert!(!r.incidents.storms.is_empty());
    assert!(r.incidents.storms.iter().all(|x| x.port.ends_with(":1") || x.port.ends_with(":2")), "{:?}", r.incidents.storms);
    assert!(r.totals.deadlock.is_none());
    assert_eq!(r.flows.completed, r.flows.count);
    assert!(r.totals.drops > 0 && r.totals.timeouts + r.nics.iter().map(|n| n.naks).sum::<u64>() > 0);
}

#[test]
fn the_timeline_is_written_as_csv() {
    let w = load(&example(STORM));
    let (sim, r) = report::run(&w, false);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("storm-csv");
    report::write_csv(&dir, &w, &sim.stats, &r).unwrap();
    let csv = std::fs::read_to_string(dir.join("incidents.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "t_ps,event,port,class,detail");
    assert_eq!(lines.len(), r.incidents.timeline.len() + 1);
    let fired = r.incidents.timeline.iter().find(|e| e.event == "watchdog-fired").unwrap();
    assert!(lines.iter().any(|l| l.starts_with(&format!("{},watchdog-fired,leaf0:0,3,", fired.t_ps))), "{csv}");
}

#[test]
fn opensm_sets_a_shorter_hoq_lifetime_on_ports_that_drive_a_ca() {
    // "auto": OpenSM's head_of_queue_lifetime 0x12 between switches and
    // leaf_head_of_queue_lifetime 0x10 towards CAs (4.096 us x 2^18 and x 2^16).
    let auto = example("examples/ib-stuck-hca.toml").replace("hoq_lifetime = \"50us\"", "hoq_lifetime = \"auto\"");
    let ib = load(&auto).params.ib.unwrap();
    assert_eq!(ib.hoq_lifetime.unwrap().ps(), 4_096_000 << 18);
    assert_eq!(ib.leaf_hoq_lifetime.unwrap().ps(), 4_096_000 << 16);
    // Only the CA-facing lifetime set: the stuck HCA's port stalls as before, no other.
    let leaf_only = example("examples/ib-stuck-hca.toml").replace("hoq_lifetime = \"50us\"", "hoq_lifetime = \"infinite\"\nleaf_hoq_lifetime = \"50us\"");
    let (_, r) = report::run(&load(&leaf_only), false);
    let stalled: BTreeSet<&str> = r.incidents.timeline.iter().filter(|e| e.event == "vl-stalled").map(|e| e.port.as_deref().unwrap()).collect();
    assert_eq!(stalled, BTreeSet::from(["leaf0:0"]));
    assert!(r.flow_records.get(1).unwrap().fct_ps.unwrap() < 3_050_000_000, "the victim is released as before");
}

/// The two wrong routes of examples/routing-loop.toml make leaf0 -> spine0 -> leaf0 a
/// loop for h4's traffic: the deadlock's cycle is exactly those two hops, it forms while
/// the loop is in place (20..220 us) and outlives it, on RoCE (PFC) and InfiniBand
/// (credits) alike.
#[test]
fn a_routing_loop_leaves_a_deadlock_on_both_fabrics() {
    let src = example("examples/routing-loop.toml");
    let (_, ib, roce) = report::compare::run("routing-loop.toml", &src, false).unwrap();
    for r in [&ib.report, &roce.report] {
        let dl = r.totals.deadlock.as_ref().unwrap_or_else(|| panic!("{:?}: no deadlock", r.fabric));
        let hops: Vec<&str> = r.incidents.deadlock_cycle.iter().map(|h| h.port.as_str()).collect();
        let cycle: BTreeSet<&str> = hops.iter().copied().collect();
        assert_eq!(cycle, BTreeSet::from(["leaf0:4", "spine0:0"]), "{:?}", r.fabric);
        assert!(dl.formed_at_ps > 20_000_000 && dl.formed_at_ps < 220_000_000, "{:?}: formed at {}", r.fabric, dl.formed_at_ps);
        assert!(dl.detected_at_ps > 220_000_000, "the deadlock outlives the loop");
        assert_eq!(r.flows.completed, 0);
    }
}

/// A light flow through the same loop: nothing fills up, the looping packets run out of
/// IP TTL (64 switch hops), and once the routes are right again the RC transport resends
/// them and the flow completes.
#[test]
fn looping_packets_run_out_of_ttl_and_the_flow_recovers() {
    let src = example("examples/routing-loop.toml").replace("[scenario]\n", "[scenario]\ntechnology = \"roce\"\n");
    let cut = src.find("[[traffic]]").unwrap();
    let light = format!("{}[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 4\nsize = \"64KB\"\nat = \"30us\"\ndscp = 26\nsl = 0\n", &src[..cut]);
    let (_, r) = report::run(&load(&light), false);
    let ttl = r.totals.drops_by_cause.iter().find(|(c, _)| c == "ttl-expired").unwrap().1;
    assert_eq!(ttl, 16, "every packet of the 64 KB message (16 of 4 KiB) dies in the loop");
    assert!(r.totals.deadlock.is_none());
    assert_eq!(r.flows.completed, 1);
    assert!(r.flow_records.get(0).unwrap().fct_ps.unwrap() > 220_000_000 - 30_000_000, "only after the loop is gone");
}

/// An InfiniBand HCA that drains slowly returns credits while its receive buffer has room:
/// with room for all 6 MB sent to it, its switch port never waits for credits (the 3:1
/// incast still congests the path up to it); without a buffer that port starves as soon as
/// the VL buffer is full.
#[test]
fn a_slow_hca_withholds_credits_once_its_buffer_is_full() {
    let roce = example("examples/roce-slow-receiver.toml");
    let root_starved = |w: &scenario::World, r: &Report| {
        let t = &w.topo;
        let root = w.topo.port_name(t.port(t.ep_port(0)).peer.unwrap());
        r.incidents.timeline.iter().any(|e| e.event == "credit-starved" && e.port.as_deref() == Some(&root))
    };
    let (_, ib_big, _) = report::compare::run("t.toml", &roce.replace("buffer = \"1MiB\"", "buffer = \"8MB\""), false).unwrap();
    assert!(!root_starved(&ib_big.world, &ib_big.report), "6 MB to h0 fit its 8 MB buffer");
    assert_eq!(ib_big.report.flows.completed, 4);
    // The IB side alone (the RoCE side needs its `buffer`).
    let src = roce.replace("buffer = \"1MiB\"\n", "");
    let (edits, _) = scenario::variant::for_technology(&src, fabric::params::Tech::Infiniband).unwrap();
    let w = scenario::variant::load_variant("t.toml", &src, &edits).unwrap();
    let (_, r) = report::run(&w, false);
    assert!(root_starved(&w, &r));
    assert_eq!(r.totals.drops, 0);
}

/// Time of the first incident-timeline entry of `event`.
fn first(r: &report::Report, event: &str) -> u64 {
    r.incidents.timeline.iter().find(|e| e.event == event).unwrap_or_else(|| panic!("no `{event}` in the timeline")).t_ps
}
