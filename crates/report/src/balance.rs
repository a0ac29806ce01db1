//! Load balancing and packet order: how evenly each switch tier's uplinks carried the
//! traffic (utilisation spread, max / mean), which QPs saw packets out of order, and the
//! finding a reader needs when reordering meets a responder without out-of-order
//! placement (every reorder is taken for a loss: NAK, go-back-N, retransmissions).
//!
//! Owns those figures' definitions. An uplink is a switch port whose peer is a switch of
//! a higher tier; utilisation is its time busy over the run, as in the port table.

use fabric::params::{LoadBalancing, Params};
use fabric::stats::Stats;
use scenario::World;

use crate::types::{LoadBalanceReport, QpOrderReport, UplinkTier};

/// The section, when the scenario states load balancing or `ooo` (else `None`, so
/// reports of other scenarios do not change).
pub(crate) fn load_balance(w: &World, st: &Stats) -> Option<LoadBalanceReport> {
    if !w.load_balance_stated {
        return None;
    }
    let name = |ep: u32| w.topo.node(w.topo.endpoints[ep as usize]).name.clone();
    let qps: Vec<QpOrderReport> = st
        .qp_rx
        .iter()
        .enumerate()
        .filter(|(_, q)| q.out_of_order + q.duplicate + q.late > 0)
        .map(|(i, q)| QpOrderReport { qp: i as u32, src: name(q.src), dst: name(q.dst), out_of_order: q.out_of_order, duplicate: q.duplicate, late: q.late })
        .collect();
    let mut r = LoadBalanceReport {
        load_balancing: mode_name(&w.params).into(),
        ooo: w.params.ooo.is_some(),
        uplink_tiers: uplink_tiers(w, st),
        qps_out_of_order: st.qp_rx.iter().filter(|q| q.out_of_order > 0).count(),
        out_of_order_pkts: st.qp_rx.iter().map(|q| q.out_of_order).sum(),
        out_of_order_max_per_qp: st.qp_rx.iter().map(|q| q.out_of_order).max().unwrap_or(0),
        duplicate_pkts: st.qp_rx.iter().map(|q| q.duplicate).sum(),
        late_pkts: st.qp_rx.iter().map(|q| q.late).sum(),
        qps,
        findings: vec![],
    };
    r.findings = findings(w, st, &r);
    Some(r)
}

/// The scenario's name for a load-balancing mode (InfiniBand: its `adaptive_routing`
/// mode, "off" for the LFT alone).
pub fn mode_name(p: &Params) -> &'static str {
    if p.ib.is_some() {
        return match p.load_balancing {
            LoadBalancing::Adaptive { .. } => "per-packet",
            LoadBalancing::AdaptiveFlowlet { .. } => "per-flowlet",
            _ => "off",
        };
    }
    match p.load_balancing {
        LoadBalancing::Ecmp => "ecmp",
        LoadBalancing::Flowlet { .. } => "flowlet",
        LoadBalancing::PacketSpray { .. } => "packet-spray",
        LoadBalancing::Adaptive { .. } => "adaptive",
        LoadBalancing::AdaptiveFlowlet { .. } => "adaptive-flowlet",
    }
}

/// Per switch tier with uplinks: the utilisation of its ports towards the tier above.
fn uplink_tiers(w: &World, st: &Stats) -> Vec<UplinkTier> {
    let t = &w.topo;
    let mut by_tier: std::collections::BTreeMap<u8, Vec<f64>> = Default::default();
    for (pi, p) in t.ports.iter().enumerate() {
        let Some(peer) = p.peer else { continue };
        let (me, other) = (t.node(p.node), t.node(t.port(peer).node));
        if !t.is_switch(p.node) || !t.is_switch(t.port(peer).node) || other.tier <= me.tier {
            continue;
        }
        let u = if st.end > 0 { st.ports[pi].busy_ps as f64 / st.end as f64 } else { 0.0 };
        by_tier.entry(me.tier).or_default().push(u);
    }
    by_tier
        .into_iter()
        .map(|(tier, u)| {
            let mean = u.iter().sum::<f64>() / u.len() as f64;
            let max = u.iter().copied().fold(0.0, f64::max);
            let min = u.iter().copied().fold(f64::INFINITY, f64::min);
            UplinkTier {
                tier,
                ports: u.len(),
                mean_utilisation: mean,
                max_utilisation: max,
                min_utilisation: min,
                spread: if mean > 0.0 { max / mean } else { 0.0 },
            }
        })
        .collect()
}

/// Reordering without out-of-order placement is named, with what it cost.
fn findings(w: &World, st: &Stats, r: &LoadBalanceReport) -> Vec<String> {
    let mut f = vec![];
    let naks: u64 = st.nics.iter().map(|n| n.nak_tx).sum();
    let retx: u64 = st.nics.iter().map(|n| n.retx_bytes).sum();
    let timeouts: u64 = st.nics.iter().map(|n| n.timeouts).sum();
    if !r.ooo && r.out_of_order_pkts > 0 {
        f.push(format!(
            "reordering without out-of-order placement: {} packets arrived ahead of their PSN on {} QPs; a go-back-N responder takes each for a loss: {naks} NAKs, {} retransmitted, {timeouts} timeouts. {}",
            r.out_of_order_pkts,
            r.qps_out_of_order,
            units::Bytes(retx),
            if w.params.load_balancing == LoadBalancing::Ecmp { "" } else { "Per-packet load balancing needs NICs that place out-of-order packets: set `ooo = true` (ConnectX-5 and later, BlueField-3 SuperNIC)." }
        ));
    }
    if r.ooo && r.late_pkts > 0 {
        f.push(format!(
            "{} packets arrived after the responder had NAKed their PSN: the reordering window or timeout (`ooo_nak_window`, `ooo_nak_timeout`) is shorter than the fabric's reordering",
            r.late_pkts
        ));
    }
    f
}
