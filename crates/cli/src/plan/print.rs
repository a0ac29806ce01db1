//! What `plan roce` prints without `--json`: the plan by section (PFC per port type, the
//! buffer budget, ECN, DCQCN, risks) and `--prove`'s runs against it.
//!
//! Left out: `--explain`'s lines (`plan::roce::explain`) and the JSON document (`mod.rs`).

use plan::roce::{self as r, HeadroomModel, RoceInput, RocePlan};
use units::SimDuration;

use super::prove::{TierProof, PROVE_ATTEMPTS, PROVE_XOFF_FRAMES};

fn us(ps: u64) -> String {
    format!("{:.3} us", SimDuration(ps).as_us_f64())
}

fn kb(b: u64) -> String {
    format!("{b} B ({:.1} KiB)", b as f64 / 1024.0)
}

pub(super) fn print_plan(i: &RoceInput, p: &RocePlan) {
    let topo = match i.topology {
        r::Topo::LeafSpine { leaves, spines, hosts_per_leaf } => format!("leaf-spine: {leaves} leaves x {spines} spines, {hosts_per_leaf} hosts per leaf"),
        r::Topo::FatTree { k } => format!("fat tree k = {k}"),
    };
    println!("RoCEv2 lossless plan ({topo})");
    println!(
        "  model {}; path MTU {} B (lossless frame {} B, reverse frame {} B); buffer {} in {} B cells, reserved {} B per PG, alpha 2^{}; {} lossless priorit{}; incast {}:1; NIC {:?}; short frames per window {}",
        p.model,
        i.mtu.0,
        p.lossless_frame_bytes,
        p.reverse_frame_bytes,
        kb(i.buffer.total.0),
        p.cell_bytes,
        i.buffer.reserved.0,
        i.buffer.dynamic_th,
        i.lossless_priorities,
        if i.lossless_priorities == 1 { "y" } else { "ies" },
        i.incast,
        i.nic,
        i.short_frames
    );
    println!("\nPFC per port type (both ends of a tier's links alike)");
    let sonic = matches!(i.model, HeadroomModel::Sonic(_));
    for t in &p.tiers {
        println!(
            "  {:<10} {:>6} Gb/s, {:>6} m{}: headroom (SONiC xoff) {} = {} cells{}; XOFF trigger {}; XON {} below it; PG size {}",
            t.tier,
            t.speed_gbps,
            t.cable_m,
            if sonic { format!(", {} lanes", t.lanes) } else { String::new() },
            kb(t.headroom_bytes),
            t.headroom_cells,
            if t.shared_headroom_pool { " (from the shared headroom pool)" } else { "" },
            t.trigger,
            kb(t.xon_offset_bytes),
            kb(t.pg_size_bytes)
        );
        for x in &t.terms {
            let time = x.time_ps.map_or(String::new(), |ps| format!("{:>11.2} ns", ps as f64 / 1000.0));
            println!("      {:<72} {:>14} {:>12.1} B   [{}]", x.name, time, x.bytes, x.source);
        }
        if let (Some(f), Some(a)) = (t.frames, t.all_short_cells) {
            println!("      = {f} maximum frames; if every frame in the window were short (64 B), {a} cells would be needed");
        }
    }
    print_budgets(i, p);
    println!("\nECN (lossless queue, RED at egress)");
    println!("  Kmin {}  Kmax {}  Pmax {}", kb(p.ecn.kmin_bytes), kb(p.ecn.kmax_bytes), p.ecn.pmax);
    println!("  why: {}", p.ecn.reason);
    println!("  PFC fires at an egress queue of {}", kb(p.ecn.pfc_queue_bytes));
    println!("\nDCQCN starting parameters ({})", p.dcqcn.preset);
    for (n, v, why) in &p.dcqcn.reasons {
        println!("  {n:<18} {v:>14}  {why}");
    }
    println!("\nRisks");
    for x in &p.risks {
        println!("  [{}] {} ({}): {}", if x.fired { "FIRED" } else { " ok  " }, x.title, x.evaluated, x.detail);
    }
}

/// Each switch role's lossless buffer against the budget, and its shared headroom pool.
fn print_budgets(i: &RoceInput, p: &RocePlan) {
    println!("\nLossless buffer against the budget");
    for b in &p.budgets {
        let ports: Vec<String> = b.ports.iter().map(|(t, n)| format!("{n} {t}")).collect();
        println!(
            "  {:<11} x{:<4} ports {}: reserved {} + headroom {} of {} ({:.1}%), shared left {}",
            b.role,
            b.switches,
            ports.join(" + "),
            kb(b.reserved_bytes),
            kb(b.headroom_bytes),
            kb(b.total_bytes),
            100.0 * b.headroom_share,
            kb(b.shared_bytes)
        );
        if let (Some(s), Some(d), Some(o)) = (&b.shared_headroom_pool, b.pool_xoff_demand_bytes, b.pool_over_subscription) {
            println!(
                "  {:<17} shared headroom pool xoff {} ({}); PGs' xoff less {} B private headroom = {d} B, {o:.2}x the pool",
                "",
                kb(s.pool_xoff.0),
                if i.shared_headroom.pool_xoff.0 != 0 {
                    "configured".to_string()
                } else {
                    format!("buffer_pool_mellanox.lua at over_subscribe_ratio {}", s.over_subscribe_ratio)
                },
                s.private_headroom.0,
            );
        }
    }
}

pub(super) fn print_proof(i: &RoceInput, proofs: &[TierProof]) {
    println!(
        "\n--prove: one switch; h0 on the tier's speed and longest cable and h2 write 2:1 to h1 on a slow link (h0's PG barely drains while its headroom fills), the rest of the {}:1 incast joins with a burst; lossy messages back to h0 at random sizes and gaps (~80% of its link); PFC alone (no ECN/DCQCN); {}",
        i.incast,
        match i.model {
            HeadroomModel::Ieee => format!("static XOFF at {PROVE_XOFF_FRAMES} maximum frames"),
            HeadroomModel::Sonic(_) => "SONiC's dynamic threshold".into(),
        }
    );
    for pr in proofs {
        let a = &pr.at_plan;
        println!(
            "  {:<10} plan headroom {} cells: lossless drops {}, peak headroom {} of {} cells; PFC to h0 {} times, h0 paused {} in total (run {}){}",
            pr.tier,
            a.headroom_cells,
            a.lossless_drops,
            a.peak_headroom_cells,
            a.headroom_cells,
            a.pfc_frames_to_peer,
            us(a.peer_paused_ps),
            us(a.end_ps),
            if pr.attempts > 1 { format!("; reverse-traffic pattern {} of up to {PROVE_ATTEMPTS}", pr.attempts) } else { String::new() }
        );
        if let Some(s) = &pr.one_mtu_short {
            println!(
                "  {:<10} one MTU short ({} cells): lossless drops {} ({} headroom overflow), peak {} cells",
                "", s.headroom_cells, s.lossless_drops, s.headroom_overflow_drops, s.peak_headroom_cells
            );
        }
        if let Some((slack, rev)) = pr.worst_phase_window_ps {
            if pr.at_plan.peak_headroom_cells < pr.at_plan.headroom_cells {
                println!(
                    "  {:<10} the bound's last frame needs the PFC frame to wait behind a reverse frame that started at most {:.2} ns before XOFF (a {:.1}% window of its {:.2} ns): not met in {} pause cycles of {} reverse-traffic patterns here",
                    "",
                    slack as f64 / 1000.0,
                    100.0 * slack as f64 / rev as f64,
                    rev as f64 / 1000.0,
                    pr.at_plan.pfc_frames_to_peer,
                    pr.attempts
                );
            }
        }
        if let (Some(c), Some(b)) = (pr.margin_cells, pr.margin_bytes) {
            println!("  {:<10} SONiC margin over the simulated need: {c} cells ({b} B)", "");
        }
        if let Some(pool) = pr.shared_headroom_pool_bytes {
            println!(
                "  {:<10} shared headroom pool of this {}-port switch: {} (buffer_pool_mellanox.lua's xoff + 10 KiB private headroom per port), shared by every pausing PG; {} headroom-overflow drop(s){}",
                "",
                i.incast + 2,
                kb(pool),
                a.headroom_overflow_drops,
                if a.headroom_overflow_drops > 0 && a.peak_headroom_cells <= a.headroom_cells {
                    ": the pool ran out while PGs paused together, not h0's own xoff (the over-subscription, not the headroom formula)"
                } else {
                    ""
                }
            );
        }
    }
}
