//! `run --pcap DIR`: packet captures Wireshark reads, one pcapng file per watched port.
//!
//! The simulator's capture tap (`fabric::sim::capture`) hands over every frame a watched
//! port sends (outbound) or receives (inbound); this file chooses the ports, turns the
//! records into bytes, puts them in time order and writes them with `wire::pcapng`:
//! LINKTYPE_ETHERNET, FCS left out and declared so (`if_fcslen` 0), nanosecond
//! timestamps (`if_tsresol` 9), the direction in `epb_flags`, frames cut to the snap
//! length (default: whole frames, ICRC included), and at most `--pcap-limit` bytes per
//! file (default [`DEFAULT_LIMIT`]); a cut file is said on stderr.
//!
//! Ports: names as the topology gives them (`leaf0:3`), a NIC's node name (`h0`), or
//! `hottest`: the port that sent the most bytes, found by a first run; the simulation is
//! deterministic, so the second run, watching it, is the same run. Default: the NIC ports
//! of the first `[[traffic]]` entry's receivers, at most [`MAX_DEFAULT_PORTS`] of them.
//!
//! Leaves out: InfiniBand fabrics (refused: their ERF captures are not written yet) and
//! RoCEv2 over IPv6 (refused: `wire` builds IPv4 only).

use std::cell::RefCell;
use std::collections::{BTreeSet, BinaryHeap};
use std::io::BufWriter;
use std::path::PathBuf;
use std::rc::Rc;

use fabric::params::Tech;
use fabric::sim::{CaptureSink, CaptureSpec, Captured, Direction};
use fabric::topology::{NodeKind, PortId, Topology};
use fabric::Sim;
use report::Report;
use scenario::World;
use units::{Bytes, SimDuration, SimTime};
use wire::{Interface, LinkType, PcapngWriter};

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
    if world.params.tech == Tech::Infiniband {
        return Err(format!("{file}: --pcap: InfiniBand captures are not written yet (RoCEv2 scenarios only)"));
    }
    if world.params.encap.ipv6 {
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
    let eps: BTreeSet<u32> = world.flows.iter().filter(|f| f.group == 0).map(|f| f.dst).collect();
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

/// A frame waiting for its turn in the time order.
struct Pending {
    t: SimTime,
    seq: u64,
    slot: usize,
    dir: Direction,
    bytes: Vec<u8>,
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

/// One capture file.
struct File {
    path: PathBuf,
    w: PcapngWriter<BufWriter<std::fs::File>>,
    frames: u64,
    /// When the byte limit cut it, and the frames left out since.
    cut: Option<SimTime>,
    left_out: u64,
}

/// The files and the reorder buffer; shared between the tap's sink and this module.
struct Files {
    files: Vec<File>,
    pending: BinaryHeap<Pending>,
    seq: u64,
    limit: u64,
    error: Option<String>,
}

impl Files {
    fn write(&mut self, p: Pending) {
        let f = &mut self.files[p.slot];
        if f.cut.is_some() {
            f.left_out += 1;
            return;
        }
        if f.w.written() + f.w.record_len(p.bytes.len()) > self.limit {
            f.cut = Some(p.t);
            f.left_out += 1;
            return;
        }
        if let Err(e) = f.w.write_packet(p.t.ps(), p.dir, &p.bytes) {
            self.error.get_or_insert(format!("{}: cannot write: {e}", f.path.display()));
        }
        f.frames += 1;
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
        let Some(bytes) = c.roce_bytes() else { return };
        f.seq += 1;
        let seq = f.seq;
        f.pending.push(Pending { t: c.t, seq, slot: c.slot, dir: c.dir, bytes });
    }
}

/// A file name for a port: its name with anything but letters, digits, `.`, `_` and `-`
/// replaced by `-`.
fn file_name(topo: &Topology, p: PortId) -> String {
    let n: String = topo.port_name(p).chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' { c } else { '-' }).collect();
    format!("{n}.pcapng")
}

fn open(plan: &Plan, topo: &Topology, ports: &[PortId]) -> Result<Files, String> {
    std::fs::create_dir_all(&plan.dir).map_err(|e| format!("{}: cannot create: {e}", plan.dir.display()))?;
    let mut files = Vec::with_capacity(ports.len());
    for &p in ports {
        let path = plan.dir.join(file_name(topo, p));
        let out = std::fs::File::create(&path).map_err(|e| format!("{}: cannot create: {e}", path.display()))?;
        let iface = Interface { link: LinkType::Ethernet, snaplen: plan.snaplen, name: topo.port_name(p), fcs_len: 0 };
        let w = PcapngWriter::new(BufWriter::new(out), &iface).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        files.push(File { path, w, frames: 0, cut: None, left_out: 0 });
    }
    Ok(Files { files, pending: BinaryHeap::new(), seq: 0, limit: plan.limit, error: None })
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
    let files = Rc::new(RefCell::new(open(plan, &world.topo, &ports)?));
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
