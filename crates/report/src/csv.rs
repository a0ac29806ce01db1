//! The `--out` directory: CSV time series of the busiest ports' queues and paused
//! priorities, each QP's rate, the pause log, every flow's completion and the incident
//! timeline.
//!
//! Owns the files' names and columns. Leaves out sampling (`fabric::sim`, every
//! `[output] sample_period`) and the figures (the [`Report`]).

use std::fmt::Write as _;
use std::io::{BufWriter, Write as _};

use fabric::stats::Stats;
use fabric::topology::PortId;
use scenario::World;

use crate::types::Report;

/// Writes CSV time series and the pause log into `dir`.
pub fn write_csv(dir: &std::path::Path, w: &World, st: &Stats, r: &Report) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let t = &w.topo;
    // The busiest ports by maximum queue.
    let mut idx: Vec<usize> = (0..st.ports.len()).filter(|&i| st.ports[i].max_queue > 0).collect();
    idx.sort_by(|&a, &b| st.ports[b].max_queue.cmp(&st.ports[a].max_queue).then(a.cmp(&b)));
    idx.truncate(w.top_ports);
    let pname = |i: usize| t.port_name(PortId(i as u32));
    let mut q = String::from("time_ps");
    for &i in &idx {
        let _ = write!(q, ",{}", pname(i));
    }
    q.push('\n');
    let mut paused = q.clone();
    for smp in &st.samples {
        let _ = write!(q, "{}", smp.t);
        let _ = write!(paused, "{}", smp.t);
        for &i in &idx {
            let _ = write!(q, ",{}", smp.queue[i]);
            let _ = write!(paused, ",{}", smp.paused[i]);
        }
        q.push('\n');
        paused.push('\n');
    }
    std::fs::write(dir.join("queue_bytes.csv"), q)?;
    std::fs::write(dir.join("paused_priorities.csv"), paused)?;
    // Streamed: a collective's per-flow files run to hundreds of megabytes.
    let mut rates = csv_file(dir, "qp_rate_bps.csv")?;
    rates.write_all(b"time_ps")?;
    // One column per QP (its rows are `Sample::qp_rate`), named by its endpoints.
    for (q, qp) in st.qp_rx.iter().enumerate() {
        write!(rates, ",qp{q}_{}_{}", qp.src, qp.dst)?;
    }
    rates.write_all(b"\n")?;
    for smp in &st.samples {
        write!(rates, "{}", smp.t)?;
        for r in &smp.qp_rate {
            write!(rates, ",{r}")?;
        }
        rates.write_all(b"\n")?;
    }
    rates.flush()?;
    let mut log = String::from("time_ps,port,priority,quanta\n");
    for &(tm, port, prio, quanta) in &st.pause_log {
        let _ = writeln!(log, "{tm},{},{prio},{quanta}", t.port_name(port));
    }
    std::fs::write(dir.join("pause_events.csv"), log)?;
    let mut flows = csv_file(dir, "flows.csv")?;
    flows.write_all(b"src,dst,size_bytes,start_ps,fct_ps,ideal_ps,slowdown\n")?;
    for f in r.flow_records.iter() {
        writeln!(
            flows,
            "{},{},{},{},{},{},{}",
            f.src,
            f.dst,
            f.size_bytes,
            f.start_ps,
            f.fct_ps.map(|x| x.to_string()).unwrap_or_default(),
            f.ideal_ps,
            f.slowdown.map(|x| format!("{x:.6}")).unwrap_or_default()
        )?;
    }
    flows.flush()?;
    // The incident timeline; the detail is quoted (it may hold commas).
    let mut inc = String::from("t_ps,event,port,class,detail\n");
    for e in &r.incidents.timeline {
        let _ = writeln!(
            inc,
            "{},{},{},{},\"{}\"",
            e.t_ps,
            e.event,
            e.port.as_deref().unwrap_or(""),
            e.class.map(|c| c.to_string()).unwrap_or_default(),
            e.detail.replace('"', "\"\"")
        );
    }
    std::fs::write(dir.join("incidents.csv"), inc)?;
    Ok(())
}

/// A file in `dir` to stream rows into.
fn csv_file(dir: &std::path::Path, name: &str) -> std::io::Result<BufWriter<std::fs::File>> {
    Ok(BufWriter::new(std::fs::File::create(dir.join(name))?))
}
