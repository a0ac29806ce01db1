//! `--explain`: every formula and default the plan used, with its numbers and source, in
//! the order a reader checks them.

use model::{sonic, sonic_pool};
use units::DEFAULT_PROPAGATION_PS_PER_M;

use super::{HeadroomModel, RoceInput, RocePlan, SRC_QBB, SRC_XON};

/// Every formula and default the plan used, with its source.
pub fn explain(i: &RoceInput, p: &RocePlan) -> Vec<String> {
    let mut v = vec![
        format!(
            "lossless frame = RoCEv2 RDMA WRITE first packet at path MTU {} B: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + payload + ICRC 4 + FCS 4 = {} B (no VLAN tag: DSCP-based PFC; model::frame)",
            i.mtu.0, p.lossless_frame_bytes
        ),
        format!(
            "reverse frame (ahead of the PFC frame) = {} B: {}",
            p.reverse_frame_bytes,
            if i.port_mtu.is_some() { "port MTU + 14 + 4 (VLAN) + 4 (FCS)" } else { "no port MTU given, so no larger frame than the lossless one shares the link" }
        ),
        format!("cable delay = length x {} ps/m (IEEE 802.1Qbb Annex N ~2/3 c; units::DEFAULT_PROPAGATION_PS_PER_M)", DEFAULT_PROPAGATION_PS_PER_M),
    ];
    match i.model {
        HeadroomModel::Ieee => {
            v.push("peer response = IEEE 802.3 Annex 31B pause quanta by speed x 512 bit times (model::headroom::pause_response_quanta)".into());
            v.push(format!(
                "headroom = cells of ceil(W/P) maximum frames, W = reverse frame + PFC frame + 2 x cable + peer response, P = a maximum frame's wire time: \
                 {SRC_QBB}. The planned XOFF trigger is static, so the frame that crosses it is admitted below it; with a dynamic trigger \
                 (alpha*free falls between a PG's arrivals) that frame lands in headroom too: one frame more, shown per tier"
            ));
            v.push("XOFF trigger = reserved + alpha*S/(1+n*alpha): the level the leaf's dynamic threshold settles at when n ingress PGs of the worst incast share S, made static (model::buffer::dynamic_threshold_share)".into());
            v.push(format!(
                "short frames: {} allowed per window, each charged exactly (model::headroom::short_frame_allowance); the all-small worst case is shown per tier",
                i.short_frames
            ));
            v.push(format!("xon offset = {SRC_XON}; PG size = headroom (the resume point lies in the shared part)"));
        }
        HeadroomModel::Sonic(g) => {
            v.push(format!("headroom (xoff), xon, size: {}", sonic::LUA_SOURCE));
            v.push(format!("ASIC parameters of {}: {:?} ({})", g.asic_table_key(), g.asic(), sonic::ASIC_TABLE_SOURCE));
            v.push(format!(
                "LOSSLESS_TRAFFIC_PATTERN mtu {} and small_packet_percentage {} (SONiC defaults: files/build_templates/buffers_config.j2 unless given); port MTU {} (SONiC DEFAULT_MTU_STR unless given)",
                i.sonic_pattern.mtu,
                i.sonic_pattern.small_packet_percentage,
                i.port_mtu.unwrap_or(sonic::DEFAULT_PORT_MTU)
            ));
            let lanes: Vec<String> = i.tiers.iter().map(|t| format!("{} {}", t.tier, t.lanes)).collect();
            v.push(format!(
                "lanes per port: {} (an 8-lane port doubles the pipeline latency, so xon, and adds the port MTU to size without a shared headroom pool; {})",
                lanes.join(", "),
                sonic::LUA_SOURCE
            ));
            if i.shared_headroom.enabled() {
                v.push(format!(
                    "shared headroom pool on (over_subscribe_ratio {}, configured pool xoff {}): size = xon; per switch, pool xoff = ceil(max(0, sum of PG xoff - 10 KiB x lossless ports) / ratio), or the configured xoff, or 655360 B if that is 0 ({})",
                    i.shared_headroom.over_subscribe_ratio,
                    i.shared_headroom.pool_xoff,
                    sonic_pool::POOL_LUA_SOURCE
                ));
            }
        }
    }
    v.push(format!(
        "budget per switch = ports x 8 PGs x reserved + ports x {} lossless PG(s) x PG size{}, in whole cells of {} B{}, against buffer {} B",
        i.lossless_priorities,
        if i.operator.headroom.is_some() { " (the operator's headroom)" } else { "" },
        i.buffer.cell.0,
        if i.shared_headroom.enabled() { ", + the shared headroom pool's xoff + 10 KiB private headroom per lossless port" } else { "" },
        i.buffer.total.0
    ));
    v.push(format!("PFC point: {}", p.ecn.pfc_queue_derivation));
    v.push(format!("ECN: {}", p.ecn.reason));
    v.push(format!("DCQCN: {}", p.dcqcn.source));
    v.push(
        "cyclic buffer dependency: the simulator's shortest-path ECMP groups (fabric::routing, BGP-like) on the planned Clos; channel dependency graph and cycle search from \
         fabric::subnet_manager::cdg (Dally & Seitz, IEEE Trans. Computers 1987); every ECMP member counts; repeated with each switch-to-switch link down and routes recomputed"
            .into(),
    );
    v
}
