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
    format!("{}:{}", t.node(leaf0).name, t.port(out).index)
}

fn check_recovery(base: &str, reroute_field: &str) {
    check_recovery_with(base, reroute_field, "100us", 140_000_000);
}

fn check_recovery_with(base: &str, reroute_field: &str, delay: &str, at: u64) {
    let link = uplink_of_flow0(base);
    let s = format!("{base}\n[[faults]]\nkind = \"link-down\"\nat = \"40us\"\nlink = \"{link}\"\n")
        .replacen(reroute_field, &format!("reroute_delay = \"{delay}\"\n{reroute_field}"), 1);
    let (sim, r) = load(&s).run(false);
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
    assert_ne!(format!("{}:{}", t.node(leaf0).name, t.port(now).index), link);
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
    let w = load(&s);
    let t = &w.topo;
    let link = uplink_of_flow0(&s);
    let (name, idx) = link.split_once(':').unwrap();
    let node = t.nodes.iter().position(|n| n.name == name).unwrap();
    let port = fabric::topology::PortId(t.nodes[node].first_port + idx.parse::<u32>().unwrap());
    let mut sm = fabric::config::sm_bring_up(t, None, w.sm.as_ref().unwrap(), 1);
    let sweep = sm.resweep(&[port]).total.ps();
    assert!(sweep > 0);
    check_recovery_with(&s, "timeout = 8", "auto", 40_000_000 + sweep);
}

#[test]
fn roce_link_failure_is_recovered_after_reroute() {
    let s = scenario(LEAF_SPINE, "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }", BUFFER, MSG)
        .replace("timeout = 14", "timeout = 8");
    check_recovery(&s, "timeout = 8");
}

#[test]
fn faults_need_a_reroute_delay_and_a_real_port() {
    let s = ib_scenario(LEAF_SPINE, &[], MSG) + "\n[[faults]]\nkind = \"link-down\"\nat = \"40us\"\nlink = \"leaf0:8\"\n";
    let e = fabric::load_str("t.toml", &s).err().expect("must fail").to_string();
    assert!(e.contains("infiniband.reroute_delay"), "{e}");
    let s = ib_scenario(LEAF_SPINE, &[("reroute_delay", "\"1us\"")], MSG) + "\n[[faults]]\nkind = \"link-down\"\nat = \"40us\"\nlink = \"leaf0:99\"\n";
    let e = fabric::load_str("t.toml", &s).err().expect("must fail").to_string();
    assert!(e.contains("faults[0].link") && e.contains("port 99 does not exist"), "{e}");
}
