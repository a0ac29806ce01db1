//! The InfiniBand subnet manager (SM): the control plane that discovers the fabric,
//! assigns LIDs, computes routes and programs every switch's linear forwarding table.
//!
//! The SM sees the fabric only through management queries ([`mad::Smi`]: SubnGet/SubnSet
//! of NodeInfo, PortInfo, SwitchInfo, SMInfo, LinearForwardingTable over directed routes),
//! answered by the nodes' management agents ([`mad::Agents`], built over a
//! [`Topology`]). A sweep is:
//!
//! 1. [`discovery`]: directed-route breadth-first sweep from the SM's port;
//! 2. [`lid`]: LID assignment (LMC optional), SubnSet(PortInfo) where a LID changes;
//! 3. routing, with OpenSM's engines and names: [`minhop`], [`updn`], [`ftree`],
//!    [`dfsssp`] (an engine that cannot route the fabric falls back to minhop, as OpenSM
//!    does); [`cdg`] checks the result for cyclic channel dependencies;
//! 4. programming: SubnSet(SwitchInfo) for LinearFDBTop, SubnSet(LinearForwardingTable)
//!    for every 64-LID block that changed, and port activation (Armed, Active).
//!
//! Alongside the LFTs it can compute adaptive-routing groups ([`ar`]).
//!
//! Every SMP is counted ([`mad::SmpCounts`]); the simulated time of a step is its SMP
//! count over the SMPs OpenSM keeps in flight, times a per-SMP round trip
//! ([`SmTiming`]), and routing time is a parameter. [`SubnetManager`] is the handle the
//! simulator uses (bring-up, re-sweep after failures, the data-plane tables, SL per
//! path); [`failover`] models master/standby SMs as state machines driven by `now`.
//!
//! Left out: multicast, partitions (P_Keys), QoS/SL2VL programming (SL = VL is assumed),
//! M_Key, the SA, the guid2lid/LFT cache files, routing engines other than the four,
//! and SMP loss other than on dead links.

pub mod ar;
pub mod cdg;
pub mod dfsssp;
pub mod discovery;
pub mod failover;
pub mod ftree;
mod ftree_hops;
pub mod layout;
pub mod lid;
pub mod mad;
pub mod minhop;
pub mod tables;
pub mod updn;

use std::collections::HashMap;

use units::SimDuration;

use crate::lft::Lft;
use crate::topology::{PortId, Topology};
use discovery::{route_to_port, Subnet};
use layout::IbLayout;
use lid::LidManager;
use mad::{Agents, Counted, PortState, Smi, SmpCounts, LFT_BLOCK, NO_PATH};
use tables::{Fabric, PathStats, SlTable, Tables};

/// Routing engines, by OpenSM's names (`opensm -R`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    Minhop,
    Updn,
    Ftree,
    Dfsssp,
}

impl Engine {
    pub const ALL: [Engine; 4] = [Engine::Minhop, Engine::Updn, Engine::Ftree, Engine::Dfsssp];
    pub fn name(self) -> &'static str {
        match self {
            Engine::Minhop => "minhop",
            Engine::Updn => "updn",
            Engine::Ftree => "ftree",
            Engine::Dfsssp => "dfsssp",
        }
    }
}

impl std::str::FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Engine, String> {
        Engine::ALL.into_iter().find(|e| e.name() == s).ok_or_else(|| format!("unknown routing engine `{s}`; expected minhop, updn, ftree or dfsssp"))
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Timing of management operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmTiming {
    /// Round trip of one SMP (request to response). Default 20 µs: an **assumption** —
    /// no published per-SMP figure is built in; switch SMAs answer in firmware, so the
    /// round trip is dominated by management-processor time, not by the wire. Measure
    /// yours (e.g. time a `smpquery -D nodeinfo` loop) and set it.
    pub smp_rtt: SimDuration,
    /// SMPs the SM keeps outstanding (OpenSM `osm_base.h`: OSM_DEFAULT_SMP_MAX_ON_WIRE 4).
    pub max_wire_smps: u32,
    /// Routing computation time charged per sweep (a parameter: fabriclab does not time
    /// its own CPU; `fabriclab sm --bench` measures this implementation). Default 0.
    pub route_compute: SimDuration,
    /// Periodic light sweep (OpenSM OSM_DEFAULT_SWEEP_INTERVAL_SECS 10).
    pub sweep_interval: SimDuration,
    /// Standby polls the master's SMInfo this often (OpenSM
    /// OSM_SM_DEFAULT_POLLING_TIMEOUT_MILLISECS 10000).
    pub polling_timeout: SimDuration,
    /// Unanswered polls tolerated before the master is declared lost (OpenSM
    /// OSM_SM_DEFAULT_POLLING_RETRY_NUMBER 4; it declares loss when the count exceeds it).
    pub polling_retries: u32,
    /// Switches report link state changes with Trap 128 (IBTA Vol. 1 §14.2.5.1,
    /// Notice 128) to the master; without traps a failure waits for the next light sweep.
    pub traps: bool,
}

impl Default for SmTiming {
    fn default() -> Self {
        SmTiming {
            smp_rtt: SimDuration::from_us(20),
            max_wire_smps: 4,
            route_compute: SimDuration::ZERO,
            sweep_interval: SimDuration::from_ms(10_000),
            polling_timeout: SimDuration::from_ms(10_000),
            polling_retries: 4,
            traps: true,
        }
    }
}

impl SmTiming {
    /// Time for `n` SMPs with at most `max_wire_smps` in flight, and a dependency chain
    /// `depth` round trips long (a directed-route sweep cannot go deeper faster).
    pub fn smps_time(&self, n: u64, depth: usize) -> SimDuration {
        let w = self.max_wire_smps.max(1) as u64;
        let rounds = n.div_ceil(w).max(if n > 0 { depth as u64 } else { 0 });
        self.smp_rtt * rounds
    }
    /// One-way delivery of a trap (half a round trip).
    pub fn trap_delay(&self) -> SimDuration {
        self.smp_rtt / 2
    }
}

/// Subnet manager configuration.
#[derive(Clone, Debug)]
pub struct SmConfig {
    pub engine: Engine,
    /// LID mask control: each CA port gets 2^lmc LIDs (IBTA Vol. 1 §7.11.1; 0..=7).
    pub lmc: u8,
    /// Root switch GUIDs for updn and ftree (OpenSM `root_guid_file`); empty = automatic.
    pub roots: Vec<u64>,
    /// SMInfo priority, 0..15 (OpenSM default 0).
    pub priority: u8,
    pub timing: SmTiming,
}

impl Default for SmConfig {
    fn default() -> Self {
        SmConfig { engine: Engine::Minhop, lmc: 0, roots: vec![], priority: 0, timing: SmTiming::default() }
    }
}

/// What a routing run produced.
#[derive(Clone, Debug)]
pub struct Routed {
    /// The engine that produced the tables (minhop after a fallback).
    pub engine: Engine,
    /// Why the configured engine was not used, when it was not.
    pub fallback: Option<String>,
    pub tables: Tables,
    /// SL per path (dfsssp).
    pub sl: Option<SlTable>,
    /// Root switches used (updn, ftree).
    pub roots: Vec<usize>,
}

/// Runs the configured engine; falls back to minhop when it fails (OpenSM
/// `osm_ucast_mgr_process`).
///
/// SHARP aggregation nodes (CAs inside switches, see `topology`) would make every switch
/// look like a leaf to updn's root detection and to ftree's ranking, so those two engines
/// route the fabric without them and each AN's LID is then forwarded as its switch's LID
/// is ([`Fabric::route_aggregation_nodes`]; where an engine leaves a switch LID
/// unrouted, as up*/down* does between two aggregation switches of a pod, the AN is
/// unreachable from there too, which a SHARP tree never needs). Host routes are the same
/// as without ANs. This rule is fabriclab's: how OpenSM treats ANs was not checked.
pub fn route(f: &Fabric, cfg: &SmConfig, old: Option<&Tables>) -> Routed {
    let roots: Vec<usize> = cfg.roots.iter().filter_map(|g| f.sw_guid.iter().position(|x| x == g)).collect();
    let without_an = f.eps.iter().any(|e| e.an).then(|| f.without_aggregation_nodes());
    let g = without_an.as_ref().unwrap_or(f);
    let with_an = |mut t: Tables| {
        if without_an.is_some() {
            f.route_aggregation_nodes(&mut t);
        }
        t
    };
    let res: Result<Routed, String> = match cfg.engine {
        Engine::Minhop => Ok(Routed { engine: Engine::Minhop, fallback: None, tables: minhop::route(f, old, cfg.lmc), sl: None, roots: vec![] }),
        Engine::Updn => {
            updn::route(g, &roots, old, cfg.lmc).map(|(t, r)| Routed { engine: Engine::Updn, fallback: None, tables: with_an(t), sl: None, roots: r })
        }
        Engine::Ftree => {
            ftree::route(g, &roots, cfg.lmc).map(|(t, r)| Routed { engine: Engine::Ftree, fallback: None, tables: with_an(t), sl: None, roots: r })
        }
        Engine::Dfsssp => dfsssp::route(f, f.data_vls).map(|(t, sl)| Routed { engine: Engine::Dfsssp, fallback: None, tables: t, sl: Some(sl), roots: vec![] }),
    };
    match res {
        Ok(r) => r,
        Err(why) => Routed { engine: Engine::Minhop, fallback: Some(why), tables: minhop::route(f, old, cfg.lmc), sl: None, roots: vec![] },
    }
}

/// The phases of a sweep, for timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// From the failure to the SM starting to sweep (trap delivery, light sweep, or the
    /// standby's polling timeouts).
    Detect,
    /// Directed-route discovery.
    Sweep,
    /// LID assignment (SubnSet PortInfo).
    Lids,
    /// Route computation (a parameter).
    Route,
    /// SwitchInfo and LFT blocks, then port activation.
    Program,
}

/// Simulated time of one step, from the start of the whole operation.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct StepTime {
    pub step: Step,
    pub start: SimDuration,
    pub duration: SimDuration,
    pub smps: u64,
}

/// The outcome of a sweep.
#[derive(Clone, Debug)]
pub struct SweepResult {
    pub steps: Vec<StepTime>,
    /// From the failure (or start) to the last LFT block written.
    pub total: SimDuration,
    pub smps: SmpCounts,
    pub engine: Engine,
    pub fallback: Option<String>,
    pub nodes: usize,
    pub links: usize,
    /// LFT entries (switch, LID) that changed.
    pub entries_changed: u64,
}

/// The master SM's state between sweeps.
#[derive(Clone, Debug)]
pub struct MasterState {
    pub subnet: Subnet,
    pub fabric: Fabric,
    pub routed: Routed,
    pub stats: PathStats,
}

/// Master SM logic: sweeps and keeps what it programmed.
#[derive(Clone, Debug, Default)]
pub struct Master {
    pub lids: LidManager,
    pub state: Option<MasterState>,
}

impl Master {
    /// A heavy sweep through `smi` (the SM's port is `sm_port` on its node). `detect`: time
    /// already spent noticing the change; `keep_routes`: reuse still-valid entries of the
    /// tables this master programmed last (OpenSM keeps existing LFTs except on its first
    /// sweep as master).
    pub fn sweep(&mut self, smi: &mut dyn Smi, sm_port: u8, cfg: &SmConfig, detect: SimDuration, keep_routes: bool) -> SweepResult {
        let sub = discovery::discover(smi, sm_port);
        self.configure(smi, sub, cfg, detect, keep_routes)
    }

    /// The rest of a heavy sweep once the subnet is discovered (`sub`, whose SMPs are
    /// counted as the sweep step): LIDs, routing, programming (`program_lfts`, then
    /// `activate_ports`), each step timed by its SMPs.
    pub fn configure(&mut self, smi: &mut dyn Smi, mut sub: Subnet, cfg: &SmConfig, detect: SimDuration, keep_routes: bool) -> SweepResult {
        let tm = &cfg.timing;
        let disc_smps = sub.smps;
        let mut steps = vec![StepTime { step: Step::Detect, start: SimDuration::ZERO, duration: detect, smps: 0 }];
        let mut t = detect;
        let d = tm.smps_time(disc_smps.total(), sub.depth + 1);
        steps.push(StepTime { step: Step::Sweep, start: t, duration: d, smps: disc_smps.total() });
        t += d;

        // LIDs.
        let outcome = self.lids.assign(&mut sub, cfg.lmc.min(7));
        let sm_lid = sub.nodes.get(sub.sm_node as usize).map_or(0, |n| n.ports[if n.switch { 0 } else { sub.sm_port as usize }].lid);
        let mut c = Counted::new(smi);
        for &(n, p) in &outcome.changed {
            let path = route_to_port(&sub, n, p);
            let port = &sub.nodes[n as usize].ports[p as usize];
            let _ = c.set_port_info(&path, p, port.lid, port.lmc, sm_lid, PortState::Init);
        }
        let lid_smps = c.counts;
        let d = tm.smps_time(lid_smps.total(), 0);
        steps.push(StepTime { step: Step::Lids, start: t, duration: d, smps: lid_smps.total() });
        t += d;

        // Routing.
        let fabric = Fabric::from_subnet(&sub);
        let old = if keep_routes { self.state.as_ref().map(|s| remap_tables(&s.fabric, &s.routed.tables, &fabric)) } else { None };
        let routed = route(&fabric, cfg, old.as_ref());
        steps.push(StepTime { step: Step::Route, start: t, duration: tm.route_compute, smps: 0 });
        t += tm.route_compute;

        // Programming: only what differs from what this master wrote before.
        let prev = self.state.as_ref().map(|s| remap_tables(&s.fabric, &s.routed.tables, &fabric));
        let mut c = Counted::new(smi);
        let changed = program_lfts(&mut c, &sub, &fabric, &routed.tables, prev.as_ref());
        activate_ports(&mut c, &sub, sm_lid);
        let prog_smps = c.counts;
        let d = tm.smps_time(prog_smps.total(), 0);
        steps.push(StepTime { step: Step::Program, start: t, duration: d, smps: prog_smps.total() });
        t += d;

        let mut smps = disc_smps;
        smps.add(&lid_smps);
        smps.add(&prog_smps);
        let stats = tables::path_stats(&fabric, &routed.tables);
        let res = SweepResult {
            steps,
            total: t,
            smps,
            engine: routed.engine,
            fallback: routed.fallback.clone(),
            nodes: sub.nodes.len(),
            links: sub.links().len(),
            entries_changed: changed,
        };
        self.state = Some(MasterState { subnet: sub, fabric, routed, stats });
        res
    }
}

/// Writes the LFT blocks of every switch that differ from `prev` (what this master wrote
/// before; `None`: all of them), with LinearFDBTop and PortStateChange cleared
/// (write-1-to-clear, IBTA Vol. 1 §14.2.5.4) where OpenSM writes them during a heavy
/// sweep. Returns how many entries changed.
fn program_lfts(c: &mut Counted, sub: &Subnet, fabric: &Fabric, tables: &Tables, prev: Option<&Tables>) -> u64 {
    let mut changed = 0u64;
    let nblocks = fabric.nlid.div_ceil(LFT_BLOCK);
    let mut block = [NO_PATH; LFT_BLOCK];
    for s in 0..fabric.nsw() {
        let path = sub.nodes[fabric.sw_node[s] as usize].path.clone();
        let row = tables.row(s);
        let prev_row = prev.map(|p| p.row(s));
        if prev.is_none_or(|p| p.nlid != fabric.nlid) || sub.nodes[fabric.sw_node[s] as usize].port_state_change {
            let _ = c.set_switch_info(&path, (fabric.nlid - 1) as u16);
        }
        for b in 0..nblocks {
            let lo = b * LFT_BLOCK;
            let hi = (lo + LFT_BLOCK).min(fabric.nlid);
            let same = prev_row.is_some_and(|pr| pr.len() == row.len() && pr[lo..hi] == row[lo..hi]);
            if let Some(pr) = prev_row {
                if pr.len() == row.len() {
                    changed += (lo..hi).filter(|&i| pr[i] != row[i]).count() as u64;
                }
            } else {
                changed += (hi - lo) as u64;
            }
            if same {
                continue;
            }
            block.fill(NO_PATH);
            block[..hi - lo].copy_from_slice(&row[lo..hi]);
            let _ = c.set_lft_block(&path, b as u16, &block);
        }
    }
    changed
}

/// Port activation: every port still in Init goes Armed, then Active (OpenSM link manager
/// and state manager, IBTA Vol. 1 §7.2).
fn activate_ports(c: &mut Counted, sub: &Subnet, sm_lid: u16) {
    for (i, n) in sub.nodes.iter().enumerate() {
        for (p, port) in n.ports.iter().enumerate() {
            if (n.switch && p == 0) || port.state != Some(PortState::Init) {
                continue;
            }
            let path = route_to_port(sub, i as u32, p as u8);
            let _ = c.set_port_info(&path, p as u8, port.lid, port.lmc, sm_lid, PortState::Armed);
            let _ = c.set_port_info(&path, p as u8, port.lid, port.lmc, sm_lid, PortState::Active);
        }
    }
}

/// Re-indexes tables of an earlier sweep onto a new fabric (switches by GUID, LIDs kept).
fn remap_tables(old_f: &Fabric, old: &Tables, new_f: &Fabric) -> Tables {
    let mut t = Tables::new(new_f.nsw(), new_f.nlid);
    let by_guid: HashMap<u64, usize> = old_f.sw_guid.iter().enumerate().map(|(i, &g)| (g, i)).collect();
    let n = old.nlid.min(new_f.nlid);
    for s in 0..new_f.nsw() {
        if let Some(&o) = by_guid.get(&new_f.sw_guid[s]) {
            t.lft[s * new_f.nlid..s * new_f.nlid + n].copy_from_slice(&old.row(o)[..n]);
        }
    }
    t
}

/// The subnet manager as the simulator uses it: one master SM on a topology.
pub struct SubnetManager {
    pub agents: Agents,
    pub cfg: SmConfig,
    pub master: Master,
    /// The SM's IB node and port.
    pub sm_at: (u32, u8),
    lft: Lft,
    /// Per topology endpoint: (source switch index, base LID), when routed.
    ep_route: Vec<Option<(u32, u16)>>,
}

impl SubnetManager {
    /// An SM on a topology described by generated names and ibsim-style GUIDs.
    pub fn new(topo: &Topology, cfg: SmConfig) -> SubnetManager {
        let layout = IbLayout::synthesize(topo);
        SubnetManager::with_layout(topo.clone(), layout, cfg)
    }

    /// An SM on a topology with its IB layout (from a topology file).
    pub fn with_layout(topo: Topology, layout: IbLayout, cfg: SmConfig) -> SubnetManager {
        let sm_at = layout.sm;
        let lft = Lft::new(&topo);
        let neps = topo.endpoints.len();
        SubnetManager { agents: Agents::new(topo, layout), cfg, master: Master::default(), sm_at, lft, ep_route: vec![None; neps] }
    }

    /// First sweep: discover, assign LIDs, route, program every switch.
    pub fn bring_up(&mut self) -> SweepResult {
        self.sweep(SimDuration::ZERO, false)
    }

    /// After link or switch failures (`failed_ports` go down): the switches trap, the
    /// master re-sweeps and reprograms; the returned steps are timed from the failure.
    /// Routes that are still valid and least-hop are kept (minhop/updn). Afterwards
    /// [`SubnetManager::lft`] is the new data-plane table.
    pub fn resweep(&mut self, failed_ports: &[PortId]) -> SweepResult {
        for &p in failed_ports {
            self.agents.set_port_up(p, false);
        }
        let tm = self.cfg.timing;
        let detect = if tm.traps { tm.trap_delay() } else { tm.sweep_interval };
        self.sweep(detect, true)
    }

    fn sweep(&mut self, detect: SimDuration, keep: bool) -> SweepResult {
        let (n, p) = self.sm_at;
        let mut smi = self.agents.at(n, p);
        let r = self.master.sweep(&mut smi, p, &self.cfg, detect, keep);
        self.refresh();
        r
    }

    fn refresh(&mut self) {
        self.lft = self.agents.data_plane_lft(0);
        let Some(st) = &self.master.state else { return };
        let topo = &self.agents.topo;
        let layout = &self.agents.layout;
        let by_guid: HashMap<u64, usize> = st.fabric.eps.iter().enumerate().map(|(i, e)| (e.guid, i)).collect();
        for ep in 0..topo.endpoints.len() as u32 {
            let (n, p) = layout.ib_port(topo.ep_port(ep));
            let guid = layout.nodes[n as usize].port_guids[p as usize];
            self.ep_route[ep as usize] = by_guid.get(&guid).and_then(|&i| {
                let e = &st.fabric.eps[i];
                e.sw.map(|(s, _)| (s, e.lid))
            });
        }
    }

    /// The data-plane forwarding table (base LIDs) as programmed into the switches.
    pub fn lft(&self) -> &Lft {
        &self.lft
    }

    /// The data-plane table for LID offset `k` (< 2^LMC): the extra paths LMC gives.
    pub fn lft_for_offset(&self, k: u16) -> Lft {
        self.agents.data_plane_lft(k)
    }

    /// Service level for packets from endpoint `src_ep` to `dst_ep`: the VL the routing
    /// engine assigned to that path (dfsssp), else 0.
    pub fn path_sl(&self, src_ep: u32, dst_ep: u32) -> u8 {
        let (Some(st), Some(Some((s, _))), Some(Some((_, lid)))) = (&self.master.state, self.ep_route.get(src_ep as usize), self.ep_route.get(dst_ep as usize))
        else {
            return 0;
        };
        match &st.routed.sl {
            Some(sl) => sl.sl(*s as usize, *lid as usize, src_ep),
            None => 0,
        }
    }

    /// The adaptive-routing groups ([`ar`]) for the tables this SM programmed, in the
    /// simulator's terms; `None` before a sweep.
    pub fn ar_table(&self) -> Option<ar::ArTable> {
        let st = self.master.state.as_ref()?;
        let groups = ar::groups(&st.fabric, &st.routed.tables, st.routed.sl.as_ref());
        let layout = &self.agents.layout;
        let by_guid: HashMap<u64, u32> = layout.nodes.iter().enumerate().filter(|(_, n)| n.switch).map(|(i, n)| (n.guid, i as u32)).collect();
        let ib_node: Vec<u32> = st.fabric.sw_node.iter().map(|&n| by_guid[&st.subnet.nodes[n as usize].guid]).collect();
        let table = ar::ArTable::build(
            &self.agents.topo,
            &groups,
            st.fabric.nsw(),
            |s| layout.nodes[ib_node[s] as usize].topo_nodes[0],
            |s, p| layout.topo_port(ib_node[s], p),
            |ep| self.ep_route[ep as usize].map(|x| x.1),
        );
        Some(table)
    }

    /// Base LID of an endpoint (0 when it has none).
    pub fn ep_lid(&self, ep: u32) -> u16 {
        self.ep_route.get(ep as usize).copied().flatten().map_or(0, |x| x.1)
    }

    pub fn state(&self) -> Option<&MasterState> {
        self.master.state.as_ref()
    }

    /// Endpoint pairs (source, destination) the data plane cannot deliver between now:
    /// the programmed tables walked over live links. Includes endpoints the SM could not
    /// find at all (their link is down, so nothing routes to them).
    pub fn unreachable(&self) -> Vec<(u32, u32)> {
        unreachable_pairs(&self.agents.topo, &self.lft, |p| self.agents.link_up(p))
    }
}

/// Endpoint pairs whose packets do not arrive when forwarded by `lft` over the links for
/// which `up` holds. Per destination the walk is memoised per switch, so the cost is
/// `switches × endpoints`, not `endpoints²`.
pub fn unreachable_pairs(t: &Topology, lft: &Lft, up: impl Fn(PortId) -> bool) -> Vec<(u32, u32)> {
    const UNKNOWN: u8 = 0;
    const ACTIVE: u8 = 1;
    const OK: u8 = 2;
    const BAD: u8 = 3;
    let mut state = vec![UNKNOWN; t.nodes.len()];
    let mut stack = vec![];
    let mut out = vec![];
    let n = t.endpoints.len() as u32;
    for d in 0..n {
        state.fill(UNKNOWN);
        let dst = t.endpoints[d as usize];
        for s in 0..n {
            if s == d {
                continue;
            }
            let sp = t.ep_port(s);
            let first = if up(sp) { t.port(sp).peer.map(|p| t.port(p).node) } else { None };
            let ok = match first {
                None => false,
                Some(node) if node == dst => true,
                Some(node) if !t.is_switch(node) => false,
                Some(mut node) => {
                    stack.clear();
                    let verdict = loop {
                        match state[node.0 as usize] {
                            OK => break OK,
                            BAD | ACTIVE => break BAD,
                            _ => {}
                        }
                        state[node.0 as usize] = ACTIVE;
                        stack.push(node);
                        let next = lft.get(node, d).filter(|&p| up(p)).and_then(|p| t.port(p).peer).map(|p| t.port(p).node);
                        match next {
                            Some(m) if m == dst => break OK,
                            Some(m) if t.is_switch(m) => node = m,
                            _ => break BAD,
                        }
                    };
                    for &x in &stack {
                        state[x.0 as usize] = verdict;
                    }
                    verdict == OK
                }
            };
            if !ok {
                out.push((s, d));
            }
        }
    }
    out.sort_unstable();
    out
}
