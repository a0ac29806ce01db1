//! Which fabrics a sweep runs, and how. A file with `[roce]` runs every variant on RoCEv2;
//! its InfiniBand side (the file's `[infiniband]`, or the defaults `compare` states) runs
//! once as the reference line when no varied field applies to it, per variant otherwise,
//! and not at all when the file does not compile for InfiniBand. A file with only
//! `[infiniband]` is swept on InfiniBand alone.
//!
//! Left out: the variants themselves (`vary.rs`) and which runs a shard owns (`shard.rs`).

use fabric::params::Tech;
use scenario::variant::{for_technology, load_variant, Edit};
use toml::Table;

use super::vary::Param;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Fabric {
    Roce,
    Infiniband,
}

impl Fabric {
    pub(super) const ALL: [Fabric; 2] = [Fabric::Roce, Fabric::Infiniband];

    pub(super) fn key(self) -> &'static str {
        match self {
            Fabric::Roce => "roce",
            Fabric::Infiniband => "infiniband",
        }
    }

    pub(super) fn title(self) -> &'static str {
        match self {
            Fabric::Roce => "RoCEv2",
            Fabric::Infiniband => "InfiniBand",
        }
    }

    pub(super) fn tech(self) -> Tech {
        match self {
            Fabric::Roce => Tech::Roce,
            Fabric::Infiniband => Tech::Infiniband,
        }
    }

    pub(super) fn parse(s: &str) -> Option<Fabric> {
        Fabric::ALL.into_iter().find(|f| f.key() == s)
    }

    /// Whether an edit of `path` changes this fabric's run.
    pub(super) fn applies(self, path: &str) -> bool {
        let head = path.split(['.', '[']).next().unwrap_or(path);
        match self {
            Fabric::Roce => head != "infiniband",
            Fabric::Infiniband => head != "roce" && head != "buffer",
        }
    }
}

/// How a fabric takes part in a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// One run per variant.
    PerVariant,
    /// One run, the reference line: no varied field applies to it.
    Once,
    /// Not run.
    Off,
}

impl Mode {
    pub(super) fn key(self) -> &'static str {
        match self {
            Mode::PerVariant => "per-variant",
            Mode::Once => "once",
            Mode::Off => "off",
        }
    }

    pub(super) fn parse(s: &str) -> Option<Mode> {
        [Mode::PerVariant, Mode::Once, Mode::Off].into_iter().find(|m| m.key() == s)
    }
}

/// The fabrics' part in a sweep, indexed by `Fabric as usize`: each one's edits that make
/// the file run on it (`for_technology`), its mode, and notes to print.
pub(super) struct Fabrics {
    pub(super) edits: [Vec<Edit>; 2],
    pub(super) modes: [Mode; 2],
    pub(super) notes: Vec<String>,
}

/// Decides how each fabric takes part. A missing InfiniBand side is a note (printed at
/// once); a file neither fabric can run, or a grid that changes nothing on any fabric, an
/// error.
pub(super) fn choose(name: &str, src: &str, table: &Table, params: &[Param]) -> Result<Fabrics, String> {
    let has_roce = table.contains_key("roce");
    if !has_roce && !table.contains_key("infiniband") {
        return Err(format!("{name}: expected a [roce] or an [infiniband] section"));
    }
    let mut tech_edits: [Vec<Edit>; 2] = [vec![], vec![]];
    let mut modes = [Mode::Off; 2];
    let mut notes = vec![];
    for f in Fabric::ALL {
        if f == Fabric::Roce && !has_roce {
            continue;
        }
        let ib_ref = f == Fabric::Infiniband && has_roce;
        match for_technology(src, f.tech()) {
            Ok((edits, n)) => {
                if ib_ref {
                    if let Err(e) = load_variant(name, src, &edits) {
                        eprintln!("note: no InfiniBand side: the file does not compile for InfiniBand: {}: {}", e.field, e.msg);
                        continue;
                    }
                }
                tech_edits[f as usize] = edits;
                notes.extend(n);
            }
            Err(m) if ib_ref => {
                eprintln!("note: no InfiniBand side: {m}");
                continue;
            }
            Err(m) => return Err(format!("{name}: {m}")),
        }
        let varies = params.iter().any(|p| p.edits.iter().flatten().any(|e| f.applies(&e.path)));
        modes[f as usize] = if varies { Mode::PerVariant } else { Mode::Once };
    }
    if !modes.contains(&Mode::PerVariant) {
        let names = params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ");
        return Err(format!("--vary {names}: changes nothing on the fabric this file runs ({})", if has_roce { "RoCEv2" } else { "InfiniBand" }));
    }
    Ok(Fabrics { edits: tech_edits, modes, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_to_their_fabric() {
        assert!(Fabric::Infiniband.applies("traffic[0].size") && !Fabric::Infiniband.applies("buffer.headroom"));
        assert!(!Fabric::Roce.applies("infiniband.vl_buffer") && Fabric::Roce.applies("roce.ecn[0].kmin"));
    }
}
