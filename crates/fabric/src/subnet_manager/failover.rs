//! Master and standby subnet managers (IBTA Vol. 1 §14.4: SM states, election, polling)
//! as state machines driven by simulated time.
//!
//! Every SM starts in Discovering: it sweeps the subnet and reads the SMInfo of every
//! other SM it finds. The SM with the highest priority wins, equal priorities going to
//! the lowest port GUID (OpenSM `osm_sm_is_greater_than`); a loser becomes Standby and
//! polls the winner's SMInfo every `polling_timeout`; the winner becomes Master and
//! configures the subnet (LIDs, routes, LFTs). A standby declares the master lost when
//! more than `polling_retries` polls in a row went unanswered (OpenSM
//! `osm_sm_state_mgr_polling_callback`: 5 unanswered polls with the defaults, so 50–60 s
//! after the master died), then sweeps again and, winning the election, takes over: it
//! keeps the LIDs it finds in PortInfo and computes routes from scratch (a new master
//! ignores existing LFTs on its first sweep, as OpenSM does).
//!
//! A master light-sweeps every `sweep_interval` (SubnGet SwitchInfo of every switch;
//! PortStateChange set → heavy sweep) and heavy-sweeps on a trap (switches send
//! Trap 128 on a link state change, IBTA Vol. 1 §14.2.5.1). Each heavy sweep reports its
//! steps timed in simulated time ([`super::SweepResult`]); the tables are written into
//! the agents at once, and [`SmEvent::Swept`] says when the last block would land.
//!
//! Left out: SM handover (a higher-priority SM appearing under a running master), the
//! master polling its standbys, SMInfo authentication (SM_Key), and the guid2lid
//! synchronisation between SMs.

use units::{SimDuration, SimTime};

use super::discovery;
use super::layout::IbLayout;
use super::mad::{Agents, Counted, SmInfo, SmState, Smi};
use super::{Master, SmConfig, SweepResult};
use crate::lft::Lft;
use crate::topology::{PortId, Topology};

/// What happened, with when.
#[derive(Clone, Debug)]
pub enum SmEvent {
    /// SM `sm` finished an election sweep and is master from `at`.
    BecameMaster { sm: usize, at: SimTime },
    /// SM `sm` lost the election to the SM with port GUID `master`.
    BecameStandby { sm: usize, master: u64, at: SimTime },
    /// Standby `sm` declared its master lost.
    MasterLost { sm: usize, at: SimTime },
    /// Master `sm` swept and programmed the subnet; the last LFT block lands at `done`.
    Swept { sm: usize, start: SimTime, done: SimTime, result: Box<SweepResult> },
}

/// One subnet manager.
#[derive(Clone, Debug)]
pub struct SmInstance {
    /// IB node and port it runs on (port 0 on a switch).
    pub node: u32,
    pub port: u8,
    /// Its port GUID (SMInfo.GUID).
    pub guid: u64,
    pub priority: u8,
    pub state: SmState,
    pub cfg: SmConfig,
    pub master: Master,
    pub alive: bool,
    /// The master it polls: directed route and port GUID.
    polling: Option<(Vec<u8>, u64)>,
    retries: u32,
    next: Option<SimTime>,
    trap: Option<SimTime>,
    act_count: u32,
    /// Sweeps done as master (the first ignores existing routes).
    sweeps: u32,
}

fn greater(a: (u8, u64), b: (u8, u64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
}

impl SmInstance {
    pub fn new(node: u32, port: u8, guid: u64, priority: u8, cfg: SmConfig, start: SimTime) -> SmInstance {
        SmInstance {
            node,
            port,
            guid,
            priority: priority.min(15),
            state: SmState::Discovering,
            cfg,
            master: Master::default(),
            alive: true,
            polling: None,
            retries: 0,
            next: Some(start),
            trap: None,
            act_count: 0,
            sweeps: 0,
        }
    }

    pub fn info(&self) -> SmInfo {
        SmInfo { guid: self.guid, priority: self.priority, state: self.state, act_count: self.act_count }
    }

    /// When this SM next wants [`SmInstance::on_timer`].
    pub fn next_timer(&self) -> Option<SimTime> {
        if !self.alive {
            return None;
        }
        match (self.next, self.trap) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A trap reached this SM at `at` (only a master acts on it).
    pub fn on_trap(&mut self, at: SimTime) {
        if self.alive && self.state == SmState::Master {
            self.trap = Some(self.trap.map_or(at, |t| t.min(at)));
        }
    }

    /// Runs whatever is due at `now`; `agents` is the fabric as seen from this SM's port.
    /// By state: discover and elect (`discover_and_elect`), poll the master as a standby
    /// (`poll_master`; after too many failed polls, the master is lost and this SM
    /// discovers and elects again at once), or sweep as master (`master_sweep`).
    pub fn on_timer(&mut self, now: SimTime, id: usize, agents: &mut Agents) -> Vec<SmEvent> {
        let mut ev = vec![];
        if !self.alive || self.next_timer().is_none_or(|t| t > now) {
            return ev;
        }
        match self.state {
            SmState::Discovering | SmState::NotActive => self.discover_and_elect(now, id, agents, &mut ev),
            SmState::Standby => {
                if self.retries > self.cfg.timing.polling_retries {
                    // Master lost: sweep and elect again, now.
                    self.state = SmState::Discovering;
                    self.polling = None;
                    ev.push(SmEvent::MasterLost { sm: id, at: now });
                    self.next = Some(now);
                    agents.publish_sm(self.node, self.port, Some(self.info()));
                    ev.extend(self.on_timer(now, id, agents));
                    return ev;
                }
                self.poll_master(now, agents);
            }
            SmState::Master => self.master_sweep(now, id, agents, &mut ev),
        }
        agents.publish_sm(self.node, self.port, Some(self.info()));
        ev
    }

    /// Discovers the subnet and holds the election among the SMs that answered (IBTA
    /// Vol. 1 §14.4.1.1): a better one makes this SM a standby that polls it; else this SM
    /// becomes master and configures the subnet.
    fn discover_and_elect(&mut self, now: SimTime, id: usize, agents: &mut Agents, ev: &mut Vec<SmEvent>) {
        let tm = self.cfg.timing;
        let mut smi = agents.at(self.node, self.port);
        let sub = discovery::discover(&mut smi, self.port);
        let swept = tm.smps_time(sub.smps.total(), sub.depth + 1);
        let best = sub.sms.iter().filter(|s| s.2.state != SmState::NotActive).max_by(|a, b| {
            if greater((a.2.priority, a.2.guid), (b.2.priority, b.2.guid)) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Less
            }
        });
        match best {
            Some(b) if greater((b.2.priority, b.2.guid), (self.priority, self.guid)) => {
                self.state = SmState::Standby;
                self.polling = Some((discovery::route_to_port(&sub, b.0, b.1), b.2.guid));
                self.retries = 0;
                self.next = Some(now + swept + tm.polling_timeout);
                ev.push(SmEvent::BecameStandby { sm: id, master: b.2.guid, at: now + swept });
            }
            _ => {
                self.state = SmState::Master;
                self.act_count += 1;
                agents.publish_sm(self.node, self.port, Some(self.info()));
                ev.push(SmEvent::BecameMaster { sm: id, at: now + swept });
                let mut smi = agents.at(self.node, self.port);
                let r = self.master.configure(&mut smi, sub, &self.cfg, SimDuration::ZERO, false);
                self.sweeps += 1;
                let done = now + r.total;
                self.next = Some(done + tm.sweep_interval);
                self.trap = None;
                ev.push(SmEvent::Swept { sm: id, start: now, done, result: Box::new(r) });
            }
        }
    }

    /// A standby polls its master's SMInfo; a failed poll counts a retry.
    fn poll_master(&mut self, now: SimTime, agents: &mut Agents) {
        let (path, _) = self.polling.clone().expect("a standby polls a master");
        let mut smi = agents.at(self.node, self.port);
        let mut c = Counted::new(&mut smi);
        match c.sm_info(&path) {
            Ok(_) => self.retries = 0,
            Err(_) => self.retries += 1,
        }
        self.next = Some(now + self.cfg.timing.polling_timeout);
    }

    /// The master's periodic sweep: a light sweep (every known switch's
    /// SwitchInfo.PortStateChange) unless a trap arrived; a heavy sweep when either says
    /// something changed.
    fn master_sweep(&mut self, now: SimTime, id: usize, agents: &mut Agents, ev: &mut Vec<SmEvent>) {
        let tm = self.cfg.timing;
        let trapped = self.trap.is_some_and(|t| t <= now);
        let mut heavy = trapped;
        let mut detect = SimDuration::ZERO;
        if !trapped {
            // Light sweep: SwitchInfo.PortStateChange of every known switch.
            let st = self.master.state.as_ref();
            let paths: Vec<Vec<u8>> = st.map(|s| s.subnet.nodes.iter().filter(|n| n.switch).map(|n| n.path.clone()).collect()).unwrap_or_default();
            let mut smi = agents.at(self.node, self.port);
            let mut c = Counted::new(&mut smi);
            for p in &paths {
                match c.switch_info(p) {
                    Ok(si) if !si.port_state_change => {}
                    _ => heavy = true,
                }
            }
            detect = tm.smps_time(c.counts.total(), 0);
        }
        if heavy {
            let mut smi = agents.at(self.node, self.port);
            let r = self.master.sweep(&mut smi, self.port, &self.cfg, detect, self.sweeps > 0);
            self.sweeps += 1;
            let done = now + r.total;
            ev.push(SmEvent::Swept { sm: id, start: now, done, result: Box::new(r) });
            self.next = Some(done + tm.sweep_interval);
        } else {
            self.next = Some(now + tm.sweep_interval);
        }
        self.trap = None;
    }
}

/// Several SMs on one fabric, and the fabric's failures.
pub struct SmCluster {
    pub agents: Agents,
    pub sms: Vec<SmInstance>,
}

impl SmCluster {
    /// SMs at IB (node, port) with priorities, all starting at `start`.
    pub fn new(topo: Topology, layout: IbLayout, sms: &[(u32, u8, u8)], cfg: SmConfig, start: SimTime) -> SmCluster {
        let mut agents = Agents::new(topo, layout);
        let sms: Vec<SmInstance> = sms
            .iter()
            .map(|&(node, port, prio)| {
                let guid = agents.layout.nodes[node as usize].port_guids[port as usize];
                SmInstance::new(node, port, guid, prio, cfg.clone(), start)
            })
            .collect();
        for s in &sms {
            agents.publish_sm(s.node, s.port, Some(s.info()));
        }
        SmCluster { agents, sms }
    }

    pub fn next_timer(&self) -> Option<SimTime> {
        self.sms.iter().filter_map(|s| s.next_timer()).min()
    }

    /// Runs every SM whose timer is due at `now`, lowest index first.
    pub fn on_timer(&mut self, now: SimTime) -> Vec<SmEvent> {
        let mut ev = vec![];
        for i in 0..self.sms.len() {
            if self.sms[i].next_timer().is_some_and(|t| t <= now) {
                let sm = &mut self.sms[i];
                ev.extend(sm.on_timer(now, i, &mut self.agents));
            }
        }
        ev
    }

    /// Runs all timers up to and including `until`; returns the events in time order.
    pub fn run_until(&mut self, until: SimTime) -> Vec<(SimTime, SmEvent)> {
        let mut out = vec![];
        while let Some(t) = self.next_timer() {
            if t > until {
                break;
            }
            out.extend(self.on_timer(t).into_iter().map(|e| (t, e)));
        }
        out
    }

    /// The master, if there is one.
    pub fn master(&self) -> Option<usize> {
        self.sms.iter().position(|s| s.alive && s.state == SmState::Master)
    }

    /// A link goes down at `now`: both switch ends trap to the master (if traps are on
    /// and the master can still be reached, which the model assumes).
    pub fn fail_link(&mut self, now: SimTime, p: PortId) {
        self.agents.set_port_up(p, false);
        if let Some(m) = self.master() {
            let tm = self.sms[m].cfg.timing;
            if tm.traps {
                self.sms[m].on_trap(now + tm.trap_delay());
            }
        }
    }

    /// IB node `node` dies at `now` (an SM on it dies too); its links go down and the
    /// neighbouring switches trap.
    pub fn kill_node(&mut self, now: SimTime, node: u32) {
        self.agents.set_node_alive(node, false);
        for s in self.sms.iter_mut().filter(|s| s.node == node) {
            s.alive = false;
        }
        let dead: Vec<(u32, u8)> = self.sms.iter().filter(|s| !s.alive).map(|s| (s.node, s.port)).collect();
        for (n, p) in dead {
            self.agents.publish_sm(n, p, None);
        }
        if let Some(m) = self.master() {
            let tm = self.sms[m].cfg.timing;
            if tm.traps {
                self.sms[m].on_trap(now + tm.trap_delay());
            }
        }
    }

    /// The data-plane forwarding table as currently programmed.
    pub fn lft(&self) -> Lft {
        self.agents.data_plane_lft(0)
    }
}
