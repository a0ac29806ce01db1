//! Which runs a shard owns and what it simulates. Shard I of N (`--shard I/N`, 0-based)
//! runs variants I, I + N, I + 2N, ..; the fabrics' single (reference) runs belong to shard
//! 0. A shard's runs become [`Task`]s without duplicates: a fabric whose applicable edits
//! are the same for two variants is simulated once and fills both rows.
//!
//! Left out: running the tasks (`simulate.rs`) and joining shards (`merge.rs`).

use std::collections::BTreeMap;

use scenario::variant::Edit;

use super::csv_file::{Meta, Row};
use super::fabrics::{Fabric, Mode};
use super::vary::{combo, Param};

/// `I/N` with 0 <= I < N.
pub(super) fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {s}: expected I/N with 0 <= I < N (0-based, as SLURM_ARRAY_TASK_ID runs 0..N-1 with --array=0-N-1)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (i.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// A simulation to run: a fabric with a list of edits.
pub(super) struct Task {
    pub(super) fabric: Fabric,
    pub(super) edits: Vec<Edit>,
    /// The variant it is first needed for (`None`: the fabric's single run), for messages.
    pub(super) variant: Option<usize>,
    pub(super) label: String,
}

/// The simulations shard `shard` (`None`: the whole sweep) runs, without duplicates, and
/// the rows they fill (each with the index of its task).
pub(super) fn tasks(meta: &Meta, params: &[Param], tech_edits: &[Vec<Edit>; 2], shard: Option<(usize, usize)>) -> (Vec<Task>, Vec<(Row, usize)>) {
    let (me, of) = shard.unwrap_or((0, 1));
    let mine = |v: usize| v % of == me;
    let mut tasks: Vec<Task> = vec![];
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    let mut rows: Vec<(Row, usize)> = vec![];
    let mut add = |fabric: Fabric, variant: Option<usize>, values: Vec<String>, edits: Vec<Edit>, label: String| {
        let key = format!("{}|{}", fabric.key(), edits.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\u{1f}"));
        let t = *by_key.entry(key).or_insert_with(|| {
            tasks.push(Task { fabric, edits, variant, label });
            tasks.len() - 1
        });
        rows.push((Row { variant, values, fabric, cells: vec![] }, t));
    };
    for v in (0..meta.variants).filter(|&v| mine(v)) {
        let idx = combo(params, v);
        let values: Vec<String> = params.iter().zip(&idx).map(|(p, &i)| p.values[i].clone()).collect();
        let label = params.iter().zip(&values).map(|(p, x)| format!("{}={x}", p.name)).collect::<Vec<_>>().join(", ");
        for f in Fabric::ALL.into_iter().filter(|&f| meta.mode(f) == Mode::PerVariant) {
            let mut edits = tech_edits[f as usize].clone();
            edits.extend(params.iter().zip(&idx).flat_map(|(p, &i)| p.edits[i].iter().filter(|e| f.applies(&e.path)).cloned()));
            add(f, Some(v), values.clone(), edits, label.clone());
        }
    }
    if me == 0 {
        for f in Fabric::ALL.into_iter().filter(|&f| meta.mode(f) == Mode::Once) {
            add(f, None, vec![String::new(); params.len()], tech_edits[f as usize].clone(), "reference".into());
        }
    }
    (tasks, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs() {
        assert_eq!(parse_shard("0/1"), Ok((0, 1)));
        assert_eq!(parse_shard("15/16"), Ok((15, 16)));
        assert!(parse_shard("16/16").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("x/2").is_err());
        assert!(parse_shard("3").is_err());
    }
}
