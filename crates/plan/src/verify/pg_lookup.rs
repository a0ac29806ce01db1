//! SONiC's `pg_profile_lookup.ini` tables: the headroom profiles `buffermgrd` creates for
//! lossless priority groups in the *traditional* buffer model.
//!
//! In that model `buffermgrd` runs with `-l /usr/share/sonic/hwsku/pg_profile_lookup.ini`
//! (sonic-buildimage `dockers/docker-orchagent/buffermgrd.sh`), the directory being
//! `device/<vendor>/<platform>/<hwsku>/` of sonic-buildimage, mounted by platform and hwsku
//! (`files/build_templates/docker_image_ctl.j2`). So a switch's table is found by its
//! `DEVICE_METADATA|localhost` `platform` and `hwsku`. For each lossless port it looks up
//! the row whose `speed` equals PORT `speed` and whose `cable` equals the port's
//! CABLE_LENGTH, both as exact strings, and creates BUFFER_PROFILE
//! `pg_lossless_<speed>_<cable>_profile` with pool `ingress_lossless_pool`, that row's `xon`,
//! `xon_offset` (when the row has one), `xoff`, `size`, and `<mode>_th` = `threshold` (the
//! pool's `mode`, so `dynamic_th` in SONiC's pools); a profile of that name already in
//! config_db is reused as it is. Without a row it logs "No PG profile configured for speed
//! ... and cable length ..." and creates nothing: the PG gets no headroom (sonic-swss
//! `cfgmgr/buffermgr.cpp` `readPgProfileLookupFile` and `doSpeedUpdateTask`, at
//! e6b0c5b5d2ab52354c4ec941f7c9005aeec3f779).
//!
//! The tables known here are `crates/plan/data/pg_profile_lookup.csv`, written by
//! `scripts/pg_profile_lookup.sh` from sonic-buildimage at [`TABLES_COMMIT`]: the nine of
//! `shared/data/sonic/pg_profile_lookup/` (the same rows) and the three the repository's
//! test configs run on (Force10-S6000, Mellanox-SN4600C-C64, Arista-7260CX3-C64, whose
//! files are symlinks into `device/common/profiles/` or a sibling hwsku).
//!
//! Left out: every other hwsku of sonic-buildimage (then "not checked"), and a table edited
//! on the switch itself.

use std::sync::OnceLock;

/// The sonic-buildimage commit the tables were read at.
pub const TABLES_COMMIT: &str = "086b03bd70f9e211aaaf5f6aefe0790b508d2a94";

const CSV: &str = include_str!("../../data/pg_profile_lookup.csv");

/// One line of a `pg_profile_lookup.ini`, as buffermgrd reads it (all values in bytes but
/// `threshold`, the `dynamic_th`/`static_th` of the profile it creates).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub speed: String,
    pub cable: String,
    pub size: u64,
    pub xon: u64,
    pub xoff: u64,
    pub threshold: i64,
    pub xon_offset: Option<u64>,
}

/// One hwsku's table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub platform: String,
    pub hwsku: String,
    /// The file in sonic-buildimage (symlinks followed).
    pub file: String,
    pub rows: Vec<Row>,
}

impl Table {
    /// The row buffermgrd uses for a port's PORT `speed` and CABLE_LENGTH value.
    pub fn row(&self, speed: &str, cable: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.speed == speed && r.cable == cable)
    }

    /// The cable lengths the table lists for a speed, shortest first.
    pub fn cables_for(&self, speed: &str) -> Vec<&str> {
        let mut v: Vec<&Row> = self.rows.iter().filter(|r| r.speed == speed).collect();
        v.sort_by_key(|r| cable_metres(&r.cable).unwrap_or(u64::MAX));
        v.into_iter().map(|r| r.cable.as_str()).collect()
    }

    /// Where the table comes from, for findings: `sonic-buildimage <file> at <commit>`.
    pub fn source(&self) -> String {
        format!("sonic-buildimage {} at {}", self.file, &TABLES_COMMIT[..12])
    }
}

fn cable_metres(s: &str) -> Option<u64> {
    s.strip_suffix('m')?.parse().ok()
}

/// Every table, parsed once from the embedded CSV.
pub fn tables() -> &'static [Table] {
    static T: OnceLock<Vec<Table>> = OnceLock::new();
    T.get_or_init(|| parse(CSV).expect("crates/plan/data/pg_profile_lookup.csv is well formed (unit test `embedded_tables_parse`)"))
}

/// The table buffermgrd reads on a switch of this platform and hwsku.
pub fn for_switch(platform: &str, hwsku: &str) -> Option<&'static Table> {
    tables().iter().find(|t| t.platform == platform && t.hwsku == hwsku)
}

/// Parses the CSV (`platform,hwsku,speed_mbps,cable_length,size,xon,xoff,threshold,xon_offset,file`,
/// `#` comment lines); the error names the line.
fn parse(text: &str) -> Result<Vec<Table>, String> {
    let mut out: Vec<Table> = vec![];
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty()).skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let bad = |what: &str| format!("pg_profile_lookup.csv line {}: {what}", n + 1);
        if f.len() != 10 {
            return Err(bad("expected 10 fields"));
        }
        let u = |s: &str| s.parse::<u64>().map_err(|_| bad(&format!("{s:?} is not a whole number")));
        let row = Row {
            speed: f[2].into(),
            cable: f[3].into(),
            size: u(f[4])?,
            xon: u(f[5])?,
            xoff: u(f[6])?,
            threshold: f[7].parse().map_err(|_| bad(&format!("threshold {:?}", f[7])))?,
            xon_offset: if f[8].is_empty() { None } else { Some(u(f[8])?) },
        };
        match out.iter_mut().find(|t| t.platform == f[0] && t.hwsku == f[1]) {
            Some(t) => t.rows.push(row),
            None => out.push(Table { platform: f[0].into(), hwsku: f[1].into(), file: f[9].into(), rows: vec![row] }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_tables_parse() {
        let t = parse(CSV).unwrap();
        assert_eq!(t.len(), 14);
        assert_eq!(t.iter().map(|t| t.rows.len()).sum::<usize>(), 267);
        // Force10-S6000 -> device/common/profiles/td2/6000/BALANCED: 15 identical rows.
        let s6000 = for_switch("x86_64-dell_s6000_s1220-r0", "Force10-S6000").unwrap();
        assert_eq!(s6000.file, "device/common/profiles/td2/6000/BALANCED/pg_profile_lookup.ini");
        let r = s6000.row("40000", "300m").unwrap();
        assert_eq!((r.size, r.xon, r.xoff, r.threshold, r.xon_offset), (56368, 18432, 55120, -3, Some(2496)));
        assert_eq!(s6000.cables_for("40000"), ["5m", "40m", "300m"]);
        assert_eq!(s6000.row("40000", "7m"), None);
        // Mellanox tables have no xon_offset column.
        let sn2700 = for_switch("x86_64-mlnx_msn2700-r0", "ACS-MSN2700").unwrap();
        assert_eq!(
            sn2700.row("100000", "5m").unwrap(),
            &Row { speed: "100000".into(), cable: "5m".into(), size: 50176, xon: 19456, xoff: 30720, threshold: 0, xon_offset: None }
        );
        // The Mellanox-SN2700 hwsku (sonic-cfggen's leaf-spine configs run on it) has its own
        // table, for a shared headroom pool: size = xon.
        let shp = for_switch("x86_64-mlnx_msn2700-r0", "Mellanox-SN2700").unwrap();
        let r = shp.row("100000", "5m").unwrap();
        assert_eq!((r.size, r.xon, r.xoff), (19456, 19456, 23552));
        assert_eq!(for_switch("x86_64-mlnx_msn2700-r0", "Mellanox-SN9999"), None);
    }

    #[test]
    fn bad_csv_names_the_line() {
        assert_eq!(parse("h\np,h,40000,5m,1,2,x,0,,f\n").unwrap_err(), "pg_profile_lookup.csv line 2: \"x\" is not a whole number");
        assert!(parse("h\np,h,40000\n").unwrap_err().contains("expected 10 fields"));
    }
}
