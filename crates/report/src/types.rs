//! The report's types: what `run --json` prints, field by field. Units are in the field
//! names (`_ps`, `_bytes`, `_gbps`); a report is a pure function of the scenario and its
//! seed (no wall-clock figures in it).
//!
//! Owns the JSON schema (field names and order are part of the output contract). Leaves
//! out how the figures are computed ([`build`](fn@crate::build)) and rendered
//! ([`text`](fn@crate::text), [`write_csv`](crate::write_csv), [`html`](crate::html)).

use serde::Serialize;

#[derive(Serialize, Debug, Clone)]
pub struct Report {
    pub scenario: String,
    pub seed: u64,
    pub fabric: fabric::params::Tech,
    pub settings: Settings,
    pub end_ps: u64,
    pub events: u64,
    pub flows: FlowSummary,
    /// The same figures for each `[[traffic]]` entry (background vs. foreground traffic).
    pub traffic: Vec<GroupSummary>,
    pub totals: Totals,
    pub ports: Vec<PortReport>,
    pub nics: Vec<NicReport>,
    /// Every flow's completion (barriers left out), held compactly and read (and
    /// printed) as [`FlowReport`]s.
    pub flow_records: crate::FlowRecords,
    /// Collective jobs, reported as nccl-tests does.
    pub collectives: Vec<CollectiveReport>,
    pub victims: VictimSummary,
    /// Faults and what followed them: the incident timeline, PFC watchdog storms, the
    /// RC transport's recovery, deadlock.
    pub incidents: Incidents,
    pub notes: Vec<String>,
    /// RoCEv2 load balancing and packet order: present when the scenario states
    /// `[roce] load_balancing` or `ooo`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_balance: Option<LoadBalanceReport>,
    /// Present only when the run was stopped before its end (Ctrl-C, a cancelled web
    /// job): every figure covers the run up to `at_ps` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<Incomplete>,
}

/// Why and when a run stopped early.
#[derive(Serialize, Debug, Clone)]
pub struct Incomplete {
    /// "cancelled".
    pub reason: String,
    pub at_ps: u64,
}

/// What went wrong and when, with ports named "node:port".
#[derive(Serialize, Debug, Default, Clone)]
pub struct Incidents {
    /// In time order.
    pub timeline: Vec<TimelineEntry>,
    pub storms: Vec<StormReport>,
    /// Per fault (its start): the RC transport's recovery of what it lost.
    pub recovery: Vec<RecoveryReport>,
    /// The deadlock's cycle, hop by hop (empty: none).
    pub deadlock_cycle: Vec<CycleHop>,
    /// (port, class) queues still paused (RoCE) when the run ended.
    pub paused_at_end: Vec<String>,
}

impl Incidents {
    /// From a fault to the last QP that lost data after it delivering past its loss, the
    /// worst over the faults (`None`: no fault cost data, or none was recovered).
    pub fn worst_recovery_ps(&self) -> Option<u64> {
        self.recovery.iter().filter_map(|x| x.recovery_ps).max()
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct TimelineEntry {
    pub t_ps: u64,
    pub event: &'static str,
    pub port: Option<String>,
    pub class: Option<u8>,
    pub detail: String,
}

#[derive(Serialize, Debug, Clone)]
pub struct StormReport {
    pub port: String,
    pub priority: u8,
    pub paused_from_ps: u64,
    pub detected_ps: u64,
    pub restored_ps: Option<u64>,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
}

#[derive(Serialize, Debug, Clone)]
pub struct RecoveryReport {
    pub fault: String,
    pub at_ps: u64,
    /// QPs that lost data between this fault and the next one.
    pub qps_with_loss: usize,
    pub qps_recovered: usize,
    /// From the fault to the last of those QPs delivering, in order, past what it lost
    /// (`None` when none did).
    pub recovery_ps: Option<u64>,
}

/// One hop of a deadlock cycle: an egress queue blocked by the next hop's buffer.
#[derive(Serialize, Debug, Clone)]
pub struct CycleHop {
    /// Switch egress port ("node:port") and the switch it feeds.
    pub port: String,
    pub towards: String,
    /// Priority (RoCE) or VL (IB).
    pub class: u8,
}

/// Flows hurt by link-level flow control they did not cause. A port is *blocked* when it
/// spent time paused by PFC (RoCE) or waiting for credits (IB PortXmitWait). A
/// *congestion root* is a switch egress that built a standing queue (at least four
/// maximum frames) without ever being blocked itself: it is slow because its own link is
/// full, not because something downstream stopped it. A flow that crosses a root
/// *contributes* to the congestion; a flow that crosses a blocked port but no root is a
/// *victim* (PFC's head-of-line blocking, Guo et al., "RDMA over Commodity Ethernet at
/// Scale", SIGCOMM 2016, §4; IB's congestion spreading, IBTA Vol. 1 Annex A10.1).
#[derive(Serialize, Debug, Default, Clone)]
pub struct VictimSummary {
    pub blocked_ports: usize,
    pub congestion_roots: Vec<String>,
    pub contributors: usize,
    pub victims: usize,
    /// Flow indices of the victims (their `flow_records`).
    pub victim_flows: Vec<u32>,
    pub victim_slowdown_p50: f64,
    pub victim_slowdown_max: f64,
}

/// One collective job's result in nccl-tests' terms (nccl-tests `doc/PERFORMANCE.md`):
/// time per iteration, algbw = S / t and busbw = algbw × `bus_factor`, in GB/s = 10^9 B/s.
#[derive(Serialize, Debug, Clone)]
pub struct CollectiveReport {
    pub op: String,
    pub algorithm: String,
    pub ranks: u32,
    pub size_bytes: u64,
    pub channels: u32,
    pub chunk_bytes: u64,
    /// Each iteration's time, from its start (the job's start or the previous iteration's
    /// end) to the moment every rank has all its data; `None` if it never finished.
    pub iteration_ps: Vec<Option<u64>>,
    /// Mean over the completed iterations.
    pub time_ps: Option<u64>,
    pub algbw_gbs: f64,
    pub busbw_gbs: f64,
    /// nccl-tests' factor for the operation, whatever the algorithm: all-reduce is
    /// 2(n−1)/n for ring, tree and SHARP alike (nccl-tests `src/all_reduce.cu`,
    /// `AllReduceGetBw`, applies it to every NCCL algorithm, CollNet and NVLS included;
    /// nccl-tests issue #279 asks about exactly this). NCCL's own tuning model converts
    /// bus to algorithm bandwidth per algorithm (`src/graph/tuning.cc`: ring n/(2(n−1)),
    /// NVLS 5/6, tree and CollNet 1/2); no (n−1)/(n+1) factor appears in either.
    pub bus_factor: f64,
    /// The most busbw can be, in GB/s: ring and tree, the slowest rank NIC's line rate ×
    /// payload/wire bytes of a full path-MTU packet (the link payload rate); SHARP, that
    /// rate × `bus_factor` (each rank's link carries S once each way, so algbw itself is
    /// bounded by the link payload rate).
    pub busbw_bound_gbs: f64,
    /// The most algbw can be: `busbw_bound_gbs / bus_factor`.
    pub algbw_bound_gbs: f64,
    /// Bandwidth the busiest rank link carried in one direction, in GB/s: algbw × (bytes
    /// a rank sends or receives per iteration, at most) / S. Equals busbw for ring; for
    /// SHARP it is algbw (the figure to hold against the link rate).
    pub link_gbs: f64,
}

#[derive(Serialize, Debug, Clone)]
pub struct Settings {
    pub mtu_bytes: u64,
    pub forwarding: fabric::params::Forwarding,
    pub dcqcn: Option<String>,
    pub pfc: bool,
    pub buffer_bytes: u64,
    pub cell_bytes: u64,
    pub switch_latency_ps: u64,
    pub infiniband: Option<IbSettings>,
}

#[derive(Serialize, Debug, Clone)]
pub struct IbSettings {
    pub data_vls: u8,
    pub vl_buffer_bytes: u64,
    pub routing: String,
    pub hoq_lifetime_ps: Option<u64>,
    /// On switch ports that drive a CA.
    pub leaf_hoq_lifetime_ps: Option<u64>,
    pub switch_lifetime_ps: Option<u64>,
    pub grh: bool,
    /// Stated plainly: fabriclab does not model NVIDIA's adaptive routing; IB packets
    /// follow the subnet manager's static tables.
    pub adaptive_routing: bool,
}

#[derive(Serialize, Debug, Default, Clone)]
pub struct FlowSummary {
    pub count: usize,
    pub completed: usize,
    pub failed: usize,
    pub fct_p50_ps: u64,
    pub fct_p99_ps: u64,
    pub fct_max_ps: u64,
    pub slowdown_p50: f64,
    pub slowdown_p99: f64,
    pub slowdown_max: f64,
    /// Payload delivered / time from first start to last finish.
    pub goodput_gbps: f64,
}

/// Completion figures of one `[[traffic]]` entry.
#[derive(Serialize, Debug, Default, Clone)]
pub struct GroupSummary {
    pub traffic: usize,
    pub kind: String,
    pub flows: usize,
    pub completed: usize,
    pub failed: usize,
    pub fct_p50_ps: u64,
    pub fct_p99_ps: u64,
    pub slowdown_p50: f64,
    pub slowdown_p99: f64,
}

#[derive(Serialize, Debug, Default, Clone)]
pub struct Totals {
    pub pfc_frames: u64,
    pub ecn_marks: u64,
    pub drops: u64,
    pub lossless_drops: u64,
    pub drops_by_cause: Vec<(String, u64)>,
    pub cnps: u64,
    pub retransmitted_bytes: u64,
    pub timeouts: u64,
    /// IB: PortXmitWait summed over ports, and flow-control packets.
    pub xmit_wait_ps: u64,
    pub fcp_frames: u64,
    /// A deadlock the watchdog found (the run stopped there).
    pub deadlock: Option<fabric::stats::Deadlock>,
    /// Faults and the control plane's reaction: (fault time, timed steps), and when new
    /// forwarding state took effect.
    pub reroutes: Vec<(u64, Vec<fabric::stats::ControlStep>)>,
    pub reroutes_installed_ps: Vec<u64>,
}

#[derive(Serialize, Debug, Clone)]
pub struct PortReport {
    pub node: String,
    pub port: u32,
    pub peer: String,
    pub speed_gbps: f64,
    pub tx_bytes: u64,
    pub utilisation: f64,
    pub max_queue_bytes: u64,
    pub mean_queue_bytes: f64,
    pub pfc_tx: [u64; 8],
    pub pfc_rx: [u64; 8],
    pub paused_ps: [u64; 8],
    pub ecn_marks: u64,
    pub drops: Vec<(String, u64)>,
    pub headroom_cells: u64,
    pub peak_headroom_cells: u64,
    /// IB: PortXmitWait (time with data but no credits) and flow-control packets sent.
    pub xmit_wait_ps: u64,
    pub fcp_tx: u64,
    /// IB: peak blocks (64 B) held in this port's input VL buffers.
    pub peak_vl_blocks: u32,
}

#[derive(Serialize, Debug, Clone)]
pub struct NicReport {
    pub name: String,
    pub cnp_tx: u64,
    pub cnp_rx: u64,
    pub ce_rx: u64,
    pub retransmitted_bytes: u64,
    pub naks: u64,
    pub timeouts: u64,
}

#[derive(Serialize, Debug, Clone)]
pub struct FlowReport {
    /// Index among the scenario's flows.
    pub flow: u32,
    pub src: EndpointName,
    pub dst: EndpointName,
    pub size_bytes: u64,
    pub start_ps: u64,
    pub fct_ps: Option<u64>,
    pub ideal_ps: u64,
    pub slowdown: Option<f64>,
    pub failed: bool,
}

/// How evenly the fabric's uplinks carried the traffic, and what arrived out of order.
#[derive(Serialize, Debug, Clone)]
pub struct LoadBalanceReport {
    /// "ecmp", "flowlet", "packet-spray" or "adaptive".
    pub load_balancing: String,
    /// Out-of-order placement at the NICs.
    pub ooo: bool,
    /// Per switch tier, its ports towards the tier above.
    pub uplink_tiers: Vec<UplinkTier>,
    /// QPs that saw at least one out-of-order arrival.
    pub qps_out_of_order: usize,
    /// Data packets that arrived ahead of the expected PSN, over all QPs.
    pub out_of_order_pkts: u64,
    /// The most any one QP saw.
    pub out_of_order_max_per_qp: u64,
    pub duplicate_pkts: u64,
    /// Out-of-order placement: first transmissions that arrived after their PSN was NAKed.
    pub late_pkts: u64,
    /// Per QP with any out-of-order, duplicate or late arrival, in QP order.
    pub qps: Vec<QpOrderReport>,
    /// What the figures mean for the run, plainly.
    pub findings: Vec<String>,
}

/// The uplinks of one switch tier: utilisation = time busy / run time.
#[derive(Serialize, Debug, Clone)]
pub struct UplinkTier {
    /// Tier of the switches (1: leaves).
    pub tier: u8,
    pub ports: usize,
    pub mean_utilisation: f64,
    pub max_utilisation: f64,
    pub min_utilisation: f64,
    /// max / mean (1: perfectly even; 0 when nothing was sent).
    pub spread: f64,
}

/// An endpoint's name, shared by every flow record that names it (a collective's
/// millions of records name a few thousand endpoints: one string each, not one per
/// record). Serialises and prints as the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointName(std::sync::Arc<str>);

impl EndpointName {
    pub fn new(name: &str) -> EndpointName {
        EndpointName(name.into())
    }
}

impl std::ops::Deref for EndpointName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for EndpointName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for EndpointName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// One QP's arrivals out of order at its responder.
#[derive(Serialize, Debug, Clone)]
pub struct QpOrderReport {
    pub qp: u32,
    pub src: String,
    pub dst: String,
    pub out_of_order: u64,
    pub duplicate: u64,
    pub late: u64,
}

#[cfg(test)]
mod tests {
    /// The memory estimate counts the report's flow records at a fixed size per flow
    /// (`scenario::estimate::REPORT_BYTES_PER_FLOW`): a record (in a vector of exact
    /// length, its names shared) and the summaries' sort vectors (two 8-byte figures,
    /// overall and then per traffic entry) must fit in it.
    #[test]
    fn flow_report_fits_the_estimate() {
        let per_flow = crate::flow_records::ROW_BYTES as u128 + 2 * 8;
        assert!(per_flow <= scenario::estimate::REPORT_BYTES_PER_FLOW, "{per_flow} B per flow");
    }
}
