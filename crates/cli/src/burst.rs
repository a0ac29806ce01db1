//! `fabriclab burst`: the microburst buffer planner (see `plan::burst` for the model and
//! its sources). `--prove` builds a one-leaf scenario (N hosts → 1 host on the same leaf,
//! an `incast` at t = 0 with no stagger, ECN and DCQCN off), simulates it and prints the
//! analytical and simulated numbers side by side. An error names the flag (exit code 2).
//! The flags and the `--json` document are `plan::args::burst` (`fabriclab serve` answers
//! with the same code).

use std::process::ExitCode;

pub use plan::args::burst::BurstArgs;
use plan::args::burst::{json_value, planned};
use plan::burst::{self as b, Beyond, BurstInput, BurstPlan, Class};
use units::{BitRate, SimDuration};

use crate::prove::LOSSLESS_TC;

/// What the simulation of the burst showed.
#[derive(serde::Serialize, Debug, Clone)]
pub struct Simulated {
    pub peak_queue_frame_bytes: u64,
    pub last_flow_done_ps: u64,
    pub drops: u64,
    pub drop_bytes: u64,
    pub pfc_frames: u64,
    /// Mean over the senders' NIC ports of the time paused on the burst's priority.
    pub paused_per_sender_ps: u64,
    /// The egress queue towards the receiver and the senders paused, sampled over the
    /// burst (`SERIES_POINTS` samples up to the analytical last byte, then on at that
    /// period to the end; the simulator's sampler, `fabric::sim::observe`).
    pub series: Vec<SimSample>,
    pub scenario: String,
}

/// One sample of the simulated burst.
#[derive(serde::Serialize, Debug, Clone)]
pub struct SimSample {
    pub t_ps: u64,
    /// Frame bytes queued at the leaf's port towards the receiver.
    pub queue_frame_bytes: u64,
    /// Senders whose NIC is paused on the burst's priority (`LOSSLESS_TC`) at that instant.
    pub senders_paused: u32,
}

/// Samples over the analytical duration of the burst: enough to draw it, few enough to
/// keep `--json` small.
const SERIES_POINTS: u64 = 200;

/// The scenario `--prove` simulates: hosts 1..=N and receiver 0 on one leaf; the shared
/// pool of the leaf equals S (the simulator subtracts reserved and headroom from `total`).
pub fn scenario(i: &BurstInput, p: &BurstPlan) -> String {
    let n = i.senders as u64;
    let nports = n + 1; // the hosts
    let c = i.cell.0;
    // The `auto` headroom of the faster of the two port speeds over the 3 m cables (the
    // same formula as the simulator's `headroom = "auto"`, dynamic trigger).
    let frame = model::frame::roce_frame(model::frame::Encap { vlan: false, ipv6: false }, model::frame::Transport::WriteFirst, i.mtu);
    let cable = units::propagation(units::Length::from_m(3), units::DEFAULT_PROPAGATION_PS_PER_M);
    let headroom_cells = [i.in_speed, i.out_speed]
        .iter()
        .map(|&r| scenario::auto_headroom(r, cable, frame, None, units::SimDuration::ZERO, i.cell, true).cells)
        .max()
        .unwrap_or(0);
    let total_cells = p.shared_cells + nports * (8 * p.reserved_cells + headroom_cells);
    let senders: Vec<String> = (1..=n).map(|h| h.to_string()).collect();
    let dscp = if i.class == Class::Lossless { 26 } else { 0 };
    let speed = |r: BitRate| format!("{}Mbps", r.0 / 1_000_000);
    // Every sender link runs at R_in, the receiver's at R_out.
    let mut links = String::new();
    for h in 0..=n {
        let s = if h == 0 { i.out_speed } else { i.in_speed };
        links.push_str(&format!("  {{ a = \"h{h}\", b = \"leaf:{}\", speed = \"{}\", cable = \"3m\" }},\n", h, speed(s)));
    }
    let nodes: Vec<String> = (0..=n).map(|h| format!("  {{ name = \"h{h}\", kind = \"host\" }},")).collect();
    format!(
        r#"[scenario]
name = "burst-prove"
seed = 1

[topology]
kind = "explicit"
nodes = [
{nodes}
  {{ name = "leaf", kind = "switch", ports = {ports} }},
]
links = [
{links}]

{sections}
[output]
sample_period = "{period}ps"

[[traffic]]
kind = "incast"
receiver = 0
senders = [{senders}]
size = "{size}B"
stagger = "0ns"
dscp = {dscp}
"#,
        nodes = nodes.join("\n"),
        ports = n + 1,
        sections = crate::prove::PfcOnly {
            mtu: i.mtu.0,
            timeout: 10,
            total: total_cells * c,
            cell: c,
            dynamic_th: i.dynamic_th,
            reserved: p.reserved_cells * c,
            headroom: headroom_cells * c,
            xoff: "dynamic",
            xon_offset: p.xon_offset_cells * c,
            ack_every: None,
        }
        .sections(),
        senders = senders.join(", "),
        size = i.burst.0,
        period = sample_period_ps(p),
    )
}

/// The sampling period of the proof: the analytical last byte over `SERIES_POINTS`, in
/// whole nanoseconds, at least 1 ns.
fn sample_period_ps(p: &BurstPlan) -> u64 {
    (p.last_byte_out_ps / SERIES_POINTS / 1000).max(1) * 1000
}

/// The simulated series: the leaf's port towards the receiver (h0) and the senders' NIC
/// ports, read from the sampler.
fn series(w: &scenario::World, st: &fabric::stats::Stats) -> Vec<SimSample> {
    let t = &w.topo;
    let name = |pid: usize| t.node(t.ports[pid].node).name.as_str();
    let to_receiver = (0..t.ports.len()).find(|&pid| name(pid) == "leaf" && t.ports[pid].peer.is_some_and(|q| name(q.index()) == "h0"));
    let senders: Vec<usize> = (0..t.ports.len()).filter(|&pid| !matches!(name(pid), "leaf" | "h0")).collect();
    let Some(rx) = to_receiver else { return vec![] };
    st.samples
        .iter()
        .map(|smp| SimSample {
            t_ps: smp.t,
            queue_frame_bytes: smp.queue[rx],
            senders_paused: senders.iter().filter(|&&pid| smp.paused[pid] & (1 << LOSSLESS_TC) != 0).count() as u32,
        })
        .collect()
}

/// Simulates the burst (`--prove`).
pub fn simulate(i: &BurstInput, p: &BurstPlan) -> Result<Simulated, String> {
    let src = scenario(i, p);
    let world = scenario::load_str("burst-prove.toml", &src).map_err(|e| format!("--prove: the generated scenario: {e}"))?;
    let (sim, r) = report::run_watched(&world, true, &mut crate::progress::CancelOnly);
    if r.incomplete.is_some() {
        return Err("--prove: cancelled (Ctrl-C)".into());
    }
    let rx_port = r
        .ports
        .iter()
        .filter(|pt| pt.node == "leaf" && pt.peer.starts_with("h0"))
        .max_by_key(|pt| pt.max_queue_bytes)
        .ok_or("--prove: no leaf port towards the receiver")?;
    let last = r.flow_records.iter().filter_map(|f| f.fct_ps.map(|t| f.start_ps + t)).max().unwrap_or(r.end_ps);
    let n = i.senders as u64;
    let paused: u64 = r.ports.iter().filter(|pt| pt.node != "leaf" && pt.node != "h0" && pt.node.starts_with('h')).map(|pt| pt.paused_ps[LOSSLESS_TC]).sum();
    Ok(Simulated {
        peak_queue_frame_bytes: rx_port.max_queue_bytes,
        last_flow_done_ps: last,
        drops: r.totals.drops,
        drop_bytes: r.ports.iter().map(|pt| pt.drops.iter().map(|d| d.1).sum::<u64>()).sum(),
        pfc_frames: r.totals.pfc_frames,
        paused_per_sender_ps: paused / n.max(1),
        series: series(&world, &sim.stats),
        scenario: src,
    })
}

fn us(ps: u64) -> String {
    format!("{:.3} us", SimDuration(ps).as_us_f64())
}

fn kib(b: u64) -> String {
    format!("{b} B ({:.1} KiB)", b as f64 / 1024.0)
}

pub fn run(a: BurstArgs) -> ExitCode {
    let (i, p) = match planned(&a) {
        Ok(ip) => ip,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let sim = if a.prove {
        match simulate(&i, &p) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        None
    };
    if a.json {
        let mut v = json_value(&a, &i, &p);
        if let Some(s) = &sim {
            v["simulated"] = serde_json::json!(s);
        }
        println!("{}", serde_json::to_string_pretty(&v).expect("serialisable"));
        return ExitCode::SUCCESS;
    }
    print_plan(&i, &p);
    if let Some(s) = &sim {
        print_prove(&p, s);
    }
    if a.explain {
        println!("\nFormulas and sources:");
        for l in b::explain(&i, &p) {
            println!("  - {l}");
        }
    }
    ExitCode::SUCCESS
}

/// The plan: peak, drain, limit, the largest burst absorbed and what happens beyond it.
fn print_plan(i: &BurstInput, p: &BurstPlan) {
    println!(
        "Microburst: {} senders x {} at {} Gb/s into one {} Gb/s port, shared pool {} ({} cells of {} B), alpha {}, {:?}",
        p.senders,
        kib(p.burst_bytes),
        i.in_speed.as_gbps_f64(),
        i.out_speed.as_gbps_f64(),
        kib(i.shared.0),
        p.shared_cells,
        i.cell.0,
        p.alpha,
        p.class
    );
    println!(
        "  peak occupancy         {} wire = {} in frames = {} cells (at {})",
        kib(p.peak_wire_bytes),
        kib(p.peak_frame_bytes),
        p.peak_cells,
        us(p.senders_done_ps)
    );
    println!("  time to drain          {} after the peak; last byte out at {}", us(p.drain_after_peak_ps), us(p.last_byte_out_ps));
    println!(
        "  buffer limit           {} cells = {} in frames ({} senders' PGs x (reserved {} + alpha*S/(1+N*alpha) = {}))",
        p.limit_cells,
        kib(p.limit_frame_bytes),
        p.senders,
        p.reserved_cells,
        p.per_pg_limit_cells
    );
    match p.max_burst_bytes {
        Some(m) => println!("  largest burst absorbed {} per sender", kib(m)),
        None => println!("  largest burst absorbed any (N x in-speed <= out-speed: no queue builds)"),
    }
    match &p.beyond {
        Beyond::Absorbed => println!("  beyond                 this burst fits: no drops, no pause"),
        Beyond::Lossy { drops_start_ps, dropped_bytes, dropped_packets } => println!(
            "  beyond (lossy)         drops start at {}, ~{} dropped (~{} packets; first order, go-back-N resends add more)",
            us(*drops_start_ps),
            kib(*dropped_bytes),
            dropped_packets
        ),
        Beyond::Lossless { first_xoff_ps, min_pause_ps, paused_per_sender_ps, senders_finish_ps, propagation } => {
            println!("  beyond (lossless)      first XOFF at {} on all {} sender ports; each pause >= {}", us(*first_xoff_ps), p.senders, us(*min_pause_ps));
            println!("                         each sender paused {} in total, senders finish at {}", us(*paused_per_sender_ps), us(*senders_finish_ps));
            println!("                         propagation: {propagation}");
        }
    }
}

/// `--prove`: the analytical numbers beside the simulated ones.
fn print_prove(p: &BurstPlan, s: &Simulated) {
    println!("\n  --prove                analytical        simulated");
    println!(
        "  peak egress queue      {:>12} B   {:>12} B  (frame bytes; the simulation counts whole packets)",
        p.peak_frame_bytes.min(p.limit_frame_bytes.max(if matches!(p.beyond, Beyond::Absorbed) { p.peak_frame_bytes } else { 0 })),
        s.peak_queue_frame_bytes
    );
    println!("  last flow done         {:>14}   {:>14}", us(p.last_byte_out_ps), us(s.last_flow_done_ps));
    match &p.beyond {
        Beyond::Lossy { dropped_packets, .. } => println!("  drops (packets)        {:>14}   {:>14}", dropped_packets, s.drops),
        Beyond::Lossless { paused_per_sender_ps, .. } => {
            println!("  paused per sender      {:>14}   {:>14}", us(*paused_per_sender_ps), us(s.paused_per_sender_ps));
            println!("  PFC frames             {:>14}   {:>14}", "-", s.pfc_frames);
        }
        Beyond::Absorbed => println!("  drops / PFC frames     {:>14}   {:>7} / {}", 0, s.drops, s.pfc_frames),
    }
}
