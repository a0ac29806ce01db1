//! `run --out`'s per-QP rate file on a collective, whose flows share QPs (and whose SHARP
//! joins have none): one column per QP, named after the QP's endpoints, and as many
//! values in every row as columns.

use std::path::Path;
use std::process::Command;

#[test]
fn qp_rate_columns_are_qps() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ib-sharp-allreduce.toml");
    let out = std::env::temp_dir().join(format!("fabriclab-out-csv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(["run", example.to_str().unwrap(), "--out", out.to_str().unwrap()]).output().expect("runs");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let rates = std::fs::read_to_string(out.join("qp_rate_bps.csv")).expect("written");
    let flows = std::fs::read_to_string(out.join("flows.csv")).expect("written");
    let nflows = flows.lines().count() - 1;
    let mut lines = rates.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "time_ps");
    let cols = &header[1..];
    // Two 8-rank all-reduces: the ring's QPs carry many flows each, SHARP's joins none.
    assert!(cols.len() < nflows, "{} columns for {nflows} flows: one per flow, not per QP", cols.len());
    for (q, c) in cols.iter().enumerate() {
        let mut parts = c.split('_');
        assert_eq!(parts.next(), Some(format!("qp{q}").as_str()), "{c}");
        let (src, dst): (u32, u32) = (parts.next().unwrap().parse().unwrap(), parts.next().unwrap().parse().unwrap());
        assert_ne!(src, dst, "{c}");
    }
    let mut rows = 0;
    for l in lines {
        assert_eq!(l.split(',').count(), header.len(), "row {l:.60}…");
        rows += 1;
    }
    assert!(rows > 1);
    let _ = std::fs::remove_dir_all(&out);
}

/// Asking for the time series (`--out`, `--html`) samples the run; the sampler's events
/// are not the simulation's, so `run --json` prints the same bytes with them.
#[test]
fn sampling_changes_no_number() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/roce-incast.toml");
    let dir = std::env::temp_dir().join(format!("fabriclab-sampling-{}", std::process::id()));
    let run = |extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(["run", "--json", example.to_str().unwrap()]).args(extra).output().expect("runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let plain = run(&[]);
    let html = dir.join("r.html");
    let charted = run(&["--out", dir.join("out").to_str().unwrap(), "--html", html.to_str().unwrap()]);
    assert!(std::fs::metadata(&html).is_ok_and(|m| m.len() > 0), "the report was written");
    let (plain, charted) = (String::from_utf8_lossy(&plain), String::from_utf8_lossy(&charted));
    let first_difference = plain.lines().zip(charted.lines()).find(|(a, b)| a != b);
    assert_eq!(first_difference, None);
    assert_eq!(plain, charted);
    let _ = std::fs::remove_dir_all(&dir);
}
