//! `[[traffic]]` compiled into flows: incasts, permutations, all-to-all, single messages,
//! Poisson background from a flow-size CDF, and collective jobs (NCCL's algorithms as
//! dependency graphs of transfers, placed on hosts by [`crate::driver`], SHARP trees from
//! [`crate::sharp`], kept as jobs to generate in the [`FlowList`]).
//!
//! Owns host numbering (a host's rail-0 NIC), each entry's class (a DSCP on RoCE, an SL
//! on InfiniBand), the random streams traffic draws from and the label each entry gets in
//! reports. Leaves out how collectives decompose into transfers (`workload`) and how the
//! simulator runs flows (`fabric::sim`).

use std::collections::BTreeSet;

use fabric::params::{FlowSource, FlowSpec, Tech};
use fabric::topology::{NodeKind, Topology};
use units::{Bytes, SimDuration, SimTime};
use workload::{Algorithm, Collective};

use crate::error::{ConfigError, Ctx};
use crate::estimate::MAX_MESSAGE;
use crate::flow_list::FlowList;
use crate::schema::{CollectiveCfg, ScenarioFile, Traffic};

/// A collective job as compiled: what it is and which flows carry it.
#[derive(Clone, Debug)]
pub struct Job {
    /// Index of its `[[traffic]]` entry.
    pub group: u32,
    pub op: workload::Collective,
    pub algorithm: workload::Algorithm,
    pub ranks: u32,
    pub size: u64,
    pub channels: u32,
    pub chunk: u64,
    pub start: SimTime,
    /// The barrier flow closing each iteration.
    pub iteration_ends: Vec<u32>,
    /// Endpoint of each rank.
    pub endpoints: Vec<u32>,
    /// Bytes the busiest rank's link carries per iteration in one direction (the most a
    /// rank sends or receives): with busbw's meaning of "bus", S × 2(n−1)/n for ring,
    /// S for SHARP.
    pub rank_link_bytes: u64,
}

/// Every entry's flows (a flow's `group` is its entry's index) and the collective jobs.
pub(crate) fn compile(c: &Ctx, cfg: &ScenarioFile, topo: &Topology, tech: Tech) -> Result<(FlowList, Vec<Job>), ConfigError> {
    // Rail-0 NIC of each host.
    let mut ep_of_host = vec![u32::MAX; topo.hosts as usize];
    for (ep, &n) in topo.endpoints.iter().enumerate() {
        if let NodeKind::Nic { host, rail: 0, .. } = topo.node(n).kind {
            ep_of_host[host as usize] = ep as u32;
        }
    }
    let mut list = FlowList::default();
    let mut jobs = vec![];
    let mut rng = engine::Rng::new(cfg.scenario.seed, engine::stream::PERMUTATION);
    let mut place_rng = engine::Rng::new(cfg.scenario.seed, engine::stream::PLACEMENT);
    for (g, t) in cfg.traffic.iter().enumerate() {
        // This entry's flows, when they are held as specs.
        let mut flows = vec![];
        let e = Entry { c, f: format!("traffic[{g}]"), g: g as u32, tech, topo, ep_of_host: &ep_of_host, seed: cfg.scenario.seed };
        match t {
            Traffic::Collective(j) => jobs.push(e.collective(j, &mut place_rng, &mut list)?),
            Traffic::Background { .. } => e.background(t, &mut flows)?,
            Traffic::Incast { receiver, senders, size, start, stagger, dscp, sl } => {
                e.message_size(*size)?;
                let d = e.host(*receiver, "receiver")?;
                let class = e.class(dscp, sl)?;
                if senders.is_empty() {
                    return Err(c.err(&format!("{}.senders", e.f), "expected at least one sender"));
                }
                for (i, &s) in senders.iter().enumerate() {
                    if s == *receiver {
                        return Err(c.err(&format!("{}.senders", e.f), format!("host {s} is also the receiver")));
                    }
                    let (t0, gap) = (start.unwrap_or_default().ps(), stagger.unwrap_or_default().ps());
                    let st = gap.checked_mul(i as u64).and_then(|x| x.checked_add(t0)).ok_or_else(|| {
                        let last = SimTime(u64::MAX);
                        c.err(&format!("{}.stagger", e.f), format!("sender {i} would start at start + {i} × stagger, after the last time there is, {last}"))
                    })?;
                    flows.push(e.flow(e.host(s, "senders")?, d, *size, SimDuration(st), class));
                }
            }
            Traffic::Permutation { size, start, dscp, sl } => {
                e.message_size(*size)?;
                let class = e.class(dscp, sl)?;
                if topo.hosts < 2 {
                    return Err(c.err(&e.f, "a permutation needs at least 2 hosts"));
                }
                // A random derangement: shuffle until no host maps to itself (Sattolo's
                // algorithm gives a single cycle, a derangement in one pass).
                let mut perm: Vec<u32> = (0..topo.hosts).collect();
                for i in (1..topo.hosts as usize).rev() {
                    let j = rng.below(i as u64) as usize;
                    perm.swap(i, j);
                }
                for (s, &d) in perm.iter().enumerate() {
                    flows.push(e.flow(e.host(s as u32, "src")?, e.host(d, "dst")?, *size, start.unwrap_or_default(), class));
                }
            }
            Traffic::AllToAll { size, start, dscp, sl } => {
                e.message_size(*size)?;
                let class = e.class(dscp, sl)?;
                for s in 0..topo.hosts {
                    for d in (0..topo.hosts).filter(|&d| d != s) {
                        flows.push(e.flow(e.host(s, "src")?, e.host(d, "dst")?, *size, start.unwrap_or_default(), class));
                    }
                }
            }
            Traffic::Message { src, dst, size, at, dscp, sl } => {
                e.message_size(*size)?;
                if src == dst {
                    return Err(c.err(&format!("{}.dst", e.f), "source and destination are the same host"));
                }
                let class = e.class(dscp, sl)?;
                flows.push(e.flow(e.host(*src, "src")?, e.host(*dst, "dst")?, *size, *at, class));
            }
        }
        if !matches!(t, Traffic::Collective(_)) {
            list.push_specs(g as u32, flows);
        }
    }
    if list.is_empty() && cfg.scenario.stop_time.is_none() {
        return Err(c.err("traffic", "no traffic and no scenario.stop_time: nothing would ever happen"));
    }
    Ok((list, jobs))
}

/// The label of each `[[traffic]]` entry in reports, e.g. "incast", "background".
pub(crate) fn kinds(traffic: &[Traffic]) -> Vec<String> {
    traffic
        .iter()
        .map(|t| match t {
            Traffic::Incast { .. } => "incast".to_string(),
            Traffic::Permutation { .. } => "permutation".into(),
            Traffic::AllToAll { .. } => "all-to-all".into(),
            Traffic::Message { .. } => "message".into(),
            Traffic::Collective(j) => format!("collective {}", j.op),
            Traffic::Background { cdf, load, .. } => {
                let name = std::path::Path::new(cdf).file_stem().map_or(cdf.clone(), |s| s.to_string_lossy().into_owned());
                format!("background {name} at load {load}")
            }
        })
        .collect()
}

/// The `[[traffic]]` entry being compiled, and what its flows are numbered against.
struct Entry<'a> {
    c: &'a Ctx<'a>,
    /// Its field path, `traffic[g]`.
    f: String,
    g: u32,
    tech: Tech,
    topo: &'a Topology,
    ep_of_host: &'a [u32],
    seed: u64,
}

impl Entry<'_> {
    /// Host `h`'s rail-0 NIC (endpoint).
    fn host(&self, h: u32, field: &str) -> Result<u32, ConfigError> {
        if h >= self.topo.hosts {
            return Err(self
                .c
                .err(&format!("{}.{field}", self.f), format!("host {h} does not exist (the topology has {} hosts, numbered from 0)", self.topo.hosts)));
        }
        Ok(self.ep_of_host[h as usize])
    }

    /// The class: a DSCP on RoCE, a service level on InfiniBand; the other may be given
    /// too (so one file runs on both) and is then ignored.
    fn class(&self, dscp: &Option<u8>, sl: &Option<u8>) -> Result<(u8, u8), ConfigError> {
        let f = &self.f;
        match self.tech {
            Tech::Roce => match *dscp {
                Some(d) if d < 64 => Ok((d, 0)),
                Some(_) => Err(self.c.err(&format!("{f}.dscp"), "expected a DSCP value 0..63")),
                None => Err(self.c.err(&format!("{f}.dscp"), "RoCE traffic needs a `dscp` (its traffic class)")),
            },
            Tech::Infiniband => match *sl {
                Some(s) if s < 15 => Ok((0, s)),
                Some(_) => Err(self.c.err(&format!("{f}.sl"), "expected a data service level 0..14")),
                None => Err(self.c.err(&format!("{f}.sl"), "InfiniBand traffic needs an `sl` (its service level)")),
            },
        }
    }

    /// An RDMA message's size is at most [`MAX_MESSAGE`].
    fn message_size(&self, size: Bytes) -> Result<(), ConfigError> {
        self.message_field_size("size", size)
    }

    fn message_field_size(&self, field: &str, size: Bytes) -> Result<(), ConfigError> {
        if size.0 > MAX_MESSAGE {
            return Err(self.c.err(
                &format!("{}.{field}", self.f),
                format!("{size} is above the largest RDMA message, 2^31 bytes (2.147GB); send it as several messages or a collective"),
            ));
        }
        Ok(())
    }

    /// One RDMA WRITE of this entry.
    fn flow(&self, src: u32, dst: u32, size: Bytes, start: SimDuration, (dscp, sl): (u8, u8)) -> FlowSpec {
        FlowSpec::new(src, dst, size, SimTime(start.ps()), dscp, sl, self.g)
    }

    /// Poisson background: flows arrive at each member host at the offered load of the
    /// slowest member's link, sizes drawn from the CDF file.
    fn background(&self, t: &Traffic, flows: &mut Vec<FlowSpec>) -> Result<(), ConfigError> {
        let Traffic::Background { cdf, load, hosts: which, start, duration, dscp, sl } = t else { unreachable!("a background entry") };
        let (c, f) = (self.c, &self.f);
        let class = self.class(dscp, sl)?;
        let path = c.base.join(cdf);
        let text = std::fs::read_to_string(&path).map_err(|e| c.err(&format!("{f}.cdf"), format!("cannot read {}: {e}", path.display())))?;
        let dist = workload::flowsize::Cdf::parse(&text).map_err(|e| c.err(&format!("{f}.cdf"), format!("{}: {e}", path.display())))?;
        // Each drawn flow is one RDMA message, like every other entry's.
        if dist.largest() > MAX_MESSAGE {
            return Err(c.err(
                &format!("{f}.cdf"),
                format!("{}: its largest flow, {}, is above the largest RDMA message, 2^31 bytes (2.147GB)", path.display(), Bytes(dist.largest())),
            ));
        }
        if !(*load > 0.0 && *load <= 1.0) {
            return Err(c.err(&format!("{f}.load"), format!("expected a fraction of the link rate in (0, 1], got {load}")));
        }
        if duration.ps() == 0 {
            return Err(c.err(&format!("{f}.duration"), "expected a positive time"));
        }
        let members: Vec<u32> = match which {
            Some(h) => {
                for &x in h {
                    self.host(x, "hosts")?;
                }
                h.clone()
            }
            None => (0..self.topo.hosts).collect(),
        };
        if members.len() < 2 {
            return Err(c.err(&format!("{f}.hosts"), "background traffic needs at least 2 hosts"));
        }
        let eps: Vec<u32> = members.iter().map(|&h| self.ep_of_host[h as usize]).collect();
        let rate = eps.iter().map(|&e| self.topo.port(self.topo.ep_port(e)).rate.0).min().unwrap_or(0);
        let mut bg = engine::Rng::new(self.seed, engine::stream::BACKGROUND + self.g as u64);
        let t0 = start.unwrap_or_default();
        if t0.ps().checked_add(duration.ps()).is_none() {
            return Err(c.err(&format!("{f}.duration"), format!("start {t0} + duration {duration} ends after the last time there is, {}", SimTime(u64::MAX))));
        }
        for a in workload::flowsize::poisson(&dist, eps.len() as u32, *load, rate, duration.ps(), &mut || bg.f64()) {
            flows.push(self.flow(eps[a.src as usize], eps[a.dst as usize], Bytes(a.bytes), t0 + SimDuration(a.at_ps), class));
        }
        Ok(())
    }

    /// A collective job: its ranks placed on the hosts, its transfers appended to
    /// `flows` as a job to generate (generated once here, for its byte counts).
    fn collective(&self, j: &CollectiveCfg, rng: &mut engine::Rng, flows: &mut FlowList) -> Result<Job, ConfigError> {
        let (c, f, topo, group) = (self.c, self.f.as_str(), self.topo, self.g);
        let (dscp, sl) = self.class(&j.dscp, &j.sl)?;
        let op = Collective::parse(&j.op).ok_or_else(|| {
            c.err(&format!("{f}.op"), format!("unknown collective `{}`; expected all-reduce, all-gather, reduce-scatter, broadcast or all-to-all", j.op))
        })?;
        let algorithm = match j.algorithm.as_deref() {
            None | Some("ring") => Algorithm::Ring,
            Some("tree") => Algorithm::Tree,
            Some("sharp") => Algorithm::Sharp,
            Some(o) => return Err(c.err(&format!("{f}.algorithm"), format!("unknown algorithm `{o}`; expected \"ring\", \"tree\" or \"sharp\""))),
        };
        let hosts = self.job_hosts(j)?;
        let placement = match j.placement.as_deref() {
            None => crate::driver::Placement::Linear,
            Some(p) => crate::driver::Placement::parse(p)
                .ok_or_else(|| c.err(&format!("{f}.placement"), format!("unknown placement `{p}`; expected \"linear\", \"rail-aligned\" or \"random\"")))?,
        };
        let slots = crate::driver::host_nics(topo, &hosts).iter().map(|v| v.len() as u32).sum::<u32>();
        let ranks = j.ranks.unwrap_or(slots);
        let eps = crate::driver::place(topo, &hosts, ranks, placement, rng).map_err(|e| c.err(&format!("{f}.ranks"), e))?;
        let mut spec = workload::Spec::new(op, algorithm, ranks, j.size.0);
        spec.channels = j.channels.unwrap_or(spec.channels);
        spec.chunk = j.chunk.map_or(spec.chunk, |b| b.0);
        self.message_field_size("chunk", Bytes(spec.chunk))?;
        spec.window = j.window.unwrap_or(spec.window);
        spec.root = j.root.unwrap_or(spec.root);
        spec.iterations = j.iterations.unwrap_or(spec.iterations);
        // SHARP: the aggregation manager's tree over the switches above the placed ranks;
        // its aggregation vertices run on those switches' aggregation nodes.
        let mut vertices = eps.clone();
        if algorithm == Algorithm::Sharp && op == Collective::AllReduce && ranks >= 2 {
            let jt = crate::sharp::job_tree(topo, &eps).map_err(|e| c.err(&format!("{f}.algorithm"), e))?;
            spec.tree = Some(jt.tree);
            vertices = jt.endpoints;
        }
        // What busbw's "bus" counts, counted as the graph is generated.
        let mut bytes = workload::RankBytes::new(ranks);
        let shape = workload::generate(&spec, &mut |n| bytes.count(n)).map_err(|e| c.err(f, e))?;
        let rank_link_bytes = bytes.sent.iter().chain(&bytes.received).copied().max().unwrap_or(0) / spec.iterations as u64;
        let start = SimTime(j.start.unwrap_or_default().ps());
        let (size, channels, chunk) = (spec.size, spec.channels, spec.chunk);
        let first = flows.push_collective(group, spec, vertices, start, (dscp, sl), &shape);
        Ok(Job {
            group,
            op,
            algorithm,
            ranks,
            size,
            channels,
            chunk,
            start,
            iteration_ends: shape.iteration_ends.iter().map(|&i| first + i).collect(),
            endpoints: eps,
            rank_link_bytes,
        })
    }

    /// The job's hosts (default: all), each once.
    fn job_hosts(&self, j: &CollectiveCfg) -> Result<Vec<u32>, ConfigError> {
        Ok(match &j.hosts {
            Some(h) => {
                let mut seen = BTreeSet::new();
                for &x in h {
                    if x >= self.topo.hosts {
                        return Err(self.c.err(
                            &format!("{}.hosts", self.f),
                            format!("host {x} does not exist (the topology has {} hosts, numbered from 0)", self.topo.hosts),
                        ));
                    }
                    if !seen.insert(x) {
                        return Err(self.c.err(&format!("{}.hosts", self.f), format!("host {x} is listed twice")));
                    }
                }
                h.clone()
            }
            None => (0..self.topo.hosts).collect(),
        })
    }
}
