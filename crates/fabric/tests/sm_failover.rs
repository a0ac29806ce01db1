//! Master/standby election, standby takeover when the master dies, and re-sweeps after
//! link failures whose new routes avoid the failed link.

mod sm_util;

use fabric::subnet_manager::failover::{SmCluster, SmEvent};
use fabric::subnet_manager::layout::IbLayout;
use fabric::subnet_manager::mad::SmState;
use fabric::subnet_manager::{Engine, SmConfig, Step, SubnetManager};
use fabric::topology::{PortId, Topology};
use sm_util::{walk, L};
use units::{SimDuration, SimTime};

fn ft() -> (Topology, IbLayout) {
    let t = Topology::fat_tree(4, L, L).unwrap();
    let lay = IbLayout::synthesize(&t);
    (t, lay)
}

/// IB node and port of endpoint `ep`.
fn ep_at(t: &Topology, lay: &IbLayout, ep: u32) -> (u32, u8) {
    lay.ib_port(t.ep_port(ep))
}

#[test]
fn election_by_priority_then_guid() {
    let (t, lay) = ft();
    let (a, b, c) = (ep_at(&t, &lay, 0), ep_at(&t, &lay, 5), ep_at(&t, &lay, 9));
    // Higher priority wins.
    let mut cl = SmCluster::new(t.clone(), lay.clone(), &[(a.0, a.1, 1), (b.0, b.1, 7), (c.0, c.1, 3)], SmConfig::default(), SimTime::ZERO);
    cl.run_until(SimTime::ZERO + SimDuration::from_ms(1));
    assert_eq!(cl.master(), Some(1));
    assert_eq!(cl.sms[0].state, SmState::Standby);
    assert_eq!(cl.sms[2].state, SmState::Standby);
    // Equal priorities: the lowest port GUID wins, whoever sweeps first.
    let mut cl = SmCluster::new(t.clone(), lay.clone(), &[(c.0, c.1, 2), (a.0, a.1, 2)], SmConfig::default(), SimTime::ZERO);
    cl.run_until(SimTime::ZERO + SimDuration::from_ms(1));
    let low = if cl.sms[0].guid < cl.sms[1].guid { 0 } else { 1 };
    assert_eq!(cl.master(), Some(low));
    // Every endpoint reaches every other through what the master programmed.
    let lft = cl.lft();
    for s in 0..16 {
        for d in 0..16 {
            if s != d {
                assert!(walk(&t, &lft, s, d).is_some());
            }
        }
    }
}

#[test]
fn standby_takes_over_after_the_polling_retries() {
    let (t, lay) = ft();
    let (a, b) = (ep_at(&t, &lay, 0), ep_at(&t, &lay, 15));
    let cfg = SmConfig { engine: Engine::Updn, ..Default::default() };
    let mut cl = SmCluster::new(t.clone(), lay.clone(), &[(a.0, a.1, 10), (b.0, b.1, 1)], cfg, SimTime::ZERO);
    let death = SimTime::ZERO + SimDuration::from_ms(33_000);
    cl.run_until(death);
    assert_eq!(cl.master(), Some(0));
    cl.kill_node(death, a.0);
    let ev = cl.run_until(SimTime::ZERO + SimDuration::from_ms(200_000));
    let lost = ev.iter().find_map(|(t, e)| matches!(e, SmEvent::MasterLost { sm: 1, .. }).then_some(*t)).expect("standby notices");
    // OpenSM defaults: 10 s polls, declared lost when more than 4 went unanswered.
    let waited = lost.since(death);
    assert!(waited > SimDuration::from_ms(50_000) && waited <= SimDuration::from_ms(60_000), "detected after {waited}");
    assert_eq!(cl.master(), Some(1));
    let swept = ev.iter().find_map(|(_, e)| match e {
        SmEvent::Swept { sm: 1, start, done, result } => Some((*start, *done, result.clone())),
        _ => None,
    });
    let (start, done, r) = swept.expect("the new master sweeps");
    assert_eq!(start, lost);
    assert!(done > start);
    assert!(r.steps.iter().any(|s| s.step == Step::Program && s.smps > 0));
    // The new routes reach every live endpoint; nothing routes to the dead one.
    let lft = cl.lft();
    for s in 1..16 {
        for d in 1..16 {
            if s != d {
                assert!(walk(&t, &lft, s, d).is_some(), "{s}->{d}");
            }
        }
        assert!(walk(&t, &lft, s, 0).is_none());
    }
}

#[test]
fn link_failure_traps_and_the_resweep_avoids_the_link() {
    let (t, lay) = ft();
    let a = ep_at(&t, &lay, 0);
    let mut cl = SmCluster::new(t.clone(), lay.clone(), &[(a.0, a.1, 0)], SmConfig::default(), SimTime::ZERO);
    cl.run_until(SimTime::ZERO + SimDuration::from_ms(5));
    // Fail an edge uplink that the current tables use.
    let edge = t.nodes.iter().position(|n| n.name == "edge0-0").unwrap();
    let up = PortId(t.nodes[edge].first_port + 2);
    let before = cl.lft();
    assert!((0..16).any(|d| before.get(fabric::topology::NodeId(edge as u32), d) == Some(up)));
    let at = SimTime::ZERO + SimDuration::from_ms(1_000);
    cl.fail_link(at, up);
    let ev = cl.run_until(SimTime::ZERO + SimDuration::from_ms(2_000));
    let (start, r) = ev
        .iter()
        .find_map(|(_, e)| match e {
            SmEvent::Swept { start, result, .. } if *start > at => Some((*start, result.clone())),
            _ => None,
        })
        .expect("the trap triggers a sweep");
    assert_eq!(start, at + SmConfig::default().timing.trap_delay());
    assert!(r.entries_changed > 0);
    let peer = t.port(up).peer.unwrap();
    let lft = cl.lft();
    for s in 0..16 {
        for d in 0..16 {
            if s != d {
                let p = walk(&t, &lft, s, d).unwrap_or_else(|| panic!("{s}->{d}"));
                assert!(!p.contains(&up) && !p.contains(&peer), "{s}->{d} uses the failed link");
            }
        }
    }
}

#[test]
fn without_traps_the_next_light_sweep_finds_the_failure() {
    let (t, lay) = ft();
    let a = ep_at(&t, &lay, 0);
    let mut cfg = SmConfig::default();
    cfg.timing.traps = false;
    let mut cl = SmCluster::new(t.clone(), lay, &[(a.0, a.1, 0)], cfg, SimTime::ZERO);
    cl.run_until(SimTime::ZERO + SimDuration::from_ms(5));
    let edge = t.nodes.iter().position(|n| n.name == "edge1-1").unwrap();
    let up = PortId(t.nodes[edge].first_port + 3);
    cl.fail_link(SimTime::ZERO + SimDuration::from_ms(1_000), up);
    let ev = cl.run_until(SimTime::ZERO + SimDuration::from_ms(30_000));
    let starts: Vec<SimTime> = ev.iter().filter_map(|(_, e)| if let SmEvent::Swept { start, .. } = e { Some(*start) } else { None }).collect();
    assert_eq!(starts.len(), 1, "one heavy sweep, at the first light sweep after the failure");
    assert!(starts[0] > SimTime::ZERO + SimDuration::from_ms(10_000));
}

#[test]
fn resweep_api_reroutes_around_failed_ports_and_reports_unreachable() {
    let t = Topology::fat_tree(4, L, L).unwrap();
    for engine in [Engine::Minhop, Engine::Updn, Engine::Ftree, Engine::Dfsssp] {
        let mut sm = SubnetManager::new(&t, SmConfig { engine, ..Default::default() });
        sm.bring_up();
        // An aggregation-to-core link and a host link.
        let agg = t.nodes.iter().position(|n| n.name == "agg2-1").unwrap();
        let core_link = PortId(t.nodes[agg].first_port + 2);
        let r = sm.resweep(&[core_link]);
        assert_eq!(r.steps[0].step, Step::Detect);
        assert_eq!(r.steps[0].duration, sm.cfg.timing.trap_delay());
        assert!(r.total > r.steps[0].duration);
        let peer = t.port(core_link).peer.unwrap();
        for s in 0..16 {
            for d in 0..16 {
                if s != d {
                    let p = walk(&t, sm.lft(), s, d).unwrap_or_else(|| panic!("{engine}: {s}->{d}"));
                    assert!(!p.contains(&core_link) && !p.contains(&peer), "{engine}: {s}->{d}");
                }
            }
        }
        assert!(sm.unreachable().is_empty(), "{engine}");
        // Cutting host 3 off: exactly the pairs with host 3 become unreachable.
        sm.resweep(&[t.ep_port(3)]);
        let un = sm.unreachable();
        assert_eq!(un.len(), 2 * 15, "{engine}");
        assert!(un.iter().all(|&(s, d)| s == 3 || d == 3));
    }
}
