//! `run --pcap DIR`: packet captures Wireshark reads, one pcapng file per watched port.
//!
//! The simulator's capture tap (`fabric::sim::capture`) hands over every frame a watched
//! port sends (outbound) or receives (inbound); this file chooses the ports, turns the
//! records into bytes, puts them in time order and writes them with `wire::pcapng`:
//! nanosecond timestamps (`if_tsresol` 9), the direction in `epb_flags`, frames cut to
//! the snap length (default: whole frames, ICRC included), and at most `--pcap-limit`
//! bytes per file (default [`DEFAULT_LIMIT`]); a cut file is said on stderr.
//!
//! RoCEv2: LINKTYPE_ETHERNET, FCS left out and declared so (`if_fcslen` 0).
//! InfiniBand: LINKTYPE_ERF, each packet an ERF type-21 record (`wire::erf`), LRH to VCRC,
//! whose capture interface is its direction too (0 sent, 1 received, as Wireshark reads
//! it); the snap length counts the packet, not the 16-byte ERF header before it. LIDs are
//! the subnet manager's when one routes the fabric (the same bring-up `fabriclab sm`
//! shows), else endpoint `e` has LID `e + 1`. Flow-control packets are not written:
//! Wireshark 4.0 reports every correct one malformed (`wire::erf` says why); they go to
//! `<port>.fcp.csv` beside the capture (time, direction, VL, FCTBS, FCCL) and are counted
//! on stderr.
//!
//! Ports: names as the topology gives them (`leaf0:3`), a NIC's node name (`h0`), or
//! `hottest`: the port that sent the most bytes, found by a first run; the simulation is
//! deterministic, so the second run, watching it, is the same run. Default: the NIC ports
//! of the first `[[traffic]]` entry's receivers, at most [`MAX_DEFAULT_PORTS`] of them.
//!
//! Leaves out: RoCEv2 over IPv6 (refused: `wire` builds IPv4 only) and InfiniBand
//! flow-control packets in the pcapng (above).

use std::cell::RefCell;
use std::collections::{BTreeSet, BinaryHeap};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::rc::Rc;

use fabric::params::Tech;
use fabric::sim::{CaptureSink, CaptureSpec, Captured, Direction};
use fabric::topology::{NodeKind, PortId, Topology};
use fabric::Sim;
use report::Report;
use scenario::World;
use units::{Bytes, SimDuration, SimTime};
use wire::{erf, Interface, LinkType, PcapngWriter};

/// Bytes per capture file unless `--pcap-limit` says otherwise: 100 MB.
pub const DEFAULT_LIMIT: u64 = 100_000_000;

/// At most this many default ports (the first receivers, by endpoint): a collective's
/// first entry may have every NIC as a receiver, and a file each would fill the disk.
pub const MAX_DEFAULT_PORTS: usize = 8;

/// Snap length unless `--pcap-snaplen` says otherwise: whole frames (the largest frame
/// the simulator sends is 4096 B of payload plus headers).
pub const DEFAULT_SNAPLEN: u32 = 262_144;

/// The capture flags of `run`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PcapArgs {
    /// Write packet captures (pcapng, one file per port) into this directory.
    #[arg(long, value_name = "DIR")]
    pub pcap: Option<PathBuf>,
    /// Ports to capture: names such as leaf0:3 or h0 (a NIC), comma-separated, or
    /// `hottest` (the port that sent the most bytes). Default: the NICs receiving the
    /// first traffic entry (the first 8).
    #[arg(long, value_name = "P,...|hottest", requires = "pcap")]
    pub pcap_ports: Option<String>,
    /// Capture from this simulated time (e.g. 100us).
    #[arg(long, value_name = "T", requires = "pcap")]
    pub pcap_from: Option<String>,
    /// Capture up to this simulated time.
    #[arg(long, value_name = "T", requires = "pcap")]
    pub pcap_to: Option<String>,
    /// Bytes kept of each frame (default: the whole frame).
    #[arg(long, value_name = "N", requires = "pcap")]
    pub pcap_snaplen: Option<u32>,
    /// Largest capture file (e.g. 10MB; default 100MB); the rest of the run is left out.
    #[arg(long, value_name = "SIZE", requires = "pcap")]
    pub pcap_limit: Option<String>,
}

/// Which ports, by name or found by a first run.
enum Ports {
    Named(Vec<PortId>),
    Hottest,
}

/// The capture a `run` was asked for, checked against its scenario.
pub struct Plan {
    dir: PathBuf,
    ports: Ports,
    from: SimTime,
    to: SimTime,
    snaplen: u32,
    limit: u64,
}

/// Checks the flags against `world` (from `file`); the error names the flag and what
/// it expects.
pub fn plan(args: &PcapArgs, world: &World, file: &str) -> Result<Option<Plan>, String> {
    let Some(dir) = &args.pcap else { return Ok(None) };
    if world.params.tech != Tech::Infiniband && world.params.encap.ipv6 {
        return Err(format!("{file}: --pcap: RoCEv2 over IPv6 is not written yet (IPv4 scenarios only)"));
    }
    let time = |flag: &str, v: &Option<String>, dflt: SimTime| match v {
        None => Ok(dflt),
        Some(s) => s.parse::<SimDuration>().map(|d| SimTime(d.ps())).map_err(|e| format!("--{flag} {s:?}: {e}; expected a time such as 100us")),
    };
    let from = time("pcap-from", &args.pcap_from, SimTime::ZERO)?;
    let to = time("pcap-to", &args.pcap_to, SimTime::MAX)?;
    if to < from {
        return Err(format!("--pcap-to ({}) is before --pcap-from ({})", SimDuration(to.ps()), SimDuration(from.ps())));
    }
    let snaplen = args.pcap_snaplen.unwrap_or(DEFAULT_SNAPLEN);
    if snaplen == 0 || snaplen > DEFAULT_SNAPLEN {
        return Err(format!("--pcap-snaplen {snaplen}: expected 1 to {DEFAULT_SNAPLEN} bytes"));
    }
    let limit = match &args.pcap_limit {
        None => DEFAULT_LIMIT,
        Some(s) => s.parse::<Bytes>().map_err(|e| format!("--pcap-limit {s:?}: {e}; expected a size such as 10MB"))?.0,
    };
    let ports = match args.pcap_ports.as_deref() {
        Some("hottest") => Ports::Hottest,
        Some(list) => Ports::Named(list.split(',').map(|n| port_named(&world.topo, n.trim())).collect::<Result<_, _>>()?),
        None => {
            let all = receivers(world);
            if all.len() > MAX_DEFAULT_PORTS {
                eprintln!("pcap: the first traffic entry has {} receivers: capturing the first {MAX_DEFAULT_PORTS} (name others with --pcap-ports)", all.len());
            }
            Ports::Named(all.into_iter().take(MAX_DEFAULT_PORTS).collect())
        }
    };
    if let Ports::Named(p) = &ports {
        if p.is_empty() {
            return Err(format!("{file}: --pcap: the first traffic entry has no receivers: name ports with --pcap-ports"));
        }
    }
    Ok(Some(Plan { dir: dir.clone(), ports, from, to, snaplen, limit }))
}

/// The NIC ports of the first traffic entry's receivers, in endpoint order.
fn receivers(world: &World) -> Vec<PortId> {
    let mut eps = BTreeSet::new();
    fabric::params::FlowSource::for_each(&*world.flows, &mut |f| {
        if f.group == 0 {
            eps.insert(f.dst);
        }
    });
    eps.into_iter().map(|e| world.topo.ep_port(e)).collect()
}

/// A port by its name (`node:index`) or a NIC by its node name.
fn port_named(topo: &Topology, name: &str) -> Result<PortId, String> {
    let (node, index) = match name.rsplit_once(':') {
        Some((n, i)) => (n, Some(i.parse::<u32>().map_err(|_| format!("--pcap-ports {name:?}: expected NODE:INDEX with a port number"))?)),
        None => (name, None),
    };
    let Some(ni) = topo.nodes.iter().position(|n| n.name == node) else {
        return Err(format!("--pcap-ports: no node named {node:?} (expected names such as leaf0:3, or a NIC such as h0)"));
    };
    let n = &topo.nodes[ni];
    let index = match (index, &n.kind) {
        (Some(i), _) if i < n.nports => i,
        (Some(i), _) => return Err(format!("--pcap-ports {name:?}: {node} has ports 0 to {}, not {i}", n.nports.saturating_sub(1))),
        (None, NodeKind::Nic { .. }) if n.nports == 1 => 0,
        (None, _) => return Err(format!("--pcap-ports {name:?}: {node} has {} ports: name one as {node}:INDEX", n.nports)),
    };
    Ok(PortId(n.first_port + index))
}

/// What a watched port saw: a frame's bytes, or an InfiniBand flow-control packet.
enum Seen {
    Frame(Vec<u8>),
    Fcp(wire::FlowControlRepr),
}

/// A frame waiting for its turn in the time order.
struct Pending {
    t: SimTime,
    seq: u64,
    slot: usize,
    dir: Direction,
    seen: Seen,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.t, self.seq) == (o.t, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    /// Earliest first in a max-heap.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}

/// An InfiniBand port's flow-control packets: the CSV beside its capture, and counts.
struct FcpLog {
    path: PathBuf,
    w: BufWriter<std::fs::File>,
    /// FCPs written, by direction: sent (outbound) and received (inbound).
    sent: u64,
    received: u64,
}

/// One capture file.
struct File {
    path: PathBuf,
    w: PcapngWriter<BufWriter<std::fs::File>>,
    frames: u64,
    /// When the byte limit cut it, and the frames left out since.
    cut: Option<SimTime>,
    left_out: u64,
    fcp: Option<FcpLog>,
}

/// The files and the reorder buffer; shared between the tap's sink and this module.
struct Files {
    files: Vec<File>,
    pending: BinaryHeap<Pending>,
    seq: u64,
    limit: u64,
    /// InfiniBand: each endpoint's LID.
    lids: Vec<u16>,
    error: Option<String>,
}

/// The header of a `.fcp.csv` file.
const FCP_CSV_HEADER: &str = "time_ns,direction,vl,fctbs,fccl\n";

impl Files {
    fn write(&mut self, p: Pending) {
        let f = &mut self.files[p.slot];
        if f.cut.is_some() {
            f.left_out += 1;
            return;
        }
        let res = match &p.seen {
            Seen::Fcp(fc) => {
                let log = f.fcp.as_mut().expect("an InfiniBand capture has an FCP log");
                let (dir, n) = match p.dir {
                    Direction::Outbound => ("out", &mut log.sent),
                    Direction::Inbound => ("in", &mut log.received),
                };
                *n += 1;
                writeln!(log.w, "{},{dir},{},{},{}", p.t.ps() / 1_000, fc.vl, fc.fctbs, fc.fccl).map_err(|e| (log.path.clone(), e))
            }
            Seen::Frame(bytes) => {
                if f.w.written() + f.w.record_len(bytes.len()) > self.limit {
                    f.cut = Some(p.t);
                    f.left_out += 1;
                    return;
                }
                f.frames += 1;
                f.w.write_packet(p.t.ps(), p.dir, bytes).map_err(|e| (f.path.clone(), e))
            }
        };
        if let Err((path, e)) = res {
            self.error.get_or_insert(format!("{}: cannot write: {e}", path.display()));
        }
    }

    /// Writes every pending frame stamped at or before `upto`.
    fn drain(&mut self, upto: SimTime) {
        while self.pending.peek().is_some_and(|p| p.t <= upto) {
            let p = self.pending.pop().expect("peeked");
            self.write(p);
        }
    }
}

#[derive(Clone)]
struct Sink(Rc<RefCell<Files>>);

impl CaptureSink for Sink {
    fn frame(&mut self, c: &Captured) {
        let mut f = self.0.borrow_mut();
        // Every later record is stamped at or after its send time, which is at least this
        // one's: what is stamped up to then is final.
        f.drain(c.sent);
        let seen = if let Some(fc) = c.flow_control() {
            Seen::Fcp(fc)
        } else if c.ib {
            let lid = |e: u32| f.lids.get(e as usize).copied().unwrap_or(0);
            let Some(packet) = c.ib_bytes(lid(c.src), lid(c.dst)) else { return };
            Seen::Frame(erf::record(c.t.ps(), erf::TYPE_INFINIBAND, erf_interface(c.dir), &packet))
        } else {
            let Some(bytes) = c.roce_bytes() else { return };
            Seen::Frame(bytes)
        };
        f.seq += 1;
        let seq = f.seq;
        f.pending.push(Pending { t: c.t, seq, slot: c.slot, dir: c.dir, seen });
    }
}

/// The ERF capture interface of a direction: Wireshark reads interface 0 as "sent" and 1
/// as "received" (`packet-erf.c`, `dissect_erf`), as pcapng's `epb_flags` say it.
fn erf_interface(dir: Direction) -> u8 {
    match dir {
        Direction::Outbound => 0,
        Direction::Inbound => 1,
    }
}

/// Each endpoint's LID: the subnet manager's when one routes the fabric, else `e + 1`
/// (wrapping within the unicast LIDs 1 to 0xBFFF, IBTA Vol 1 §4.1.3).
fn ib_lids(world: &World) -> Vec<u16> {
    let n = world.topo.endpoints.len() as u32;
    match &world.sm {
        Some(sm) => {
            let data_vls = world.params.ib.as_ref().map_or(1, |ib| ib.data_vls);
            let mgr = scenario::ib::sm_bring_up(&world.topo, world.layout.as_ref(), sm, data_vls);
            (0..n).map(|e| mgr.ep_lid(e)).collect()
        }
        None => (0..n).map(|e| (e % 0xBFFF + 1) as u16).collect(),
    }
}

/// A file name for a port: its name with anything but letters, digits, `.`, `_` and `-`
/// replaced by `-`.
fn file_name(topo: &Topology, p: PortId) -> String {
    let n: String = topo.port_name(p).chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' { c } else { '-' }).collect();
    format!("{n}.pcapng")
}

/// Creates `path`, saying which file could not be.
fn create(path: &std::path::Path) -> Result<BufWriter<std::fs::File>, String> {
    std::fs::File::create(path).map(BufWriter::new).map_err(|e| format!("{}: cannot create: {e}", path.display()))
}

/// Opens a capture per port; `lids` (InfiniBand) makes them ERF captures with FCP logs.
fn open(plan: &Plan, topo: &Topology, ports: &[PortId], lids: Option<Vec<u16>>) -> Result<Files, String> {
    std::fs::create_dir_all(&plan.dir).map_err(|e| format!("{}: cannot create: {e}", plan.dir.display()))?;
    let ib = lids.is_some();
    let mut files = Vec::with_capacity(ports.len());
    for &p in ports {
        let path = plan.dir.join(file_name(topo, p));
        let out = create(&path)?;
        // ERF: the snap length keeps the record's header and `snaplen` bytes of the packet.
        let (link, snaplen) = if ib { (LinkType::Erf, plan.snaplen.saturating_add(erf::HEADER_LEN as u32)) } else { (LinkType::Ethernet, plan.snaplen) };
        let iface = Interface { link, snaplen, name: topo.port_name(p), fcs_len: 0 };
        let w = PcapngWriter::new(out, &iface).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        let fcp = if ib {
            let path = path.with_extension("fcp.csv");
            let mut w = create(&path)?;
            w.write_all(FCP_CSV_HEADER.as_bytes()).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
            Some(FcpLog { path, w, sent: 0, received: 0 })
        } else {
            None
        };
        files.push(File { path, w, frames: 0, cut: None, left_out: 0, fcp });
    }
    Ok(Files { files, pending: BinaryHeap::new(), seq: 0, limit: plan.limit, lids: lids.unwrap_or_default(), error: None })
}

/// The port that sent the most bytes (the lowest-numbered among equals).
fn hottest(sim: &Sim) -> PortId {
    let (i, _) = sim.stats.ports.iter().enumerate().max_by_key(|&(i, p)| (p.tx_bytes, std::cmp::Reverse(i))).expect("a fabric has ports");
    PortId(i as u32)
}

/// Runs `world` under `watch`, capturing as `plan` says; says on stderr what was written
/// and what a byte limit cut. The report is the run's, as without capture.
pub fn run(world: &World, sample: bool, watch: &mut dyn fabric::sim::Watch, plan: &Plan) -> Result<(Sim, Report), String> {
    let ports = match &plan.ports {
        Ports::Named(p) => p.clone(),
        Ports::Hottest => {
            let (first, _) = report::run_watched(world, false, watch);
            let p = hottest(&first);
            eprintln!(
                "pcap: the hottest port is {} ({} bytes sent); running again to capture it",
                world.topo.port_name(p),
                first.stats.ports[p.index()].tx_bytes
            );
            vec![p]
        }
    };
    let lids = (world.params.tech == Tech::Infiniband).then(|| ib_lids(world));
    let files = Rc::new(RefCell::new(open(plan, &world.topo, &ports, lids)?));
    let mut sim = world.simulator(sample);
    sim.set_capture(CaptureSpec { ports, from: plan.from, to: plan.to }, Box::new(Sink(files.clone())));
    sim.run_watched(watch);
    drop(sim.take_capture());
    let mut f = Rc::try_unwrap(files).map_err(|_| "the capture sink outlived the run".to_string())?.into_inner();
    f.drain(SimTime::MAX);
    if let Some(e) = f.error {
        return Err(e);
    }
    for file in &mut f.files {
        file.w.flush().map_err(|e| format!("{}: cannot write: {e}", file.path.display()))?;
        eprintln!("pcap: {}: {} frames, {} bytes", file.path.display(), file.frames, file.w.written());
        if let Some(log) = &mut file.fcp {
            log.w.flush().map_err(|e| format!("{}: cannot write: {e}", log.path.display()))?;
            eprintln!(
                "pcap: {}: {} flow-control packets ({} sent, {} received), not in the capture: Wireshark 4.0 reads them as malformed (docs/captures.md)",
                log.path.display(),
                log.sent + log.received,
                log.sent,
                log.received
            );
        }
        if let Some(t) = file.cut {
            eprintln!(
                "pcap: {} reached the {} byte limit at simulated {}: {} later frames left out (raise --pcap-limit)",
                file.path.display(),
                plan.limit,
                SimDuration(t.ps()),
                file.left_out
            );
        }
    }
    let r = report::build(world, &sim.stats);
    Ok((sim, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/roce-pfc-storm.toml")).unwrap();
        scenario::load_str("storm.toml", &src).unwrap()
    }

    #[test]
    fn ports_by_name_and_their_errors() {
        let w = world();
        let h0 = port_named(&w.topo, "h0").unwrap();
        assert_eq!(h0, w.topo.ep_port(0));
        let leaf = w.topo.port(h0).peer.unwrap();
        assert_eq!(port_named(&w.topo, &w.topo.port_name(leaf)).unwrap(), leaf);
        assert!(port_named(&w.topo, "nosuch").unwrap_err().contains("no node named \"nosuch\""));
        let leaf_node = &w.topo.node(w.topo.port(leaf).node).name;
        assert!(port_named(&w.topo, leaf_node).unwrap_err().contains(":INDEX"));
        assert!(port_named(&w.topo, &format!("{leaf_node}:99")).unwrap_err().contains("not 99"));
        assert!(port_named(&w.topo, "h0:x").unwrap_err().contains("port number"));
    }

    #[test]
    fn flags_checked() {
        let w = world();
        let a = |f: fn(&mut PcapArgs)| {
            let mut a = PcapArgs { pcap: Some("/tmp/x".into()), ..Default::default() };
            f(&mut a);
            plan(&a, &w, "storm.toml").err().unwrap_or_default()
        };
        assert!(a(|a| a.pcap_from = Some("soon".into())).starts_with("--pcap-from \"soon\""));
        assert!(a(|a| a.pcap_snaplen = Some(0)).contains("expected 1 to"));
        assert!(a(|a| a.pcap_limit = Some("lots".into())).starts_with("--pcap-limit"));
        assert!(a(|a| {
            a.pcap_from = Some("2us".into());
            a.pcap_to = Some("1us".into());
        })
        .contains("before"));
        // Default: h4 -> h0 is the first entry: h0's NIC.
        let p = plan(&PcapArgs { pcap: Some("/tmp/x".into()), ..Default::default() }, &w, "storm.toml").unwrap().unwrap();
        let Ports::Named(ports) = p.ports else { panic!("named") };
        assert_eq!(ports, receivers(&w));
        assert!(!ports.is_empty());
        assert_eq!((p.snaplen, p.limit), (DEFAULT_SNAPLEN, DEFAULT_LIMIT));
    }

    #[test]
    fn default_ports_are_capped() {
        let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/allreduce-compare.toml")).unwrap();
        let w = scenario::load_str("allreduce.toml", &src).unwrap();
        assert_eq!(receivers(&w).len(), 16, "a ring all-reduce: every rank receives");
        let p = plan(&PcapArgs { pcap: Some("/tmp/x".into()), ..Default::default() }, &w, "allreduce.toml").unwrap().unwrap();
        let Ports::Named(ports) = p.ports else { panic!("named") };
        assert_eq!(ports, receivers(&w)[..MAX_DEFAULT_PORTS]);
    }
}
