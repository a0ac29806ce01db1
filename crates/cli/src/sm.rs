//! `fabriclab sm`: run the InfiniBand subnet manager on a topology and show what it did.
//!
//! TOPOLOGY is an `ibnetdiscover` output file, an ibsim net file, or a fabriclab scenario
//! (`.toml`, its `[topology]`). The JSON output (`--json`) is a contract other tools read:
//! `lids` (node name → base LID), `lft` (switch name → LID as a decimal string → output
//! port), `routing`, `unreachable` ([source, destination] names), `cdg_acyclic`, `cycle`
//! (null or [[switch, port], …]), `path_hops` (links → pairs), `port_routes` (switch →
//! port → CA LIDs routed out of it), `vl_cdg_acyclic` (one flag per VL whose channel
//! dependency graph was checked: one for single-VL engines, one per VL in use for
//! dfsssp), `path_vl` (dfsssp only, else null: source switch with CAs → destination CA LID
//! → the path's first VL; it spreads over VLs `v .. v + vls.split[v]`, SL2VL being the
//! identity). Ports are IB port numbers everywhere: switch ports
//! 1..N, 0 = the switch itself; a scenario's port `i` (0-based in the TOML) is IB port
//! `i + 1`, exactly as `--emit-net` writes it. Names are the file's node ids.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use serde_json::{json, Value};

use fabric::subnet_manager::layout::IbLayout;
use fabric::subnet_manager::mad::NO_PATH;
use fabric::subnet_manager::tables::{Fabric, Owner};
use fabric::subnet_manager::{cdg, route, Engine, MasterState, SmConfig, SubnetManager, SweepResult};
use fabric::topology::{PortId, Topology};
use scenario::topofile::{self, IbTopology};
use units::{BitRate, SimDuration};

#[derive(Args, Debug)]
pub struct SmArgs {
    /// ibnetdiscover output, ibsim net file, or scenario TOML (not needed with --bench).
    pub topology: Option<PathBuf>,
    /// Routing engine (OpenSM's names); default minhop (with --bench: all four).
    #[arg(long, value_parser = ["minhop", "updn", "ftree", "dfsssp"])]
    pub routing: Option<String>,
    /// LID mask control: 2^N LIDs per CA port (0..7).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=7))]
    pub lmc: u8,
    /// Root switch for updn/ftree, by node name (repeatable).
    #[arg(long = "root")]
    pub roots: Vec<String>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Write the topology as an ibsim net file (names as in the JSON) and continue.
    #[arg(long = "emit-net")]
    pub emit_net: Option<PathBuf>,
    /// After bring-up, take this link down (NODE:PORT, IB numbering) and re-sweep;
    /// the output shows the re-swept state (repeatable).
    #[arg(long = "down")]
    pub down: Vec<String>,
    /// Run the SM on this node (default: ibsim's first node, ibnetdiscover's initiating
    /// port, the first endpoint of a scenario).
    #[arg(long = "sm")]
    pub sm_node: Option<String>,
    /// Round trip of one SMP, e.g. 20us (default 20us; see subnet_manager::SmTiming).
    #[arg(long = "smp-rtt")]
    pub smp_rtt: Option<SimDuration>,
    /// Print SM wall time per engine (for TOPOLOGY, or for the built-in benchmark fabrics).
    #[arg(long)]
    pub bench: bool,
    /// Add the adaptive-routing groups (`subnet_manager::ar`) to the JSON: `ar_groups` with
    /// `groups` (per switch and CA LID the member ports, the LFT's first) and `restricted`.
    #[arg(long)]
    pub ar: bool,
    /// Forwarding-table rows shown in the text output.
    #[arg(long, default_value_t = 8)]
    pub show: usize,
}

fn load(path: &std::path::Path) -> Result<IbTopology, String> {
    if path.extension().is_some_and(|e| e == "toml") {
        let world = scenario::load(path).map_err(|e| e.to_string())?;
        let layout = IbLayout::synthesize(&world.topo);
        return Ok(IbTopology { topo: world.topo, layout });
    }
    topofile::read_any(path).map_err(|e| e.to_string())
}

pub fn run(a: SmArgs) -> ExitCode {
    if a.bench {
        return bench(&a);
    }
    let Some(path) = &a.topology else {
        eprintln!("error: fabriclab sm: give a TOPOLOGY file (or --bench)");
        return ExitCode::from(2);
    };
    let mut x = match load(path) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(out) = &a.emit_net {
        match topofile::ibsim::write(&x.topo, &x.layout) {
            Ok(text) => {
                if let Err(e) = std::fs::write(out, text) {
                    eprintln!("error: {}: cannot write: {e}", out.display());
                    return ExitCode::from(1);
                }
            }
            Err(e) => {
                eprintln!("error: --emit-net: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let cfg = match config(&a, &x.layout) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(name) = &a.sm_node {
        let Some(n) = x.layout.node_by_name(name) else {
            eprintln!("error: --sm: no node named `{name}`");
            return ExitCode::from(2);
        };
        let node = &x.layout.nodes[n as usize];
        let port = if node.switch { 0 } else { node.ports.iter().position(|p| p.is_some()).unwrap_or(1) as u8 };
        x.layout.sm = (n, port);
    }
    let downs = match a.down.iter().map(|s| parse_port(&x.layout, s)).collect::<Result<Vec<PortId>, String>>() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: --down: {e}");
            return ExitCode::from(2);
        }
    };
    let mut sm = SubnetManager::with_layout(x.topo.clone(), x.layout.clone(), cfg.clone());
    let up = sm.bring_up();
    let sweep = if downs.is_empty() { None } else { Some(sm.resweep(&downs)) };
    let Some(st) = sm.state() else {
        eprintln!("error: the subnet manager found nothing to manage");
        return ExitCode::from(1);
    };
    let unreachable: Vec<(String, String)> = sm.unreachable().into_iter().map(|(s, d)| (ep_name(&x.topo, s), ep_name(&x.topo, d))).collect();
    let report = Report::new(&x, &sm, st, &cfg, &up, sweep.as_ref(), path, unreachable);
    if a.json {
        let mut doc = report.json();
        if a.ar {
            doc["ar_groups"] = report.ar_groups();
        }
        match serde_json::to_string_pretty(&doc) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: cannot serialise: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        print!("{}", report.text(a.show));
    }
    ExitCode::SUCCESS
}

fn config(a: &SmArgs, layout: &IbLayout) -> Result<SmConfig, String> {
    let engine: Engine = a.routing.as_deref().unwrap_or("minhop").parse()?;
    let mut roots = vec![];
    for r in &a.roots {
        let n = layout.node_by_name(r).ok_or_else(|| format!("--root: no node named `{r}`"))?;
        if !layout.nodes[n as usize].switch {
            return Err(format!("--root: `{r}` is not a switch"));
        }
        roots.push(layout.nodes[n as usize].guid);
    }
    let mut cfg = SmConfig { engine, lmc: a.lmc, roots, ..Default::default() };
    if let Some(r) = a.smp_rtt {
        cfg.timing.smp_rtt = r;
    }
    Ok(cfg)
}

fn ep_name(t: &Topology, ep: u32) -> String {
    t.node(t.endpoints[ep as usize]).name.clone()
}

/// `NODE:PORT` (IB port number) → topology port.
fn parse_port(layout: &IbLayout, s: &str) -> Result<PortId, String> {
    let (name, port) = s.rsplit_once(':').ok_or_else(|| format!("`{s}`: expected NODE:PORT"))?;
    let n = layout.node_by_name(name).ok_or_else(|| format!("no node named `{name}`"))?;
    let p: u8 = port.parse().map_err(|_| format!("`{port}` is not a port number"))?;
    layout.topo_port(n, p).ok_or_else(|| format!("`{name}` has no cabled port {p}"))
}

/// Names for the SM's indices.
struct Names {
    sw: Vec<String>,
    ep: Vec<String>,
}

impl Names {
    fn new(x: &IbTopology, f: &Fabric, st: &MasterState) -> Names {
        let by_guid: HashMap<u64, usize> = x.layout.nodes.iter().enumerate().map(|(i, n)| (n.guid, i)).collect();
        let sw = f.sw_guid.iter().map(|g| by_guid.get(g).map_or_else(|| format!("{g:#018x}"), |&i| x.layout.nodes[i].name.clone())).collect();
        let ep = f
            .eps
            .iter()
            .map(|e| {
                let guid = st.subnet.nodes[e.node as usize].guid;
                by_guid
                    .get(&guid)
                    .and_then(|&i| x.layout.nodes[i].ports.get(e.port as usize).copied().flatten())
                    .map_or_else(|| format!("{guid:#018x}:{}", e.port), |p| x.topo.node(x.topo.port(p).node).name.clone())
            })
            .collect();
        Names { sw, ep }
    }
}

struct Report<'a> {
    st: &'a MasterState,
    cfg: &'a SmConfig,
    up: &'a SweepResult,
    resweep: Option<&'a SweepResult>,
    names: Names,
    cdg: cdg::CdgCheck,
    /// Per VL: no cycle in its dependency graph.
    vl_acyclic: Vec<bool>,
    file: String,
    sm_name: String,
    /// Unreachable endpoint pairs of the topology (data plane, over live links).
    unreachable: Vec<(String, String)>,
}

impl<'a> Report<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        x: &'a IbTopology,
        sm: &'a SubnetManager,
        st: &'a MasterState,
        cfg: &'a SmConfig,
        up: &'a SweepResult,
        resweep: Option<&'a SweepResult>,
        path: &std::path::Path,
        unreachable: Vec<(String, String)>,
    ) -> Report<'a> {
        let names = Names::new(x, &st.fabric, st);
        let cdg = cdg::check(&st.fabric, &st.routed.tables, st.routed.sl.as_ref());
        let vl_acyclic = cdg::build(&st.fabric, &st.routed.tables, st.routed.sl.as_ref()).iter().map(|g| cdg::find_cycle(&st.fabric, g).is_none()).collect();
        let (n, p) = sm.sm_at;
        let sm_name = format!("{} port {p}", x.layout.nodes[n as usize].name);
        Report { st, cfg, up, resweep, names, cdg, vl_acyclic, file: path.display().to_string(), sm_name, unreachable }
    }

    fn lids(&self) -> BTreeMap<String, u16> {
        let f = &self.st.fabric;
        let mut m = BTreeMap::new();
        for (s, &l) in f.sw_lid.iter().enumerate() {
            m.insert(self.names.sw[s].clone(), l);
        }
        for (e, ep) in f.eps.iter().enumerate() {
            m.insert(self.names.ep[e].clone(), ep.lid);
        }
        m
    }

    fn balance(&self) -> (u64, f64, u64, Vec<(String, u8, u64)>) {
        let f = &self.st.fabric;
        let mut v = vec![];
        for s in 0..f.nsw() {
            for (p, peer) in f.adj[s].iter().enumerate() {
                if matches!(peer, fabric::subnet_manager::tables::Peer::Switch { .. }) {
                    v.push((self.names.sw[s].clone(), p as u8, self.st.stats.port_routes[s][p]));
                }
            }
        }
        if v.is_empty() {
            return (0, 0.0, 0, v);
        }
        let min = v.iter().map(|x| x.2).min().unwrap_or(0);
        let max = v.iter().map(|x| x.2).max().unwrap_or(0);
        let mean = v.iter().map(|x| x.2).sum::<u64>() as f64 / v.len() as f64;
        v.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| (&a.0, a.1).cmp(&(&b.0, b.1))));
        v.truncate(10);
        (min, mean, max, v)
    }

    fn cycle(&self) -> Option<Vec<(String, u8)>> {
        self.cdg.cycle.as_ref().map(|(_, c)| c.iter().map(|&(s, p)| (self.names.sw[s as usize].clone(), p)).collect())
    }

    /// dfsssp's VL per (source switch with CAs, destination CA LID), as the JSON's `path_vl`.
    fn path_vl(&self) -> Option<Value> {
        let f = &self.st.fabric;
        let sl = self.st.routed.sl.as_ref()?;
        let mut m = serde_json::Map::new();
        for s in (0..f.nsw()).filter(|&s| !f.sw_eps[s].is_empty()) {
            let row: serde_json::Map<String, Value> =
                (1..f.nlid).filter(|&l| matches!(f.owner[l], Owner::Ep(_))).map(|l| (l.to_string(), json!(sl.vl[s * sl.nlid + l]))).collect();
            m.insert(self.names.sw[s].clone(), Value::Object(row));
        }
        Some(Value::Object(m))
    }

    /// The AR groups per switch name and CA LID, and how many minimum-hop ports were left
    /// out to keep the channel dependency graph acyclic.
    fn ar_groups(&self) -> Value {
        let f = &self.st.fabric;
        let g = fabric::subnet_manager::ar::groups(f, &self.st.routed.tables, self.st.routed.sl.as_ref());
        let mut m = serde_json::Map::new();
        for s in 0..f.nsw() {
            let row: serde_json::Map<String, Value> = (1..f.nlid)
                .filter(|&l| matches!(f.owner[l], Owner::Ep(_)) && !g.group(s, l).is_empty())
                .map(|l| (l.to_string(), json!(g.group(s, l))))
                .collect();
            m.insert(self.names.sw[s].clone(), Value::Object(row));
        }
        json!({"groups": m, "restricted": g.restricted})
    }

    fn json(&self) -> Value {
        let f = &self.st.fabric;
        let t = &self.st.routed.tables;
        let mut lft = serde_json::Map::new();
        for s in 0..f.nsw() {
            let mut row = serde_json::Map::new();
            for lid in 1..f.nlid {
                let p = t.get(s, lid);
                if p != NO_PATH && f.owner[lid] != Owner::None {
                    row.insert(lid.to_string(), json!(p));
                }
            }
            lft.insert(self.names.sw[s].clone(), Value::Object(row));
        }
        let mut port_routes = serde_json::Map::new();
        for s in 0..f.nsw() {
            let mut row = serde_json::Map::new();
            for (p, &c) in self.st.stats.port_routes[s].iter().enumerate() {
                if c > 0 {
                    row.insert(p.to_string(), json!(c));
                }
            }
            port_routes.insert(self.names.sw[s].clone(), Value::Object(row));
        }
        let hops: serde_json::Map<String, Value> =
            self.st.stats.hops.iter().enumerate().filter(|(_, &c)| c > 0).map(|(h, &c)| (h.to_string(), json!(c))).collect();
        let unreachable: Vec<Value> = self.unreachable.iter().map(|(s, d)| json!([s, d])).collect();
        let (min, mean, max, busiest) = self.balance();
        let sweep_json = |r: &SweepResult| {
            json!({
                "smps": r.smps,
                "smps_total": r.smps.total(),
                "steps": r.steps.iter().map(|s| json!({"step": s.step, "start_us": s.start.as_us_f64(), "duration_us": s.duration.as_us_f64(), "smps": s.smps})).collect::<Vec<_>>(),
                "total_us": r.total.as_us_f64(),
                "lft_entries_changed": r.entries_changed,
            })
        };
        let roots: Vec<&String> = self.st.routed.roots.iter().map(|&s| &self.names.sw[s]).collect();
        json!({
            "topology": self.file,
            "port_numbering": "ib",
            "routing": self.st.routed.engine.name(),
            "requested_routing": self.cfg.engine.name(),
            "fallback": self.st.routed.fallback,
            "lmc": self.cfg.lmc,
            "sm": self.sm_name,
            "roots": roots,
            "switches": f.nsw(),
            "ca_ports": f.eps.len(),
            "lids": self.lids(),
            "lft": lft,
            "unreachable": unreachable,
            "unreachable_count": self.unreachable.len(),
            "cdg_acyclic": self.cdg.acyclic,
            "cycle": self.cycle().map(|c| c.into_iter().map(|(s, p)| json!([s, p])).collect::<Vec<_>>()),
            "cycle_vl": self.cdg.cycle.as_ref().map(|c| c.0),
            "vls": self.st.routed.sl.as_ref().map(|sl| json!({"needed": sl.vls_needed, "split": sl.split})),
            "vl_cdg_acyclic": self.vl_acyclic,
            "path_vl": self.path_vl(),
            "path_hops": hops,
            "port_routes": port_routes,
            "port_balance": {"min": min, "mean": mean, "max": max, "busiest": busiest.iter().map(|b| json!([b.0, b.1, b.2])).collect::<Vec<_>>()},
            "bring_up": sweep_json(self.up),
            "resweep": self.resweep.map(sweep_json),
            "smp_rtt_us": self.cfg.timing.smp_rtt.as_us_f64(),
        })
    }

    fn text(&self, show: usize) -> String {
        let f = &self.st.fabric;
        let mut o = String::new();
        let links = self.st.subnet.links().len();
        let _ = writeln!(o, "{}: {} switches, {} CA ports, {links} links; SM on {}", self.file, f.nsw(), f.eps.len(), self.sm_name);
        let _ = write!(o, "routing: {}", self.st.routed.engine);
        if let Some(why) = &self.st.routed.fallback {
            let _ = write!(o, " (fallback from {}: {why})", self.cfg.engine);
        }
        if !self.st.routed.roots.is_empty() {
            let r: Vec<&str> = self.st.routed.roots.iter().take(8).map(|&s| self.names.sw[s].as_str()).collect();
            let _ = write!(o, "; roots: {}{}", r.join(", "), if self.st.routed.roots.len() > 8 { ", …" } else { "" });
        }
        let _ = writeln!(o);
        self.sweep_text(&mut o, "bring-up", self.up);
        if let Some(r) = self.resweep {
            self.sweep_text(&mut o, "re-sweep", r);
            let _ = writeln!(o, "  {} LFT entries changed", r.entries_changed);
        }
        self.tables_text(&mut o, show);
        self.checks_text(&mut o);
        o
    }

    /// One sweep's SMPs by kind, its simulated time, and its steps.
    fn sweep_text(&self, o: &mut String, label: &str, r: &SweepResult) {
        let _ = writeln!(
            o,
            "{label}: {} SMPs (NodeInfo {}, NodeDesc {}, PortInfo {}, SwitchInfo {}, SMInfo {}, Set PortInfo {}, Set SwitchInfo {}, Set LFT {}{}); simulated {} at {} per SMP, {} in flight",
            r.smps.total(),
            r.smps.get_node_info,
            r.smps.get_node_desc,
            r.smps.get_port_info,
            r.smps.get_switch_info,
            r.smps.get_sm_info,
            r.smps.set_port_info,
            r.smps.set_switch_info,
            r.smps.set_lft,
            if r.smps.timeouts > 0 { format!(", {} timed out", r.smps.timeouts) } else { String::new() },
            r.total,
            self.cfg.timing.smp_rtt,
            self.cfg.timing.max_wire_smps
        );
        let steps: Vec<String> = r.steps.iter().map(|s| format!("{:?} {}", s.step, s.duration).to_lowercase()).collect();
        let _ = writeln!(o, "  steps: {}", steps.join(", "));
    }

    /// The LIDs and the first `show` switches' forwarding tables.
    fn tables_text(&self, o: &mut String, show: usize) {
        let f = &self.st.fabric;
        let t = &self.st.routed.tables;
        let (lo, hi) = (f.sw_lid.iter().chain(f.eps.iter().map(|e| &e.lid)).min().copied().unwrap_or(0), f.nlid - 1);
        let _ = writeln!(o, "LIDs {lo}..{hi} (LMC {}): {} switches, {} CA ports", self.cfg.lmc, f.nsw(), f.eps.len());
        let lids = self.lids();
        let shown: Vec<String> = lids.iter().take(12).map(|(n, l)| format!("{n}={l}")).collect();
        let _ =
            writeln!(o, "  {}{}", shown.join(" "), if lids.len() > 12 { format!(" … ({} more; --json lists all)", lids.len() - 12) } else { String::new() });
        let _ = writeln!(
            o,
            "forwarding tables (LID:port; 0 = the switch itself){}:",
            if f.nsw() > show { format!(", first {show} of {} switches (--json lists all)", f.nsw()) } else { String::new() }
        );
        for s in 0..f.nsw().min(show) {
            let entries: Vec<String> =
                (1..f.nlid).filter(|&l| t.get(s, l) != NO_PATH && f.owner[l] != Owner::None).map(|l| format!("{l}:{}", t.get(s, l))).collect();
            let n = entries.len();
            let mut line = entries.into_iter().take(24).collect::<Vec<_>>().join(" ");
            if n > 24 {
                let _ = write!(line, " … ({n} entries)");
            }
            let _ = writeln!(o, "  {}: {line}", self.names.sw[s]);
        }
    }

    /// Path lengths, port balance, the channel-dependency check and unreachable pairs.
    fn checks_text(&self, o: &mut String) {
        let hops: Vec<String> = self.st.stats.hops.iter().enumerate().filter(|(_, &c)| c > 0).map(|(h, &c)| format!("{h}: {c}")).collect();
        let _ = writeln!(o, "path lengths (links: CA-to-CA pairs): {}", if hops.is_empty() { "none".into() } else { hops.join(", ") });
        let (min, mean, max, busiest) = self.balance();
        let _ = writeln!(o, "routes per inter-switch port (CA LIDs out of it): min {min}, mean {mean:.1}, max {max}");
        if !busiest.is_empty() {
            let b: Vec<String> = busiest.iter().take(5).map(|(s, p, c)| format!("{s}[{p}] {c}")).collect();
            let _ = writeln!(o, "  busiest: {}", b.join(", "));
        }
        match self.cycle() {
            None => {
                let _ = writeln!(
                    o,
                    "channel dependencies: acyclic{}",
                    self.st.routed.sl.as_ref().map_or(String::new(), |sl| format!(" on every VL ({} VLs needed, split {:?})", sl.vls_needed, sl.split))
                );
            }
            Some(c) => {
                let chain: Vec<String> = c.iter().map(|(s, p)| format!("{s}[{p}]")).collect();
                let _ = writeln!(o, "channel dependencies: CYCLIC (deadlock possible); cycle: {} -> back", chain.join(" -> "));
            }
        }
        let un = &self.unreachable;
        if un.is_empty() {
            let _ = writeln!(o, "unreachable pairs: none");
        } else {
            let shown: Vec<String> = un.iter().take(10).map(|(s, d)| format!("{s}->{d}")).collect();
            let _ = writeln!(o, "unreachable pairs: {}: {}{}", un.len(), shown.join(", "), if un.len() > 10 { ", …" } else { "" });
        }
    }
}

/// `--bench`: wall time of each SM phase per engine.
fn bench(a: &SmArgs) -> ExitCode {
    let fabrics: Vec<(String, Topology)> = match &a.topology {
        Some(p) => match load(p) {
            Ok(x) => vec![(p.display().to_string(), x.topo)],
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => {
            let l = (BitRate::from_gbps(400), SimDuration::from_ns(5));
            vec![
                (
                    "leaf-spine 63 leaves x 32 hosts + 32 spines (64-port switches): 2,016 hosts, 95 switches".into(),
                    Topology::leaf_spine(63, 32, 32, 1, 1, l, l).expect("valid"),
                ),
                ("fat tree k=32: 8,192 hosts, 1,280 switches".into(), Topology::fat_tree(32, l, l).expect("valid")),
            ]
        }
    };
    let engines: Vec<Engine> = match &a.routing {
        None => Engine::ALL.to_vec(),
        Some(r) => vec![r.parse().expect("clap validated the name")],
    };
    println!("threads: {}", std::thread::available_parallelism().map_or(1, |n| n.get()));
    for (name, t) in fabrics {
        println!("{name}");
        let t0 = Instant::now();
        let mut sm = SubnetManager::new(&t, SmConfig::default());
        let up = sm.bring_up();
        let bring_up = t0.elapsed();
        let st = sm.state().expect("swept");
        println!(
            "  bring-up with minhop (discovery, LIDs, routing, programming, path stats): {:.1} ms wall; {} SMPs, {} simulated",
            bring_up.as_secs_f64() * 1e3,
            up.smps.total(),
            up.total
        );
        for &e in &engines {
            let cfg = SmConfig { engine: e, lmc: a.lmc, ..Default::default() };
            let t1 = Instant::now();
            let r = route(&st.fabric, &cfg, None);
            let dt = t1.elapsed();
            let t2 = Instant::now();
            let c = cdg::check(&st.fabric, &r.tables, r.sl.as_ref());
            let dc = t2.elapsed();
            println!(
                "  {:7} routing {:8.1} ms{}   (CDG check {:.1} ms: {})",
                e.name(),
                dt.as_secs_f64() * 1e3,
                r.fallback.as_ref().map_or(String::new(), |w| format!(" [fell back to minhop: {w}]")),
                dc.as_secs_f64() * 1e3,
                if c.acyclic { "acyclic" } else { "cyclic" }
            );
        }
    }
    ExitCode::SUCCESS
}
