//! Link failures: traffic on the dead path is discarded, the control plane re-routes after
//! its stated delay, and the RC transport recovers the loss by retransmission.

mod common;
use common::*;

/// The leaf0 uplink flow 0 (h0 -> h8) uses, as "leaf0:N".
fn uplink_of_flow0(s: &str) -> String {
    let w = load(s);
    let sim = w.simulator(false);
    let t = sim.topology();
    let leaf0 = t.port(t.port(t.ep_port(0)).peer.unwrap()).node;
    let out = sim.route(leaf0, 0).unwrap();
    t.port_name(out)
}

/// The port a "node:port" spec names.
fn port_of(s: &str, spec: &str) -> fabric::topology::PortId {
    let w = load(s);
    let (name, idx) = spec.split_once(':').unwrap();
    let node = w.topo.nodes.iter().find(|n| n.name == name).unwrap();
    fabric::topology::PortId(node.first_port + idx.parse::<u32>().unwrap())
}

/// The SM's modelled re-sweep time (trap, sweep, routing, programming) after `ports` fail.
fn sweep_after(s: &str, ports: &[fabric::topology::PortId]) -> u64 {
    let w = load(s);
    let mut sm = scenario::ib::sm_bring_up(&w.topo, None, w.sm.as_ref().unwrap(), 1);
    sm.resweep(ports).total.ps()
}

/// `base` with `link` going down at 40 us.
fn link_down(base: &str, link: &str) -> String {
    format!("{base}\n[[faults]]\nkind = \"link-down\"\nat = \"40us\"\nlink = \"{link}\"\n")
}

fn check_recovery(base: &str, reroute_field: &str) {
    check_recovery_with(base, reroute_field, "100us", 140_000_000);
}

fn check_recovery_with(base: &str, reroute_field: &str, delay: &str, at: u64) {
    let link = uplink_of_flow0(base);
    let s = format!("{base}\n[[faults]]\nkind = \"link-down\"\nat = \"40us\"\nlink = \"{link}\"\n").replacen(
        reroute_field,
        &format!("reroute_delay = \"{delay}\"\n{reroute_field}"),
        1,
    );
    let (sim, r) = report::run(&load(&s), false);
    assert_eq!(r.flows.completed, 1, "RC retransmission recovers the loss");
    let cause = |name: &str| r.totals.drops_by_cause.iter().find(|(c, _)| c == name).unwrap().1;
    let down = cause("port-down");
    assert!(down > 0, "packets on the dead link are discarded");
    // On RoCE the spine above the dead link withdraws its only route to leaf0 at once:
    // ACKs it gets for leaf0 before re-convergence are dropped for lack of a route.
    assert_eq!(down + cause("no-route"), r.totals.drops, "{:?}", r.totals.drops_by_cause);
    // Packets sent after the re-route arrive out of sequence: a NAK (or the local ACK
    // timeout, if nothing follows the loss) triggers go-back-N.
    assert!(r.totals.retransmitted_bytes > 0);
    assert!(r.nics.iter().any(|n| n.naks > 0) || r.totals.timeouts > 0);
    assert_eq!(sim.stats.reroutes, vec![at], "new routes installed when the control plane says");
    // The flow now avoids the dead uplink.
    let t = sim.topology();
    let leaf0 = t.port(t.port(t.ep_port(0)).peer.unwrap()).node;
    let now = sim.route(leaf0, 0).unwrap();
    assert_ne!(t.port_name(now), link);
    let (_, delivered, _) = sim.payload_accounting();
    assert_eq!(delivered, 2_000_000);
}

const MSG: &str = "[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 8\nsize = \"2MB\"\nat = \"0us\"\ndscp = 26\nsl = 0\n";

#[test]
fn infiniband_link_failure_is_recovered_after_reroute() {
    let s = ib_scenario(LEAF_SPINE, &[("timeout", "8")], MSG);
    check_recovery(&s, "timeout = 8");
}

#[test]
fn subnet_manager_resweeps_after_a_link_failure() {
    // ftree routes; the SM's modelled trap + re-sweep time decides when new LFTs apply.
    let s = ib_scenario(LEAF_SPINE, &[("timeout", "8"), ("routing", "\"ftree\"")], MSG);
    let link = uplink_of_flow0(&s);
    let sweep = sweep_after(&s, &[port_of(&s, &link)]);
    assert!(sweep > 0);
    check_recovery_with(&s, "timeout = 8", "auto", 40_000_000 + sweep);
}

#[test]
fn roce_link_failure_is_recovered_after_reroute() {
    let s = scenario(LEAF_SPINE, "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }", BUFFER, MSG).replace("timeout = 14", "timeout = 8");
    check_recovery(&s, "timeout = 8");
}

#[test]
fn faults_need_a_reroute_delay_and_a_real_port() {
    let s = ib_scenario(LEAF_SPINE, &[], MSG) + "\n[[faults]]\nkind = \"link-down\"\nat = \"40us\"\nlink = \"leaf0:8\"\n";
    let e = scenario::load_str("t.toml", &s).err().expect("must fail").to_string();
    assert!(e.contains("infiniband.reroute_delay"), "{e}");
    let s = ib_scenario(LEAF_SPINE, &[("reroute_delay", "\"1us\"")], MSG) + "\n[[faults]]\nkind = \"link-down\"\nat = \"40us\"\nlink = \"leaf0:99\"\n";
    let e = scenario::load_str("t.toml", &s).err().expect("must fail").to_string();
    assert!(e.contains("faults[0].link") && e.contains("port 99 does not exist"), "{e}");
}

/// RC retransmission timeout of `timeout = 8`: 4.096 us × 2^8.
const RTO_8: u64 = 4_096_000 << 8;

/// Spine port towards leaf1 on flow 0's path (h0 -> h8), as "spineN:P".
fn remote_link_of_flow0(s: &str) -> String {
    let w = load(s);
    let sim = w.simulator(false);
    let t = sim.topology();
    let leaf0 = t.port(t.port(t.ep_port(0)).peer.unwrap()).node;
    let up = sim.route(leaf0, 0).unwrap();
    let spine = t.port(t.port(up).peer.unwrap()).node;
    let down = sim.route(spine, 0).unwrap();
    t.port_name(down)
}

fn roce_msg() -> String {
    scenario(LEAF_SPINE, "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }\nreroute_delay = \"100us\"", BUFFER, MSG)
        .replace("timeout = 14", "timeout = 8")
}

#[test]
fn roce_remote_link_failure_recovers_after_reconvergence_within_one_rto() {
    // The spine's link down to leaf1 dies: the spine withdraws its route at once, but
    // leaf0 keeps hashing flow 0 onto that spine until routing reconverges (100 us).
    let base = roce_msg();
    let link = remote_link_of_flow0(&base);
    let s = link_down(&base, &link);
    let (_, r) = report::run(&load(&s), false);
    assert_eq!(r.flows.completed, 1);
    let rec = &r.incidents.recovery[0];
    assert_eq!(rec.qps_with_loss, 1);
    let t = rec.recovery_ps.expect("recovered");
    assert!((100_000_000..=100_000_000 + RTO_8).contains(&t), "recovery {t} ps");
    assert!(r.incidents.timeline.iter().any(|e| e.event == "local-repair" && e.t_ps == 40_000_000 && e.port.as_deref() == Some(&link)));
    assert!(r.incidents.timeline.iter().any(|e| e.event == "reroute-installed" && e.t_ps == 140_000_000));
}

#[test]
fn roce_local_link_failure_is_repaired_at_once_on_both_ends() {
    // leaf0's own uplink dies: leaf0 drops it from its ECMP group at once and flow 0's
    // data moves to the other spine. The spine at the other end withdraws its only route
    // to leaf0 as fast, but leaf1 keeps sending h8's ACKs and NAK to that spine until
    // routing reconverges (100 us): the NAK is lost, and the requester's local ACK timeout
    // recovers, within one RTO of the reconvergence.
    let base = roce_msg();
    let link = uplink_of_flow0(&base);
    let s = link_down(&base, &link);
    let (_, r) = report::run(&load(&s), false);
    assert_eq!(r.flows.completed, 1);
    let repairs: Vec<&str> =
        r.incidents.timeline.iter().filter(|e| e.event == "local-repair" && e.t_ps == 40_000_000).map(|e| e.port.as_deref().unwrap()).collect();
    assert_eq!(repairs.len(), 2, "both ends of the link");
    assert!(repairs.contains(&link.as_str()));
    let t = r.incidents.recovery[0].recovery_ps.expect("recovered");
    assert!(t <= 100_000_000 + RTO_8, "recovery {t} ps");
    assert!(r.totals.timeouts >= 1);
}

/// The spine flow 0 crosses, by the scenario's routes.
fn spine_of_flow0(s: &str) -> String {
    let link = uplink_of_flow0(s);
    let w = load(s);
    let t = &w.topo;
    let (leaf, idx) = link.split_once(':').unwrap();
    let leaf = t.nodes.iter().position(|n| n.name == leaf).unwrap();
    let up = fabric::topology::PortId(t.nodes[leaf].first_port + idx.parse::<u32>().unwrap());
    t.node(t.port(t.port(up).peer.unwrap()).node).name.clone()
}

#[test]
fn switch_failure_recovers_on_both_fabrics() {
    let fault = |spine: &str| format!("\n[[faults]]\nkind = \"switch-down\"\nnode = \"{spine}\"\nat = \"40us\"\n");
    // RoCE: both leaves lose their link to the dead spine and prune it at once; the spine
    // itself, dead, repairs nothing. What it held is lost and retransmitted.
    let base = roce_msg();
    let (_, r) = report::run(&load(&(base.clone() + &fault(&spine_of_flow0(&base)))), false);
    assert_eq!(r.flows.completed, 1);
    assert!(r.incidents.recovery[0].recovery_ps.is_some());
    assert_eq!(r.incidents.timeline.iter().filter(|e| e.event == "local-repair").count(), 2, "both leaves repair");
    // InfiniBand: the SM re-sweeps; nothing recovers before the new tables, and the
    // go-back-N after them takes at most one local ACK timeout.
    let ib = ib_scenario(LEAF_SPINE, &[("timeout", "8"), ("routing", "\"ftree\""), ("reroute_delay", "\"auto\"")], MSG);
    let spine = spine_of_flow0(&ib);
    let w = load(&ib);
    let spine_node = w.topo.nodes.iter().find(|n| n.name == spine).unwrap();
    let ports: Vec<fabric::topology::PortId> =
        (spine_node.first_port..spine_node.first_port + spine_node.nports).map(fabric::topology::PortId).filter(|&p| w.topo.port(p).peer.is_some()).collect();
    let sweep = sweep_after(&ib, &ports);
    let (sim, r) = report::run(&load(&(ib + &fault(&spine))), false);
    assert_eq!(sim.stats.reroutes, vec![40_000_000 + sweep]);
    assert_eq!(r.flows.completed, 1);
    let t = r.incidents.recovery[0].recovery_ps.unwrap();
    assert!((sweep..=sweep + RTO_8).contains(&t), "recovery {t} ps, sweep {sweep} ps");
}

#[test]
fn infiniband_recovery_waits_for_the_sm_resweep() {
    let s = ib_scenario(LEAF_SPINE, &[("timeout", "8"), ("routing", "\"ftree\""), ("reroute_delay", "\"auto\"")], MSG);
    let link = uplink_of_flow0(&s);
    let sweep = sweep_after(&s, &[port_of(&s, &link)]);
    let (_, r) = report::run(&load(&link_down(&s, &link)), false);
    let t = r.incidents.recovery[0].recovery_ps.unwrap();
    assert!((sweep..=sweep + RTO_8).contains(&t), "recovery {t} ps, sweep {sweep} ps");
}

#[test]
fn a_dead_master_sm_leaves_failures_unrouted_until_the_standby_takes_over() {
    // The master dies at 10 us; a link fails at 40 us. A standby declares the master lost
    // after OpenSM's polling timeout (10 s) × (retries (4) + 1), then re-sweeps.
    let s = ib_scenario(LEAF_SPINE, &[("timeout", "8"), ("routing", "\"ftree\""), ("reroute_delay", "\"auto\"")], MSG)
        .replace("seed = 7\n", "seed = 7\nstop_time = \"60000ms\"\n");
    let link = uplink_of_flow0(&s);
    let sweep = sweep_after(&s, &[port_of(&s, &link)]);
    let faults = |standby: bool| {
        format!(
            "{s}\n[[faults]]\nkind = \"sm-failure\"\nat = \"10us\"\nstandby = {standby}\n[[faults]]\nkind = \"link-down\"\nat = \"40us\"\nlink = \"{link}\"\n"
        )
    };
    let (sim, r) = report::run(&load(&faults(true)), false);
    let takeover = 10_000_000 + 50_000_000_000_000u64;
    assert_eq!(sim.stats.reroutes, vec![takeover + sweep]);
    assert_eq!(first(&r, "sm-takeover"), takeover);
    // Eight local ACK timeouts (1.05 ms each) run out long before: the QP fails.
    assert_eq!(r.flows.failed, 1);
    let (sim, r) = report::run(&load(&faults(false)), false);
    assert!(sim.stats.reroutes.is_empty(), "no SM, no new routes");
    assert!(r.incidents.timeline.iter().any(|e| e.event == "no-reroute"));
}

#[test]
fn bad_faults_are_refused_naming_the_field() {
    let roce = roce_msg();
    let err = |extra: &str| match scenario::load_str("t.toml", &format!("{roce}\n{extra}")) {
        Ok(_) => panic!("accepted: {extra}"),
        Err(e) => e.to_string(),
    };
    let e = err("[[faults]]\nkind = \"meteor\"\nat = \"1us\"\n");
    assert!(e.contains("faults[0].kind") && e.contains("stuck-receiver"), "{e}");
    let e = err("[[faults]]\nkind = \"stuck-receiver\"\nat = \"1us\"\n");
    assert!(e.contains("faults[0].node") && e.contains("needs `node`"), "{e}");
    let e = err("[[faults]]\nkind = \"stuck-receiver\"\nat = \"1us\"\nnode = \"leaf0\"\n");
    assert!(e.contains("faults[0].node") && e.contains("not a host NIC"), "{e}");
    let e = err("[[faults]]\nkind = \"switch-down\"\nat = \"1us\"\nnode = \"spine0\"\nlink = \"h0\"\n");
    assert!(e.contains("faults[0].link") && e.contains("takes only node"), "{e}");
    let e = err("[[faults]]\nkind = \"slow-receiver\"\nat = \"1us\"\nnode = \"h0\"\ndrain_rate = \"10Gbps\"\nbuffer = \"8KB\"\n");
    assert!(e.contains("faults[0].buffer") && e.contains("headroom"), "{e}");
    let e = err("[[faults]]\nkind = \"misconfigured-port\"\nat = \"1us\"\nport = \"leaf0:1\"\npfc = false\nheadroom = \"1KB\"\n");
    assert!(e.contains("exactly one of"), "{e}");
    let e = err("[[faults]]\nkind = \"misconfigured-port\"\nat = \"1us\"\nport = \"leaf0:1\"\ndscp_to_tc = { 70 = 0 }\n");
    assert!(e.contains("faults[0].dscp_to_tc") && e.contains("0..63"), "{e}");
    let e = err("[[faults]]\nkind = \"sm-failure\"\nat = \"1us\"\nstandby = true\n");
    assert!(e.contains("faults[0].kind") && e.contains("InfiniBand"), "{e}");
    let e = err("[[faults]]\nkind = \"route-override\"\nat = \"1us\"\nnode = \"spine0\"\ndst = \"leaf1\"\nport = \"spine0:0\"\n");
    assert!(e.contains("faults[0].dst") && e.contains("not a host NIC"), "{e}");
    let e = err("[[faults]]\nkind = \"route-override\"\nat = \"1us\"\nnode = \"spine0\"\ndst = \"h8\"\nport = \"leaf0:8\"\n");
    assert!(e.contains("faults[0].port") && e.contains("not a port of `spine0`"), "{e}");
    let e = err("[[faults]]\nkind = \"link-up\"\nat = \"1us\"\nlink = \"h0\"\nduration = \"1us\"\n");
    assert!(e.contains("faults[0].duration"), "{e}");
    let wd = roce
        .replace("response = \"auto\" }", "response = \"auto\", watchdog = { detection_time = \"1ms\", restoration_time = \"1ms\", action = \"ignore\" } }");
    let e = scenario::load_str("t.toml", &wd).err().expect("refused").to_string();
    assert!(e.contains("roce.pfc.watchdog.action"), "{e}");
    let ib = ib_scenario(LEAF_SPINE, &[("vl_stall_count", "9")], MSG);
    let e = scenario::load_str("t.toml", &ib).err().expect("refused").to_string();
    assert!(e.contains("infiniband.vl_stall_count") && e.contains("1..7"), "{e}");
}

/// Time of the first incident-timeline entry of `event`.
fn first(r: &report::Report, event: &str) -> u64 {
    r.incidents.timeline.iter().find(|e| e.event == event).unwrap_or_else(|| panic!("no `{event}` in the timeline")).t_ps
}
