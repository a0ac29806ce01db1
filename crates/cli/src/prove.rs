//! What the planners' `--prove` scenarios share: the `[roce]` and `[buffer]` sections of a
//! PFC-only RoCEv2 fabric.

/// The traffic class (and PFC priority) the proofs' lossless data rides on: DSCP 26 maps
/// to it in [`PfcOnly`]'s sections; reports index their per-class counters with it.
pub const LOSSLESS_TC: usize = 3;

/// One lossless priority (DSCP 26 → TC [`LOSSLESS_TC`]), CNPs on DSCP 48, store-and-forward switches
/// without pipeline latency, PFC with the IEEE 802.3 response times, ECN and DCQCN off, and
/// the given buffer (all sizes in bytes).
pub struct PfcOnly<'a> {
    pub mtu: u64,
    /// Local ACK timeout exponent (4.096 us x 2^timeout).
    pub timeout: u8,
    pub total: u64,
    pub cell: u64,
    pub dynamic_th: i8,
    pub reserved: u64,
    pub headroom: u64,
    /// "dynamic" or a size with its unit.
    pub xoff: &'a str,
    pub xon_offset: u64,
    /// Responder ACKs every this many packets (and each message's last); `None`: default.
    pub ack_every: Option<u32>,
}

impl PfcOnly<'_> {
    pub fn sections(&self) -> String {
        format!(
            r#"[roce]
mtu = "{mtu}B"
lossless_priorities = [{tc}]
dscp_to_tc = {{ 26 = {tc}, 48 = 6 }}
cnp_dscp = 48
timeout = {timeout}
retry_cnt = 7{ack}
forwarding = "store-and-forward"
switch_latency = "0ns"
pfc = {{ enabled = true, quanta = 65535, refresh = "auto", response = "auto" }}
dcqcn = {{ preset = "off" }}

[buffer]
total = "{total}B"
cell = "{cell}B"
dynamic_th = {th}
reserved = "{resv}B"
headroom = "{hdrm}B"
xoff = "{xoff}"
xon_offset = "{xon}B"
"#,
            mtu = self.mtu,
            tc = LOSSLESS_TC,
            timeout = self.timeout,
            ack = self.ack_every.map_or(String::new(), |a| format!("\nack_every = {a}")),
            total = self.total,
            cell = self.cell,
            th = self.dynamic_th,
            resv = self.reserved,
            hdrm = self.headroom,
            xoff = self.xoff,
            xon = self.xon_offset,
        )
    }
}
