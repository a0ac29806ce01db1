//! `verify --simulate`: the verified configuration as a scenario (`scenario` crate format)
//! that the engine runs, every value written with its origin (`TABLE|key|field` and file,
//! a flag, a NIC file, or what was assumed) in a comment after it ([`toml`]).
//!
//! * Topology: DEVICE_NEIGHBOR across the switches given, hosts on the lossless ports
//!   without a switch neighbour ([`topology`]), or `--topology FILE` ([`topofile`]); PORT
//!   speeds, CABLE_LENGTH cables.
//! * Buffers: the lossless PGs' BUFFER_PROFILE and BUFFER_POOL ([`buffer`]), one base
//!   profile for the fabric, each port's own `xoff` by a `misconfigured-port` fault at t=0.
//! * Classes and ECN: PORT_QOS_MAP, DSCP_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP, QUEUE and
//!   WRED_PROFILE ([`classes`]); a port's own DSCP map by a fault at t=0.
//! * DCQCN: the NIC files' `[roce_rp]`/`[roce_np]` over the ConnectX defaults ([`dcqcn`]).
//! * Traffic: the planner's worst-case incast, every host but one writing
//!   [`SimOptions::incast_size`] to the last host (hosts in switch and port order, so
//!   senders on other switches cross the spine), RoCE DSCP `--roce-dscp`. The CLI runs it
//!   and reads the drops and pauses back onto SONiC's names through [`Simulation::ports`].
//!
//! Assumed (not in config_db, each said in the scenario's comments): the cell size
//! (`--cell`, required), PFC quanta 65535 with the simulator's IEEE 802.3 response and
//! refresh, store-and-forward switches without pipeline latency, no PFC
//! watchdog (detection times are far beyond a simulated millisecond), the RC timeout and
//! retry count of the NIC files, `--ib-timeout`/`--retry-cnt` or NCCL's defaults. What the
//! scenario cannot express per port is a note ([`Simulation::notes`]).
//!
//! `--topology FILE` ([`topofile`]) replaces DEVICE_NEIGHBOR with a scenario-format
//! explicit topology.
//!
//! Left out: the PFC
//! watchdog, SCHEDULER weights (the simulator's strict queues 6 and 7, weighted others),
//! port MTUs (the path MTU is `--path-mtu`), and MAP_PFC_PRIORITY_TO_QUEUE (identity).

mod buffer;
mod classes;
mod dcqcn;
pub mod toml;
mod topofile;
mod topology;

use serde::Serialize;
use units::{Bytes, SimDuration};

use super::config_db::{ReadError, Switch};
use super::{Input, Options};
use buffer::{b, Profile, Resume, Trigger};
use classes::{most_common, PortClasses};
use toml::{q, Doc, Origin};
use topology::Fabric;

/// What the simulation runs beyond the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Bytes each incast sender writes.
    pub incast_size: Bytes,
    /// The scenario's `stop_time`.
    pub stop_time: SimDuration,
}

impl Default for SimOptions {
    /// 2 MiB per sender: at the dynamic thresholds of SONiC's samples (α = 1/8 of a
    /// 12.7 MB pool) a PG pauses at about 1.2 MB, so three senders fill the receiver's
    /// switch past it; 5 ms covers that at 40 Gb/s.
    fn default() -> Self {
        SimOptions { incast_size: Bytes(2 << 20), stop_time: SimDuration::from_ms(5) }
    }
}

/// One simulated switch port (or host) and its scenario name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SimPort {
    pub switch: String,
    pub port: String,
    /// The scenario's node name and port index.
    pub node: String,
    pub index: u32,
    /// The lossless PG profile simulated on it (`None`: a lossy port).
    pub profile: Option<String>,
}

/// The scenario and how its names map back to the configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Simulation {
    /// The scenario TOML, with every value's origin in a comment.
    pub scenario: String,
    pub ports: Vec<SimPort>,
    pub hosts: Vec<String>,
    pub receiver: String,
    pub senders: Vec<String>,
    pub dcqcn: String,
    /// The lossless switch ingresses grouped by what their headroom depends on, for the
    /// headroom worst case.
    pub port_types: Vec<PortType>,
    /// What the scenario could not express as configured, and what it assumed instead.
    pub notes: Vec<String>,
}

/// Lossless switch ingresses with the same link speed, cable and profile values: the inputs
/// of one headroom worst case (`plan roce --prove`'s scenario, run by the CLI).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PortType {
    pub speed_mbps: u64,
    pub cable_m: u64,
    /// The profile (of the first port) and its values.
    pub profile: String,
    pub xoff: u64,
    pub reserved: u64,
    /// The profile's BUFFER_POOL `size`.
    pub pool: u64,
    /// `dynamic_th` clamped to the simulator's -7..3 (0 for a static trigger).
    pub dynamic_th: i8,
    /// (switch, port) of each ingress of this type.
    pub ports: Vec<(String, String)>,
}

/// The port types of the simulated lossless switch ingresses, in port order.
fn port_types(sws: &[Switch], fab: &Fabric, profiles: &PortProfiles) -> Vec<PortType> {
    let mut out: Vec<PortType> = vec![];
    for (s, p, pr) in profiles {
        let at = (*s, p.clone());
        let Some(link) = fab.links.iter().find(|l| l.a == at || l.b.as_ref() == Some(&at)) else { continue };
        let dynamic_th = match pr.trigger.0 {
            Trigger::Dynamic(th) => th.clamp(-7, 3) as i8,
            Trigger::Static(_) => 0,
        };
        let key = (link.speed_mbps, link.cable_m, pr.xoff.0, pr.reserved.0, dynamic_th, pr.pool.0);
        let port = (sws[*s].name().to_string(), p.clone());
        match out.iter_mut().find(|t| (t.speed_mbps, t.cable_m, t.xoff, t.reserved, t.dynamic_th, t.pool) == key) {
            Some(t) => t.ports.push(port),
            None => out.push(PortType {
                speed_mbps: key.0,
                cable_m: key.1,
                profile: pr.name.clone(),
                xoff: key.2,
                reserved: key.3,
                pool: key.5,
                dynamic_th,
                ports: vec![port],
            }),
        }
    }
    out
}

/// A name the scenario can use for a node (no `:`, which separates ports).
fn node_name(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

/// The lossless profile of each simulated lossless switch port.
type PortProfiles = Vec<(usize, String, Profile)>;

/// Builds the scenario of `input` (see the module doc).
pub fn build(input: &Input, opts: &Options, so: &SimOptions) -> Result<Simulation, ReadError> {
    let sws = &input.switches;
    let Some(cell) = opts.cell else {
        return Err(ReadError::Shape { file: "(command line)".into(), place: "--cell".into(), msg: "--simulate needs the buffer's cell size".into() });
    };
    let fab = match &input.topology {
        Some((file, text)) => topofile::fabric(sws, file, text)?,
        None => topology::fabric(sws)?,
    };
    let mut notes = fab.notes.clone();
    let mut classes: Vec<(usize, String, PortClasses)> = vec![];
    let mut profiles: PortProfiles = vec![];
    for (s, ports) in fab.ports.iter().enumerate() {
        for p in ports {
            let c = classes::port_classes(&sws[s], p)?;
            if !c.pfc.is_empty() {
                let pgs: Vec<u32> = c.pfc.iter().copied().collect();
                profiles.push((s, p.clone(), buffer::port_profile(s, &sws[s], p, &pgs, &mut notes)?));
            }
            classes.push((s, p.clone(), c));
        }
    }
    // The lossless classes most lossless ports have.
    let lossless: Vec<&(usize, String, PortClasses)> = classes.iter().filter(|(_, _, c)| !c.pfc.is_empty()).collect();
    let Some(base_c) = most_common(&lossless, |(_, _, c)| c.pfc.clone()).map(|x| x.2.clone()) else {
        return Err(ReadError::Shape {
            file: sws[0].files.first().cloned().unwrap_or_default(),
            place: "PORT_QOS_MAP".into(),
            msg: "no lossless port to simulate".into(),
        });
    };
    let base_p = buffer::base(&profiles).clone();
    let base_dscp = most_common(&classes, |(_, _, c)| c.dscp_to_tc.0.clone()).map(|x| x.2.dscp_to_tc.clone()).expect("classes not empty");
    let base_pg = most_common(&classes, |(_, _, c)| c.tc_to_pg.0.clone()).map(|x| x.2.tc_to_pg.clone()).expect("classes not empty");
    class_notes(sws, &classes, &base_c, &base_pg, &mut notes);
    profile_notes(sws, &profiles, &base_p, &mut notes);
    let dc = dcqcn::dcqcn(&input.nics, &mut notes);
    let nmax = fab.ports.iter().map(Vec::len).max().unwrap_or(0) as u64;

    let mut doc = Doc::default();
    doc.comment("fabriclab verify --simulate: the configuration below as a scenario; after each value, where it comes from");
    doc.comment(&format!("config_db files: {}", sws.iter().flat_map(|s| s.files.iter().cloned()).collect::<Vec<_>>().join(", ")));
    doc.section("[scenario]");
    doc.value("name", "\"verify-simulate\"", &Origin::Given("fabriclab verify --simulate".into()));
    doc.value("seed", "1", &Origin::Assumed("a fixed seed (ECMP hashing, RED marking)".into()));
    doc.value("stop_time", &format!("\"{}ps\"", so.stop_time.ps()), &Origin::Given("--simulate's run length".into()));
    write_topology(&mut doc, sws, &fab, nmax);
    write_roce(&mut doc, input, opts, &classes, &base_c, &base_dscp, &base_pg, &dc, &mut notes)?;
    write_buffer(&mut doc, &base_p, &base_c, &base_pg, cell, nmax, &mut notes);
    let (receiver, senders) = write_traffic(&mut doc, &fab, opts, so);
    write_faults(&mut doc, sws, &fab, &classes, &profiles, &base_p, &base_dscp);

    let mut ports = vec![];
    for (s, list) in fab.ports.iter().enumerate() {
        for (i, p) in list.iter().enumerate() {
            let profile = profiles.iter().find(|(ps, pp, _)| *ps == s && pp == p).map(|x| x.2.name.clone());
            ports.push(SimPort { switch: sws[s].name().to_string(), port: p.clone(), node: node_name(sws[s].name()), index: i as u32, profile });
        }
    }
    let dcqcn = match &dc.preset.1 {
        Origin::Assumed(why) => format!("{} ({why})", dc.preset.0),
        o => format!("{} with {} override(s) ({})", dc.preset.0, dc.overrides.len(), o.text()),
    };
    let port_types = port_types(sws, &fab, &profiles);
    Ok(Simulation { scenario: doc.finish(), ports, hosts: fab.hosts.iter().map(|h| node_name(&h.name)).collect(), receiver, senders, dcqcn, port_types, notes })
}

/// `[topology]`: every switch with the largest switch's port count, hosts, and links.
fn write_topology(doc: &mut Doc, sws: &[Switch], fab: &Fabric, nmax: u64) {
    doc.section("[topology]");
    doc.value(
        "kind",
        "\"explicit\"",
        &Origin::Given("DEVICE_NEIGHBOR across the config_db files: switch links, and a host on each lossless port without a switch neighbour".into()),
    );
    doc.line("nodes = [");
    for (s, ports) in fab.ports.iter().enumerate() {
        if ports.is_empty() {
            continue;
        }
        let ports_text = ports.iter().enumerate().map(|(i, p)| format!("{i} {p}")).collect::<Vec<_>>().join(", ");
        doc.raw(
            &format!("  {{ name = {}, kind = \"switch\", ports = {nmax} }},", q(&node_name(sws[s].name()))),
            &Origin::Given(format!(
                "switch {} ({}); ports: {ports_text}; as many ports as the largest switch, so each has the same shared pool",
                sws[s].name(),
                sws[s].files.join(", ")
            )),
        );
    }
    for h in &fab.hosts {
        let sw = &sws[h.at.0];
        let why = match &h.neighbour {
            Some(n) => format!(
                "{} DEVICE_NEIGHBOR|{}|name {n:?}: a host on a lossless port without a switch neighbour",
                sw.place("DEVICE_NEIGHBOR", &h.at.1, "name").file,
                h.at.1
            ),
            None => format!("{} {} is lossless and has no DEVICE_NEIGHBOR: a host", sw.name(), h.at.1),
        };
        doc.raw(&format!("  {{ name = {}, kind = \"host\" }},", q(&node_name(&h.name))), &Origin::Given(why));
    }
    doc.line("]");
    doc.line("links = [");
    let end = |(s, p): &(usize, String)| format!("{}:{}", node_name(sws[*s].name()), fab.ports[*s].iter().position(|x| x == p).expect("a simulated port"));
    for l in &fab.links {
        let b = match &l.b {
            Some(b) => end(b),
            None => node_name(&fab.hosts.iter().find(|h| h.at == l.a).expect("a host per host link").name),
        };
        let a_name = format!("{} {}", sws[l.a.0].name(), l.a.1);
        let b_name = l.b.as_ref().map_or("host".to_string(), |b| format!("{} {}", sws[b.0].name(), b.1));
        doc.raw(
            &format!("  {{ a = {}, b = {}, speed = \"{}Mbps\", cable = \"{}m\" }},", q(&end(&l.a)), q(&b), l.speed_mbps, l.cable_m),
            &Origin::Given(format!("{a_name} - {b_name}; speed: {}; cable: {}", l.speed_origin.text(), l.cable_origin.text())),
        );
    }
    doc.line("]");
}

/// Notes for class settings that differ between ports and cannot be expressed.
fn class_notes(sws: &[Switch], classes: &[(usize, String, PortClasses)], base: &PortClasses, base_pg: &classes::Map, notes: &mut Vec<String>) {
    for (s, p, c) in classes {
        if !c.pfc.is_empty() && c.pfc != base.pfc {
            notes.push(format!(
                "{} {p}: pfc_enable {:?} differs from the simulated {:?} (the scenario has one set of lossless classes)",
                sws[*s].name(),
                c.pfc,
                base.pfc
            ));
        }
        if c.tc_to_pg.0 != base_pg.0 {
            notes.push(format!("{} {p}: its TC -> PG map differs from the simulated one (one map for the fabric)", sws[*s].name()));
        }
        if c.tc_to_queue.0.iter().any(|(tc, q)| tc != q) {
            notes.push(format!("{} {p}: TC_TO_QUEUE_MAP is not the identity; the simulator queues each class in its own queue", sws[*s].name()));
        }
    }
}

/// Notes for profile values that differ from the base profile's (all but xoff, which a
/// fault sets per port).
fn profile_notes(sws: &[Switch], profiles: &PortProfiles, base: &Profile, notes: &mut Vec<String>) {
    for (s, p, pr) in profiles {
        let differs = pr.reserved.0 != base.reserved.0
            || pr.trigger.0 != base.trigger.0
            || pr.resume.as_ref().map(|r| r.0) != base.resume.as_ref().map(|r| r.0)
            || pr.pool.0 != base.pool.0;
        if differs {
            notes.push(format!(
                "{} {p}: profile {} differs from the simulated {} of {} beyond xoff (reserved, trigger, resume or pool): the fabric has one; {}'s is used",
                sws[*s].name(),
                pr.name,
                base.name,
                sws[base.switch].name(),
                base.name
            ));
        }
    }
}

/// `[roce]` and its sub-tables.
#[allow(clippy::too_many_arguments)]
fn write_roce(
    doc: &mut Doc,
    input: &Input,
    opts: &Options,
    classes: &[(usize, String, PortClasses)],
    base: &PortClasses,
    base_dscp: &classes::Map,
    base_pg: &classes::Map,
    dc: &dcqcn::Dcqcn,
    notes: &mut Vec<String>,
) -> Result<(), ReadError> {
    doc.section("[roce]");
    doc.value("mtu", &format!("\"{}B\"", opts.path_mtu.0), &Origin::Given("--path-mtu (the RoCE path MTU)".into()));
    let lossless = base.pfc.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    doc.value("lossless_priorities", &format!("[{lossless}]"), &base.pfc_origin);
    doc.value("cnp_dscp", &opts.cnp_dscp.to_string(), &Origin::Given("--cnp-dscp".into()));
    let nic_t = input.nics.iter().find_map(|(f, n)| n.timeout.map(|t| (t, f)));
    let (timeout, t_origin) = match (nic_t, opts.ib_timeout) {
        (Some((t, f)), _) => (t, Origin::Given(format!("{f} timeout"))),
        (None, Some(t)) => (t, Origin::Given("--ib-timeout".into())),
        (None, None) => (model::ib::NCCL_IB_TIMEOUT, Origin::Assumed("NCCL_IB_TIMEOUT's default".into())),
    };
    doc.value("timeout", &timeout.to_string(), &t_origin);
    let nic_r = input.nics.iter().find_map(|(f, n)| n.retry_cnt.map(|t| (t, f)));
    let (retry, r_origin) = match (nic_r, opts.retry_cnt) {
        (Some((r, f)), _) => (r, Origin::Given(format!("{f} retry_cnt"))),
        (None, Some(r)) => (r, Origin::Given("--retry-cnt".into())),
        (None, None) => (model::ib::NCCL_IB_RETRY_CNT, Origin::Assumed("NCCL_IB_RETRY_CNT's default".into())),
    };
    doc.value("retry_cnt", &retry.to_string(), &r_origin);
    doc.value("forwarding", "\"store-and-forward\"", &Origin::Assumed("config_db does not say; store-and-forward as plan roce --prove".into()));
    doc.value("switch_latency", "\"0ns\"", &Origin::Assumed("the ASIC's port-to-port latency is not in config_db: none, as plan roce --prove".into()));
    doc.value("reroute_delay", "\"1ms\"", &Origin::Assumed("the scenario format needs one with faults; only link faults use it and there are none".into()));
    doc.section("[roce.pfc]");
    doc.value("enabled", "true", &base.pfc_origin);
    doc.value("quanta", "65535", &Origin::Assumed("the largest pause time (IEEE 802.1Qbb), refreshed while congested".into()));
    doc.value("refresh", "\"auto\"", &Origin::Assumed("the simulator's refresh before the pause expires".into()));
    doc.value("response", "\"auto\"", &Origin::Assumed("IEEE 802.3 Table 31B-1 for the port speed".into()));
    doc.section("[roce.dcqcn]");
    doc.value("preset", &q(dc.preset.0), &dc.preset.1);
    for (field, v, o) in &dc.overrides {
        doc.value(field, v, o);
    }
    doc.section("[roce.dscp_to_tc]");
    let dscp_origin = base_dscp.1.clone().unwrap_or(Origin::Assumed("no DSCP_TO_TC_MAP: every DSCP in class 0".into()));
    for (d, tc) in &base_dscp.0 {
        doc.value(&d.to_string(), &tc.to_string(), &field_origin(&dscp_origin, &d.to_string()));
    }
    doc.section("[roce.tc_to_pg]");
    let pg_origin = base_pg.1.clone().unwrap_or(Origin::Assumed("no TC_TO_PRIORITY_GROUP_MAP: each lossless class its own PG".into()));
    let pg_map: Vec<(u8, u8)> =
        if base_pg.1.is_some() { base_pg.0.iter().map(|(a, b)| (*a, *b)).collect() } else { base.pfc.iter().map(|&p| (p as u8, p as u8)).collect() };
    for (tc, pg) in pg_map {
        doc.value(&tc.to_string(), &pg.to_string(), &field_origin(&pg_origin, &tc.to_string()));
    }
    write_ecn(doc, input, classes, base, notes)
}

/// A map entry's origin: the map's place with the entry's key as its field.
fn field_origin(map: &Origin, key: &str) -> Origin {
    match map {
        Origin::Config(p) => Origin::Config(super::config_db::Place { file: p.file.clone(), path: format!("{}|{key}", p.path) }),
        o => o.clone(),
    }
}

/// `[[roce.ecn]]` per lossless queue, from the WRED profile most of its ports use.
fn write_ecn(doc: &mut Doc, input: &Input, classes: &[(usize, String, PortClasses)], base: &PortClasses, notes: &mut Vec<String>) -> Result<(), ReadError> {
    for &qu in &base.pfc {
        let mut per_port = vec![];
        for (s, p, _) in classes.iter().filter(|(_, _, c)| c.pfc.contains(&qu)) {
            per_port.push((*s, p.clone(), classes::queue_ecn(&input.switches[*s], p, qu)?));
        }
        let key = |e: &Option<classes::Ecn>| e.as_ref().map(|e| (e.kmin.0, e.kmax.0, e.pmax_percent.0));
        let Some((_, _, chosen)) = most_common(&per_port, |(_, _, e)| key(e)) else { continue };
        for (s, p, e) in &per_port {
            if key(e) != key(chosen) {
                notes
                    .push(format!("{} {p}: queue {qu}'s ECN marking differs from the simulated one (one per queue for the fabric)", input.switches[*s].name()));
            }
        }
        let Some(e) = chosen else {
            notes.push(format!("queue {qu}: no WRED profile with ECN on most of its ports: no ECN marking simulated"));
            continue;
        };
        doc.section("[[roce.ecn]]");
        doc.value("queue", &qu.to_string(), &Origin::Given(format!("a lossless queue (pfc_enable {qu}; TC_TO_QUEUE_MAP identity)")));
        doc.value("kmin", &b(e.kmin.0), &e.kmin.1);
        doc.value("kmax", &b(e.kmax.0), &e.kmax.1);
        doc.value("pmax", &format!("{:?}", e.pmax_percent.0 as f64 / 100.0), &e.pmax_percent.1);
    }
    Ok(())
}

/// `[buffer]` from the base profile (see [`buffer`]'s doc for `total`).
fn write_buffer(doc: &mut Doc, p: &Profile, base: &PortClasses, base_pg: &classes::Map, cell: Bytes, nmax: u64, notes: &mut Vec<String>) {
    let cells = |x: u64| Bytes(x).cells(cell);
    let pgs: std::collections::BTreeSet<u8> =
        base.pfc.iter().map(|&tc| if base_pg.1.is_some() { base_pg.0.get(&(tc as u8)).copied().unwrap_or(0) } else { tc as u8 }).collect();
    let hdrm_total = match &p.pool_xoff {
        Some((x, _)) => cells(*x),
        None => cells(p.xoff.0) * pgs.len() as u64 * nmax,
    };
    let total_cells = cells(p.pool.0) + cells(p.reserved.0) * 8 * nmax + hdrm_total;
    doc.section("[buffer]");
    doc.value(
        "total",
        &b(total_cells * cell.0),
        &Origin::Given(format!(
            "the shared pool {} ({}) + 8 PGs x {nmax} ports x reserved + the headroom, so the simulator's shared part is the pool",
            p.pool.0,
            p.pool.1.text()
        )),
    );
    doc.value("cell", &b(cell.0), &Origin::Given("--cell (config_db has no cell size)".into()));
    let (dth, xoff) = match p.trigger.0 {
        Trigger::Dynamic(th) => {
            let c = th.clamp(-7, 3);
            if c != th {
                notes.push(format!("BUFFER_PROFILE|{}|dynamic_th {th} is outside the simulator's -7..3: simulated as {c}", p.name));
            }
            (c, "\"dynamic\"".to_string())
        }
        Trigger::Static(s) => (0, b(s)),
    };
    doc.value("dynamic_th", &dth.to_string(), &p.trigger.1);
    doc.value("reserved", &b(p.reserved.0), &p.reserved.1);
    notes.push(format!("every PG, lossless or not, is simulated with {}'s reserved {} B (the simulator has one reserve per PG)", p.name, p.reserved.0));
    doc.value("headroom", &b(p.xoff.0), &p.xoff.1);
    doc.value("xoff", &xoff, &p.trigger.1);
    match &p.resume {
        Some((Resume::Offset(o), orig)) => doc.value("xon_offset", &b(*o), orig),
        Some((Resume::Absolute(x), orig)) => doc.value("xon", &b(*x), orig),
        None => doc.value(
            "xon_offset",
            "\"auto\"",
            &Origin::Assumed(format!("BUFFER_PROFILE|{} has neither xon_offset nor xon: two frames below the trigger", p.name)),
        ),
    }
    if let Some((x, o)) = &p.pool_xoff {
        doc.value("shared_headroom_pool", &b(*x), o);
    }
}

/// `[[traffic]]`: the worst-case incast. Returns the receiver and senders.
fn write_traffic(doc: &mut Doc, fab: &Fabric, opts: &Options, so: &SimOptions) -> (String, Vec<String>) {
    let n = fab.hosts.len();
    let receiver = node_name(&fab.hosts[n - 1].name);
    let senders: Vec<String> = fab.hosts[..n - 1].iter().map(|h| node_name(&h.name)).collect();
    doc.section("[[traffic]]");
    doc.value("kind", "\"incast\"", &Origin::Given("the planner's worst case: every host but one to one host".into()));
    doc.value("receiver", &(n - 1).to_string(), &Origin::Given(format!("{receiver}, the last host (switch and port order)")));
    let list = (0..n - 1).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    doc.value("senders", &format!("[{list}]"), &Origin::Given(senders.join(", ")));
    doc.value("size", &b(so.incast_size.0), &Origin::Given("--simulate's incast size per sender".into()));
    doc.value("dscp", &opts.roce_dscp.to_string(), &Origin::Given("--roce-dscp".into()));
    (receiver, senders)
}

/// `[[faults]]` at t = 0 for what differs per port: headroom (xoff), DSCP map, PFC off.
fn write_faults(
    doc: &mut Doc,
    sws: &[Switch],
    fab: &Fabric,
    classes: &[(usize, String, PortClasses)],
    profiles: &PortProfiles,
    base: &Profile,
    base_dscp: &classes::Map,
) {
    let name = |s: usize, p: &str| format!("{}:{}", node_name(sws[s].name()), fab.ports[s].iter().position(|x| x == p).expect("a simulated port"));
    for (s, p, pr) in profiles {
        if pr.xoff.0 != base.xoff.0 {
            doc.section("[[faults]]");
            doc.value("kind", "\"misconfigured-port\"", &Origin::Given(format!("{} {p}: its own headroom (profile {})", sws[*s].name(), pr.name)));
            doc.value("port", &q(&name(*s, p)), &Origin::Given(format!("{} {p}", sws[*s].name())));
            doc.value("at", "\"0us\"", &Origin::Given("configured from the start".into()));
            doc.value("headroom", &b(pr.xoff.0), &pr.xoff.1);
        }
    }
    for (s, p, c) in classes {
        if c.pfc.is_empty() {
            doc.section("[[faults]]");
            doc.value("kind", "\"misconfigured-port\"", &Origin::Given(format!("{} {p}: a link port without pfc_enable", sws[*s].name())));
            doc.value("port", &q(&name(*s, p)), &Origin::Given(format!("{} {p}", sws[*s].name())));
            doc.value("at", "\"0us\"", &Origin::Given("configured from the start".into()));
            doc.value("pfc", "false", &c.pfc_origin);
        }
        if c.dscp_to_tc.0 != base_dscp.0 {
            let diff: Vec<String> = (0..64u8)
                .filter(|d| c.dscp_to_tc.0.get(d).copied().unwrap_or(0) != base_dscp.0.get(d).copied().unwrap_or(0))
                .map(|d| format!("{d} = {}", c.dscp_to_tc.0.get(&d).copied().unwrap_or(0)))
                .collect();
            doc.section("[[faults]]");
            doc.value("kind", "\"misconfigured-port\"", &Origin::Given(format!("{} {p}: its own DSCP map", sws[*s].name())));
            doc.value("port", &q(&name(*s, p)), &Origin::Given(format!("{} {p}", sws[*s].name())));
            doc.value("at", "\"0us\"", &Origin::Given("configured from the start".into()));
            let o = c.dscp_to_tc.1.clone().unwrap_or(Origin::Assumed("no DSCP_TO_TC_MAP on this port: every DSCP in class 0".into()));
            doc.value("dscp_to_tc", &format!("{{ {} }}", diff.join(", ")), &o);
        }
    }
}
