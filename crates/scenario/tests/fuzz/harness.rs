//! The fuzzer's harness, shared by the proptest target (`tests/fuzz.rs`) and the
//! `cargo fuzz` targets (`fuzz/fuzz_targets/*.rs`): seed files, structure-aware mutations
//! driven by a stream of choice bytes, and the checks every input must pass.
//!
//! A case is a seed file plus a few mutations, each decoded from the choice bytes (a
//! proptest-generated vector, or libFuzzer's input): so proptest shrinks and libFuzzer
//! evolves the same mutations. Scenario mutations know TOML's shape (keys, values,
//! inline tables, sections) and which values to try for each key; topology mutations
//! know the ibnetdiscover/ibsim grammar (port numbers, GUIDs, widths and speeds, ibsim's
//! masks, quoted node ids).
//!
//! The check: the loader returns, never panics; an error names the file and says
//! something, at a line inside the file.
//!
//! Huge values: a count, a collective's size or chunk or a background duration that is
//! valid but asks for terabytes (a 65,536-leaf fabric, a 99,999,999,999 MiB collective)
//! would make the loader build it and the allocator abort the process, which no test can
//! catch. The cases load under [`LIMITS`], which refuse them first; [`Policy::huge`]
//! (on unless `FABRICLAB_FUZZ_HUGE=0`) says whether those keys get such values at all.

#![allow(dead_code)] // each target uses a part

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// A seed: a file's path (it names the file in errors) and its text.
#[derive(Clone, Debug)]
pub struct Seed {
    pub path: PathBuf,
    pub text: String,
}

/// The seeds, from the repository at `root`: every example scenario and the scenario
/// crate's fuzz seeds (`tests/data/fuzz/`: settings no example uses), and the topology
/// files of the examples and the scenario crate's tests.
pub struct Seeds {
    pub scenarios: Vec<Seed>,
    pub topologies: Vec<Seed>,
    /// `examples/`: relative paths in the scenarios start here.
    pub examples: PathBuf,
}

impl Seeds {
    pub fn load(root: &Path) -> Seeds {
        let examples = root.join("examples");
        let data = root.join("crates/scenario/tests/data");
        let list = |dir: &Path, keep: &dyn Fn(&str) -> bool| -> Vec<Seed> {
            let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.expect("a directory entry").path())
                .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(keep))
                .collect();
            v.sort();
            v.into_iter().map(|path| Seed { text: std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())), path }).collect()
        };
        // A file with both [roce] and [infiniband] (for `compare`) is two seeds, one per
        // technology.
        let mut files = list(&examples, &|n| n.ends_with(".toml"));
        files.extend(list(&data.join("fuzz"), &|n| n.ends_with(".toml")));
        let scenarios: Vec<Seed> = files
            .into_iter()
            .flat_map(|s| {
                if s.text.contains("\n[roce]") && s.text.contains("\n[infiniband]") && !s.text.contains("technology =") {
                    ["roce", "infiniband"]
                        .iter()
                        .map(|t| Seed { path: s.path.clone(), text: s.text.replacen("[scenario]\n", &format!("[scenario]\ntechnology = \"{t}\"\n"), 1) })
                        .collect()
                } else {
                    vec![s]
                }
            })
            .collect();
        let mut topologies = list(&examples, &|n| n.ends_with(".ibnetdiscover"));
        topologies.extend(list(&data, &|n| n.ends_with(".txt") || n.ends_with(".net")));
        assert!(!scenarios.is_empty() && !topologies.is_empty(), "no seeds under {}", root.display());
        Seeds { scenarios, topologies, examples }
    }
}

/// Where the choices come from: bytes, read four at a time; zeros once they run out.
pub struct Choices<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Choices<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Choices { data, pos: 0 }
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let mut b = [0u8; 4];
        for x in &mut b {
            *x = self.data.get(self.pos).copied().unwrap_or(0);
            self.pos += 1;
        }
        u32::from_le_bytes(b) as usize % n
    }
    pub fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }
    /// An item of a table (see [`list`]).
    pub fn item(&mut self, table: &'static str) -> &'static str {
        self.pick(&list(table))
    }
    /// An index by weight.
    pub fn weighted<T: Copy>(&mut self, xs: &[(T, u32)]) -> T {
        let total: u32 = xs.iter().map(|x| x.1).sum();
        let mut r = self.below(total as usize) as u32;
        for &(x, w) in xs {
            if r < w {
                return x;
            }
            r -= w;
        }
        xs[0].0
    }
}

/// What the mutations may generate.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// Give the keys that multiply the work (counts, collective sizes and chunks,
    /// background durations) huge values too.
    pub huge: bool,
}

impl Policy {
    /// Huge values unless `FABRICLAB_FUZZ_HUGE=0`.
    pub fn from_env() -> Policy {
        Policy { huge: std::env::var("FABRICLAB_FUZZ_HUGE").ok().is_none_or(|v| v.trim() != "0") }
    }
}

// ---------------------------------------------------------------------------------------
// Scenario files

/// The items of a table: `|`-separated, on any number of lines.
fn list(table: &'static str) -> Vec<&'static str> {
    table.lines().filter(|l| !l.is_empty()).flat_map(|l| l.split('|')).collect()
}

/// Values of any type: boundaries, wrong types, odd strings. TOML literals.
const GENERIC: &str = r#"
0|-1|1|2|7|8|15|16|63|64|127|128|255|256|65535|65536|4294967295|4294967296|-4294967296|9223372036854775807
-9223372036854775808|18446744073709551615|1e308|-1e308|1e-308|0.0|-0.0|0.5|1.5|nan|inf|-inf|true|false|""|" "
"auto"|"infinite"|"\u0000"|"é"|[]|[0]|[-1, 256]|["a"]|[[]]|{}|{ a = 1 }|1979-05-27T07:32:00Z|'''x'''
"#;

/// Numbers that never ask for much work, for keys that multiply it.
const COUNTS: &str = r#"
0|-1|1|2|3|4|5|8|4294967296|18446744073709551615|1e308|nan|0.5|"4"|true|[]
"#;
/// Counts that can ask for terabytes.
const HUGE_COUNTS: &str = r#"
16|64|255|256|1000|65535|65536|4294967295
"#;

const BYTES: &str = r#"
"0B"|"1B"|"63B"|"64B"|"255B"|"256B"|"1023B"|"1024B"|"4095B"|"4096B"|"9000B"|"1KiB"|"128KiB"|"1MiB"|"16MiB"
"1GiB"|"1TiB"|"99999999999MiB"|"4294967296MiB"|"18446744073709551615B"|"18446744073709551616B"|"0.5B"|"1.5KB"
"1e3MB"|"-1B"|"1b"|"1"|"B"|"dynamic"|"auto"
"#;
/// Sizes of a collective or a message: few transfers at the seeds' chunks.
const WORK_SIZES: &str = r#"
"0B"|"1B"|"4096B"|"1MiB"|"64MiB"|"256MiB"|"18446744073709551616B"|"0.5B"|"-1B"|"1"
"#;
/// A collective's chunk: few transfers of the seeds' sizes.
const WORK_CHUNKS: &str = r#"
"0B"|"1MiB"|"64MiB"|"18446744073709551615B"|"18446744073709551616B"|"0.5B"|"-1B"|"1"
"#;
const HUGE_SIZES: &str = r#"
"1TiB"|"99999999999MiB"|"4294967296MiB"|"18446744073709551615B"
"#;
const HUGE_CHUNKS: &str = r#"
"1B"|"63B"|"1KiB"|"4096B"
"#;

const TIMES: &str = r#"
"0ns"|"0ps"|"1ps"|"1ns"|"1us"|"1µs"|"1ms"|"1s"|"1000000s"|"18446744073709551615ps"|"18446744073709551616ps"
"18446744073709551s"|"0.5ps"|"1.5ns"|"-1us"|"1"|"1h"|"auto"|"infinite"
"#;
/// Background traffic's duration: few flows.
const WORK_TIMES: &str = r#"
"0ns"|"1ps"|"1us"|"1ms"|"18446744073709551616ps"|"0.5ps"|"-1us"|"auto"
"#;
const HUGE_TIMES: &str = r#"
"1s"|"1000000s"|"18446744073709551615ps"
"#;

const RATES: &str = r#"
"0bps"|"1bps"|"9999999999bps"|"10Gbps"|"25Gbps"|"100Gbps"|"200Gbps"|"400Gbps"|"800Gbps"|"801Gbps"|"1Tbps"
"18446744073709551615bps"|"18446744073709551616bps"|"100GBps"|"0.5bps"
"#;
const LENGTHS: &str = r#"
"0m"|"0mm"|"1mm"|"1m"|"300m"|"10km"|"1000km"|"18446744073709551615mm"|"18446744073709551615km"|"0.1mm"|"1"
"#;

const NAMES: &str = r#"
"roce"|"infiniband"|"leaf-spine"|"fat-tree"|"explicit"|"file"|"switch"|"host"|"ring"|"tree"|"sharp"
"all-reduce"|"all-gather"|"reduce-scatter"|"broadcast"|"all-to-all"|"linear"|"rail-aligned"|"random"|"incast"
"permutation"|"message"|"collective"|"background"|"dest-hash"|"minhop"|"updn"|"ftree"|"dfsssp"
"store-and-forward"|"cut-through"|"paper"|"nvidia-default"|"hpcc-ns3"|"off"|"drop"|"forward"|"dynamic"
"enqueue"|"dequeue"|"link-down"|"link-up"|"switch-down"|"stuck-receiver"|"slow-receiver"|"misconfigured-port"
"route-override"|"sm-failure"|"spectrum-4"|"h0"|"h1"|"h0:nic1"|"leaf0"|"leaf0:0"|"leaf0:4294967295"
"leaf0:4294967296"|"leaf0:"|"spine0:0"|"s0:0"|":"|"a:b:c"|"h0.an"|"data/FbHdp_distribution.txt"
"data/SOURCES.md"|"data"|"roce-incast.toml"|"fabric-2level.ibnetdiscover"
"../crates/scenario/tests/data/ibsim-2sw.net"|"no-such-file"
"#;

/// Keys whose values multiply the loader's work.
fn work_values(key: &str) -> Option<(&'static str, &'static str)> {
    Some(match key {
        "leaves" | "spines" | "hosts_per_leaf" | "nics_per_host" | "uplinks_per_spine" | "k" | "ports" | "nics" | "ranks" | "iterations" | "channels" => {
            (COUNTS, HUGE_COUNTS)
        }
        "size" => (WORK_SIZES, HUGE_SIZES),
        "chunk" => (WORK_CHUNKS, HUGE_CHUNKS),
        "duration" => (WORK_TIMES, HUGE_TIMES),
        _ => return None,
    })
}

/// The values tried for `key`: its own kind's, then any kind's.
fn values_for(key: &str, p: Policy, ch: &mut Choices) -> String {
    if let Some((safe, huge)) = work_values(key) {
        let mut own = list(safe);
        if p.huge {
            own.extend(list(huge));
        }
        if ch.below(4) > 0 {
            return ch.pick(&own).to_string();
        }
        // Any kind, but no number: a wrong type is safe, a number may be huge.
        let other: Vec<&str> = list(GENERIC).into_iter().filter(|v| p.huge || !v.starts_with(|c: char| c.is_ascii_digit() || c == '-')).collect();
        return ch.pick(&other).to_string();
    }
    let own = match key {
        "mtu"
        | "vl_buffer"
        | "total"
        | "cell"
        | "reserved"
        | "headroom"
        | "xon"
        | "xon_offset"
        | "shared_headroom_pool"
        | "kmin"
        | "kmax"
        | "byte_counter"
        | "threshold"
        | "packet_size"
        | "buffer"
        | "xoff" => BYTES,
        "stop_time"
        | "deadlock_timeout"
        | "switch_latency"
        | "reroute_delay"
        | "start"
        | "stagger"
        | "at"
        | "alpha_timer"
        | "rate_timer"
        | "cnp_interval"
        | "rate_reduce_interval"
        | "ccti_timer"
        | "refresh"
        | "response"
        | "detection_time"
        | "restoration_time"
        | "sample_period"
        | "delay"
        | "hoq_lifetime"
        | "leaf_hoq_lifetime"
        | "switch_lifetime" => TIMES,
        "speed" | "rate_ai" | "rate_hai" | "min_rate" | "drain_rate" => RATES,
        "cable" => LENGTHS,
        "name" | "technology" | "kind" | "path" | "routing" | "forwarding" | "switch" | "ecn_marking" | "op" | "algorithm" | "placement" | "cdf" | "link"
        | "node" | "port" | "dst" | "action" | "preset" | "increase" | "cnp" | "cnp_scope" | "rate_reduce_timing" | "a" | "b" => NAMES,
        _ => GENERIC,
    };
    if ch.below(3) > 0 {
        ch.item(own).to_string()
    } else {
        ch.item(GENERIC).to_string()
    }
}

/// Keys a scenario file may hold (all sections, inline tables included), for insertion.
const KEYS: &str = r#"
name|seed|stop_time|technology|deadlock_timeout|kind|leaves|spines|hosts_per_leaf|nics_per_host
uplinks_per_spine|oversubscription|k|path|cable|delay|speed|mtu|grh|data_vls|sl_to_vl|high_priority_vls
vl_buffer|hoq_lifetime|leaf_hoq_lifetime|switch_lifetime|vl_stall_count|routing|timeout|retry_cnt|ack_every
forwarding|switch_latency|reroute_delay|vlan|lossless_priorities|dscp_to_tc|tc_to_pg|cnp_dscp|switch
strict_queues|ecn_marking|total|cell|dynamic_th|reserved|headroom|xoff|xon_offset|xon|shared_headroom_pool
receiver|senders|size|start|stagger|dscp|sl|src|dst|at|op|algorithm|hosts|ranks|placement|channels|chunk
window|root|iterations|cdf|load|duration|link|node|port|drain_rate|buffer|pfc|standby|sample_period|top_ports
queue|kmin|kmax|pmax|preset|g|alpha_timer|rate_timer|byte_counter|fast_recovery_steps|rate_ai|rate_hai
min_rate|cnp_interval|rate_reduce_interval|rate_reduce_timing|cnp_scope|retime|enabled|quanta|refresh|response
detection_time|restoration_time|action|threshold|marking_rate|packet_size|mark_victims|ccti_increase|ccti_min
ccti_timer|cct_step|cct_entries|in_port|out_port|map|ports|nics|a|b
"#;

/// Section headers worth adding.
const HEADERS: &str = r#"
[scenario]|[topology]|[roce]|[buffer]|[infiniband]|[[traffic]]|[[faults]]|[output]|[roce.pfc]
[roce.pfc.watchdog]|[roce.dcqcn]|[[roce.ecn]]|[infiniband.congestion_control]|[[infiniband.sl_to_vl_ports]]
[topology.host_link]|[[topology.nodes]]|[[topology.links]]
"#;

/// Characters that change TOML's structure, for random insertions.
const STRUCTURE: &[&str] = &["[", "]", "[[", "]]", "{", "}", "\"", "'", "=", ",", ".", "#", "\n", "\\", "\t", "\0", "0", "-", "a", "é", "\u{feff}", "\"\"\""];

/// A `key = value` in the text: where its key is and where its value is (byte offsets).
#[derive(Clone, Debug)]
struct Site {
    key: String,
    value: std::ops::Range<usize>,
}

/// Every `key = value` of `src`, inline tables and arrays of them included. A value ends
/// at the end of its line (minus a comment), or at the `,`/`}`/`]` that closes it.
fn sites(src: &str) -> Vec<Site> {
    let mut out = vec![];
    let mut off = 0;
    for line in src.split_inclusive('\n') {
        let b = line.as_bytes();
        let mut i = 0;
        let mut key_start = None;
        // Open values: (depth at their start, value start, key).
        let mut open: Vec<(usize, usize, String)> = vec![];
        let mut depth = 0usize;
        let mut in_str: Option<u8> = None;
        let mut end = b.len();
        while i < b.len() {
            let c = b[i];
            if let Some(q) = in_str {
                if c == b'\\' && q == b'"' {
                    i += 2;
                    continue;
                }
                if c == q {
                    in_str = None;
                }
                i += 1;
                continue;
            }
            match c {
                b'"' | b'\'' => in_str = Some(c),
                b'#' | b'\n' | b'\r' => {
                    end = i;
                    break;
                }
                b'[' | b'{' => {
                    depth += 1;
                    key_start = None;
                }
                b']' | b'}' | b',' => {
                    if c != b',' {
                        depth = depth.saturating_sub(1);
                    }
                    // Close the values opened deeper than here, or at this depth on a comma.
                    while let Some(&(d, _, _)) = open.last() {
                        if d > depth || (c == b',' && d == depth) {
                            let (_, st, key) = open.pop().expect("non-empty");
                            out.push(Site { key, value: shift(trim_range(line, st, i), off) });
                        } else {
                            break;
                        }
                    }
                    key_start = None;
                }
                b'=' => {
                    if let Some(ks) = key_start {
                        let key = line[ks..i].trim().trim_matches('"').to_string();
                        open.push((depth, i + 1, key));
                    }
                    key_start = None;
                }
                c if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' => {
                    if key_start.is_none() {
                        key_start = Some(i);
                    }
                }
                b' ' | b'\t' => {}
                _ => key_start = None,
            }
            i += 1;
        }
        while let Some((_, st, key)) = open.pop() {
            out.push(Site { key, value: shift(trim_range(line, st, end), off) });
        }
        off += line.len();
    }
    out.retain(|s| !s.value.is_empty());
    out
}

fn shift(r: std::ops::Range<usize>, by: usize) -> std::ops::Range<usize> {
    r.start + by..r.end + by
}

fn trim_range(line: &str, s: usize, e: usize) -> std::ops::Range<usize> {
    let e = e.max(s);
    let t = &line[s..e];
    let lead = t.len() - t.trim_start().len();
    let trail = t.len() - t.trim_end().len();
    if lead + trail >= t.len() {
        return s..s;
    }
    s + lead..e - trail
}

/// Line start offsets, with the text's length at the end.
fn line_starts(src: &str) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(src.match_indices('\n').map(|(i, _)| i + 1));
    if *v.last().expect("non-empty") != src.len() {
        v.push(src.len());
    }
    v
}

/// Sections: the line ranges from each `[header]` to the next.
fn sections(src: &str) -> Vec<std::ops::Range<usize>> {
    let starts = line_starts(src);
    let heads: Vec<usize> = starts.iter().copied().filter(|&s| s < src.len() && src[s..].trim_start_matches([' ', '\t']).starts_with('[')).collect();
    heads.iter().enumerate().map(|(i, &h)| h..heads.get(i + 1).copied().unwrap_or(src.len())).collect()
}

/// Runs of digits (with a sign, a point, an exponent) inside `range`.
fn numbers_in(src: &str, range: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    let b = src.as_bytes();
    let mut v = vec![];
    let mut i = range.start;
    while i < range.end {
        if b[i].is_ascii_digit() {
            let s = i;
            while i < range.end && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            v.push(s..i);
        } else {
            i += 1;
        }
    }
    v
}

/// The nearest char boundary at or below `i`.
fn floor(src: &str, mut i: usize) -> usize {
    i = i.min(src.len());
    while !src.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[derive(Clone, Copy, Debug)]
enum ScenarioOp {
    ReplaceValue,
    ReplaceNumber,
    ReplaceUnit,
    DeleteLine,
    DuplicateLine,
    DeleteKey,
    DuplicateSection,
    SwapSections,
    DeleteSection,
    InsertKey,
    InsertHeader,
    InsertBytes,
    Truncate,
}

/// Applies one to four mutations to a scenario file's text.
pub fn mutate_scenario(src: &str, p: Policy, ch: &mut Choices) -> String {
    let mut s = src.to_string();
    let n = ch.pick(&[1, 1, 1, 2, 2, 3, 4]);
    for _ in 0..n {
        s = mutate_scenario_once(&s, p, ch);
    }
    s
}

fn mutate_scenario_once(s: &str, p: Policy, ch: &mut Choices) -> String {
    use ScenarioOp::*;
    let op = ch.weighted(&[
        (ReplaceValue, 30),
        (ReplaceNumber, 14),
        (ReplaceUnit, 5),
        (DeleteLine, 6),
        (DuplicateLine, 2),
        (DeleteKey, 6),
        (DuplicateSection, 6),
        (SwapSections, 3),
        (DeleteSection, 3),
        (InsertKey, 15),
        (InsertHeader, 2),
        (InsertBytes, 5),
        (Truncate, 3),
    ]);
    let starts = line_starts(s);
    let line = |ch: &mut Choices| {
        let i = ch.below(starts.len().saturating_sub(1).max(1));
        starts[i]..starts.get(i + 1).copied().unwrap_or(s.len())
    };
    let splice = |r: std::ops::Range<usize>, with: &str| format!("{}{with}{}", &s[..r.start], &s[r.end..]);
    match op {
        ReplaceValue | DeleteKey => {
            let sites = sites(s);
            if sites.is_empty() {
                return s.to_string();
            }
            let site = ch.pick(&sites);
            if let DeleteKey = op {
                // The whole line when the key is the line's; else `key = value` in its table.
                let key_at = s[..site.value.start].rfind(&site.key).unwrap_or(site.value.start);
                let mut end = site.value.end;
                if s[end..].starts_with(',') {
                    end += 1;
                }
                return splice(key_at..end, "");
            }
            splice(site.value, &values_for(&site.key, p, ch))
        }
        ReplaceNumber => {
            // A number inside a value (a count, or the number of "64MiB"); work keys keep
            // theirs unless huge values are allowed (a whole value replaces it then).
            let sites: Vec<Site> = sites(s).into_iter().filter(|x| p.huge || work_values(&x.key).is_none()).collect();
            let nums: Vec<(String, std::ops::Range<usize>)> =
                sites.iter().flat_map(|x| numbers_in(s, x.value.clone()).into_iter().map(|r| (x.key.clone(), r))).collect();
            if nums.is_empty() {
                return s.to_string();
            }
            let (_, r) = ch.pick(&nums);
            let with = ch.pick(&[
                "0",
                "1",
                "2",
                "3",
                "7",
                "8",
                "9",
                "15",
                "16",
                "31",
                "32",
                "63",
                "64",
                "65",
                "127",
                "128",
                "254",
                "255",
                "256",
                "1023",
                "1024",
                "4095",
                "4097",
                "65535",
                "65536",
                "4294967295",
                "4294967296",
                "18446744073709551615",
                "18446744073709551616",
                "99999999999999999999999",
                "0.0",
                "0.5",
                "1.",
                ".5",
                "1__0",
                "00",
                "007",
                "",
            ]);
            splice(r, with)
        }
        ReplaceUnit => {
            // "64MiB" → "64TiB", "3m" → "3km", ...
            let units = [
                "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "ps", "ns", "us", "µs", "ms", "s", "bps", "Kbps", "Mbps", "Gbps", "Tbps", "mm", "cm",
                "m", "km", "", "x",
            ];
            let mut found = vec![];
            for site in sites(s).into_iter().filter(|x| p.huge || work_values(&x.key).is_none()) {
                let v = &s[site.value.clone()];
                if let Some(inner) = v.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                    if let Some(u) = inner.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')) {
                        if u > 0 {
                            found.push(site.value.start + 1 + u..site.value.end - 1);
                        }
                    }
                }
            }
            if found.is_empty() {
                return s.to_string();
            }
            let r = ch.pick(&found);
            splice(r, ch.pick(&units))
        }
        DeleteLine => splice(line(ch), ""),
        DuplicateLine => {
            let r = line(ch);
            let l = s[r.clone()].to_string();
            splice(r.start..r.start, &l)
        }
        DuplicateSection | SwapSections | DeleteSection => {
            let secs = sections(s);
            if secs.is_empty() {
                return s.to_string();
            }
            let a = ch.pick(&secs);
            match op {
                DuplicateSection => {
                    let mut t = s[a.clone()].to_string();
                    if !t.ends_with('\n') {
                        t.push('\n');
                    }
                    splice(a.end..a.end, &t)
                }
                DeleteSection => splice(a, ""),
                _ => {
                    let b = ch.pick(&secs);
                    let (x, y) = if a.start <= b.start { (a, b) } else { (b, a) };
                    if x == y {
                        return s.to_string();
                    }
                    let nl = |t: &str| if t.ends_with('\n') { t.to_string() } else { format!("{t}\n") };
                    format!("{}{}{}{}{}", &s[..x.start], nl(&s[y.clone()]), &s[x.end..y.start], nl(&s[x.clone()]), &s[y.end..])
                }
            }
        }
        InsertKey => {
            let key = ch.item(KEYS);
            let value = values_for(key, p, ch);
            // After a section header, or first in an inline table.
            let braces: Vec<usize> = s.match_indices('{').map(|(i, _)| i + 1).collect();
            if !braces.is_empty() && ch.below(3) == 0 {
                let at = ch.pick(&braces);
                return splice(at..at, &format!(" {key} = {value},"));
            }
            let secs = sections(s);
            let at = match secs.is_empty() {
                true => 0,
                false => {
                    let r = ch.pick(&secs);
                    s[r.start..].find('\n').map_or(s.len(), |e| r.start + e + 1)
                }
            };
            let nl = if at == s.len() && !s.ends_with('\n') { "\n" } else { "" };
            splice(at..at, &format!("{nl}{key} = {value}\n"))
        }
        InsertHeader => {
            let r = line(ch);
            splice(r.start..r.start, &format!("{}\n", ch.item(HEADERS)))
        }
        InsertBytes => {
            let at = floor(s, ch.below(s.len() + 1));
            let mut t = String::new();
            for _ in 0..1 + ch.below(4) {
                t.push_str(ch.pick(STRUCTURE));
            }
            splice(at..at, &t)
        }
        Truncate => {
            let at = floor(s, ch.below(s.len() + 1));
            s[..at].to_string()
        }
    }
}

// ---------------------------------------------------------------------------------------
// Topology files

#[derive(Clone, Copy, Debug)]
enum TopoOp {
    ReplaceNumber,
    ReplaceGuid,
    ReplaceWidthSpeed,
    ReplaceId,
    DeleteLine,
    DuplicateLine,
    SwapLines,
    InsertLine,
    InsertBytes,
    Truncate,
}

/// Decimal numbers worth trying in a topology file: port numbers, port counts, LIDs,
/// widths, ibsim masks.
const TOPO_NUMBERS: &str = r#"
0|1|2|3|4|8|12|15|16|31|32|36|253|254|255|256|65535|65536|4294967295|4294967296|18446744073709551615
18446744073709551616|-1||1.5|0x10|0x|x
"#;
const TOPO_GUIDS: &str = r#"
0|0000000000000000|ffffffffffffffff|fffffffffffffffe|1ffffffffffffffff|0002c90300a1b200|248a0703005c0a10|g||-1
"#;
const TOPO_WIDTHS: &str = r#"
1x|2x|4x|8x|12x|0x|4294967296x|x|4
"#;
const TOPO_SPEEDS: &str = r#"
SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR|GDR||edr
"#;
const TOPO_LINES: &str = r#"
Switch 36 "S-0000000000000001"|Switch 1 "X"|Switch 254 "Y"|Switch 255 "Z"|Switch 0 "Z"
Ca 2 "H-0000000000000002"|Hca 1 "Q"|Ca 1 ""|Rt 4 "R"|[1] "X"[1]|[1]|[0] "X"[0]|[255] "X"[255]
[1](ffffffffffffffff) "S-248a0703005c0a10"[1](0) # "x" lid 65535 4xNDR|switchguid=0xffffffffffffffff
switchguid+1|caguid=0x0|caguid=0xfffffffffffffffe|hcaguids=0x1|sysimgguid=0x|sysimgguid=0xffffffffffffffff
vendid|include "ibsim-2sw-part.net"|include "ibsim-2sw.net"|include ""|include "no-such-file"|do x|@1 2
# Initiated from node 0 port ffffffffffffffff|# Initiated from node|"x"
"#;

/// Applies one to four mutations to a topology file's text.
pub fn mutate_topology(src: &str, ch: &mut Choices) -> String {
    let mut s = src.to_string();
    let n = ch.pick(&[1, 1, 1, 2, 2, 3, 4]);
    for _ in 0..n {
        s = mutate_topology_once(&s, ch);
    }
    s
}

fn mutate_topology_once(s: &str, ch: &mut Choices) -> String {
    use TopoOp::*;
    let op = ch.weighted(&[
        (ReplaceNumber, 30),
        (ReplaceGuid, 10),
        (ReplaceWidthSpeed, 8),
        (ReplaceId, 12),
        (DeleteLine, 10),
        (DuplicateLine, 8),
        (SwapLines, 4),
        (InsertLine, 8),
        (InsertBytes, 5),
        (Truncate, 3),
    ]);
    let starts = line_starts(s);
    let nlines = starts.len().saturating_sub(1).max(1);
    let line_at = |i: usize| starts[i.min(starts.len() - 1)]..starts.get(i + 1).copied().unwrap_or(s.len());
    let splice = |r: std::ops::Range<usize>, with: &str| format!("{}{with}{}", &s[..r.start], &s[r.end..]);
    match op {
        ReplaceNumber => {
            let b = s.as_bytes();
            // Decimal runs not inside a hex word (GUIDs are ReplaceGuid's).
            let nums: Vec<std::ops::Range<usize>> = numbers_in(s, 0..s.len())
                .into_iter()
                .filter(|r| {
                    let before = r.start.checked_sub(1).map(|i| b[i]);
                    let after = b.get(r.end).copied();
                    !before.is_some_and(|c| c.is_ascii_alphanumeric() && c != b'x') && !after.is_some_and(|c| c.is_ascii_hexdigit() && c != b'x')
                })
                .collect();
            if nums.is_empty() {
                return s.to_string();
            }
            let r = ch.pick(&nums);
            splice(r, ch.item(TOPO_NUMBERS))
        }
        ReplaceGuid => {
            // Hex words of 8+ digits: GUIDs in ids, in parentheses, after `0x`.
            let b = s.as_bytes();
            let mut v = vec![];
            let mut i = 0;
            while i < b.len() {
                if b[i].is_ascii_hexdigit() {
                    let st = i;
                    while i < b.len() && b[i].is_ascii_hexdigit() {
                        i += 1;
                    }
                    if i - st >= 8 {
                        v.push(st..i);
                    }
                } else {
                    i += 1;
                }
            }
            if v.is_empty() {
                return s.to_string();
            }
            let r = ch.pick(&v);
            splice(r, ch.item(TOPO_GUIDS))
        }
        ReplaceWidthSpeed => {
            // `4xEDR` in comments, or ibsim's `w=`, `s=`, `e=`.
            let mut v = vec![];
            for (i, _) in s.match_indices('x') {
                let b = s.as_bytes();
                if i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(|c| c.is_ascii_uppercase()) {
                    let st = s[..i].rfind(|c: char| !c.is_ascii_digit()).map_or(0, |x| x + 1);
                    let en = s[i + 1..].find(|c: char| !c.is_ascii_alphanumeric()).map_or(s.len(), |x| i + 1 + x);
                    v.push(st..en);
                }
            }
            for m in ["w=", "s=", "e="] {
                for (i, _) in s.match_indices(m) {
                    let en = s[i + 2..].find(|c: char| c.is_whitespace()).map_or(s.len(), |x| i + 2 + x);
                    v.push(i + 2..en);
                }
            }
            if v.is_empty() {
                return s.to_string();
            }
            let r = ch.pick(&v);
            let with = if s[r.clone()].contains('x') {
                format!("{}{}", ch.item(TOPO_WIDTHS), ch.item(TOPO_SPEEDS))
            } else {
                ch.pick(&["0", "1", "2", "4", "8", "15", "16", "31", "32", "0x1f", "4294967295", "4294967296", "18446744073709551616", "-1", "", "x"])
                    .to_string()
            };
            splice(r, &with)
        }
        ReplaceId => {
            // A quoted id replaced by another one of the file (self links, CA to CA,
            // duplicates), or by an odd one.
            let quotes: Vec<std::ops::Range<usize>> = {
                let idx: Vec<usize> = s.match_indices('"').map(|(i, _)| i).collect();
                idx.chunks(2).filter(|c| c.len() == 2).map(|c| c[0] + 1..c[1]).filter(|r| !s[r.clone()].contains('\n')).collect()
            };
            if quotes.is_empty() {
                return s.to_string();
            }
            let r = ch.pick(&quotes);
            let with = if ch.below(3) > 0 {
                s[ch.pick(&quotes)].to_string()
            } else {
                ch.pick(&["", " ", "S-", "S-0000000000000000", "H-ffffffffffffffff", "S-248a0703005c0a1", "x\"y", "é"]).to_string()
            };
            splice(r, &with)
        }
        DeleteLine => splice(line_at(ch.below(nlines)), ""),
        DuplicateLine => {
            let r = line_at(ch.below(nlines));
            let l = s[r.clone()].to_string();
            let l = if l.ends_with('\n') { l } else { format!("{l}\n") };
            let at = line_at(ch.below(nlines + 1)).start;
            splice(at..at, &l)
        }
        SwapLines => {
            let (a, b) = (ch.below(nlines), ch.below(nlines));
            let (a, b) = (a.min(b), a.max(b));
            if a == b {
                return s.to_string();
            }
            let (ra, rb) = (line_at(a), line_at(b));
            let nl = |t: &str| if t.ends_with('\n') { t.to_string() } else { format!("{t}\n") };
            format!("{}{}{}{}{}", &s[..ra.start], nl(&s[rb.clone()]), &s[ra.end..rb.start], nl(&s[ra.clone()]), &s[rb.end..])
        }
        InsertLine => {
            let at = line_at(ch.below(nlines + 1)).start;
            splice(at..at, &format!("{}\n", ch.item(TOPO_LINES)))
        }
        InsertBytes => {
            let at = floor(s, ch.below(s.len() + 1));
            let mut t = String::new();
            for _ in 0..1 + ch.below(4) {
                t.push_str(ch.pick(&["[", "]", "(", ")", "\"", "#", "=", "+", "x", "0", " ", "\t", "\n", "\r", "\0", "é", "S-", "@"]));
            }
            splice(at..at, &t)
        }
        Truncate => {
            let at = floor(s, ch.below(s.len() + 1));
            s[..at].to_string()
        }
    }
}

// ---------------------------------------------------------------------------------------
// Checks

/// Runs `f`, turning a panic into `Err` with its message and location.
pub fn no_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    PANIC.with(|p| *p.borrow_mut() = None);
    install_hook();
    CAPTURE.with(|c| c.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    CAPTURE.with(|c| c.set(false));
    r.map_err(|payload| {
        let msg = payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_default();
        let at = PANIC.with(|p| p.borrow_mut().take()).unwrap_or_default();
        format!("panicked{at}: {msg}")
    })
}

thread_local! {
    static CAPTURE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A panic hook that, on a thread inside [`no_panic`], keeps the location instead of
/// printing (shrinking would print hundreds); elsewhere it is the default hook.
fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CAPTURE.with(|c| c.get()) {
                let mut at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
                // The project's frames, innermost first: where the panic came from.
                let bt = std::backtrace::Backtrace::force_capture().to_string();
                for l in bt.lines().map(str::trim).filter(|l| l.starts_with("at ") && l.contains("/crates/") && !l.contains("/tests/")).take(6) {
                    at.push_str("\n    ");
                    at.push_str(l);
                }
                PANIC.with(|p| *p.borrow_mut() = Some(at));
            } else {
                prev(info)
            }
        }));
    });
}

/// An error message must be non-empty, start with the file's name and, when it gives a
/// line, give one inside the file.
fn check_message(what: &str, file: &str, src: &str, shown: &str, line: Option<usize>) -> Result<(), String> {
    if shown.trim().is_empty() {
        return Err(format!("{what}: empty error message"));
    }
    if !shown.starts_with(file) {
        return Err(format!("{what}: the error does not start with the file's name `{file}`: {shown}"));
    }
    let lines = src.lines().count().max(1);
    if let Some(l) = line {
        if l == 0 || l > lines + 1 {
            return Err(format!("{what}: line {l} is outside the file's {lines} lines: {shown}"));
        }
    }
    let rest = shown[file.len()..].trim_start_matches(|c: char| c == ':' || c.is_ascii_digit()).trim();
    if rest.is_empty() {
        return Err(format!("{what}: the error says nothing after the file and line: {shown}"));
    }
    Ok(())
}

/// What a case may cost: a scenario the loader estimates above it is refused before it
/// is built (a 65,536-leaf fabric, a 99,999,999,999 MiB collective), so no case aborts
/// the process and none takes long.
pub const LIMITS: scenario::Limits = scenario::Limits { max_memory: 512 << 20, max_events: 1_000_000_000, force: false };

/// Loads a scenario file's text (relative paths from `base`); it must load or give an
/// error that names the file.
pub fn check_scenario(file: &str, src: &str, base: &Path) -> Result<Outcome, String> {
    let r = no_panic(|| scenario::load_str_limited(file, src, base, &LIMITS))?;
    match r {
        Ok(_) => Ok(Outcome::Loaded),
        Err(e) => {
            let shown = e.to_string();
            check_message("scenario", file, src, &shown, e.line)?;
            if e.file != file {
                return Err(format!("the error names `{}`, not `{file}`: {shown}", e.file));
            }
            Ok(Outcome::Refused(shown))
        }
    }
}

/// What a case came to.
#[derive(Clone, Debug)]
pub enum Outcome {
    Loaded,
    Refused(String),
}

/// Reads a topology file's text with both readers; each must read it or give an error
/// naming the file (or, for an ibsim `include`, the included file) at a line inside it.
/// What reads is written back as an ibsim net file, which must read again. Then a
/// scenario with that fabric as its `[topology] path` is loaded from `dir`.
pub fn check_topology(file: &Path, src: &str, scenario_src: &str, dir: &Path) -> Result<Outcome, String> {
    // Named beside its seed, so that `include`s resolve there, but not as the seed: a
    // mutated file that includes its seed by name includes the file on disk.
    let file = &file.with_file_name(format!("mutated-{}", file.file_name().and_then(|n| n.to_str()).unwrap_or("")));
    let name = file.display().to_string();
    let check =
        |what: &str, r: Result<scenario::topofile::IbTopology, scenario::topofile::TopoFileError>| -> Result<Option<scenario::topofile::IbTopology>, String> {
            match r {
                Ok(t) => Ok(Some(t)),
                Err(e) => {
                    let shown = e.to_string();
                    if e.file == name {
                        check_message(what, &name, src, &shown, (e.line > 0).then_some(e.line))?;
                    } else {
                        // An included file, which sits next to this one.
                        let inc = Path::new(&e.file);
                        if inc.parent() != file.parent() {
                            return Err(format!("{what}: the error names `{}`, neither `{name}` nor a file beside it: {shown}", e.file));
                        }
                        check_message(what, &e.file, "", &shown, None)?;
                    }
                    Ok(None)
                }
            }
        };
    let a = check("ibnetdiscover", no_panic(|| scenario::topofile::ibnetdiscover::read_str(&name, src))?)?;
    let b = check("ibsim", no_panic(|| scenario::topofile::ibsim::read_str(&name, src))?)?;
    for (what, t) in [("ibnetdiscover", &a), ("ibsim", &b)] {
        let Some(t) = t else { continue };
        let written = no_panic(|| scenario::topofile::ibsim::write(&t.topo, &t.layout))?;
        if let Ok(text) = written {
            let back = no_panic(|| scenario::topofile::ibsim::read_str("written.net", &text))?;
            if let Err(e) = back {
                return Err(format!("{what}: read, written as an ibsim net file, does not read back: {e}\n--- written ---\n{text}"));
            }
        }
    }
    // Through a scenario: the format is guessed (`read_any`), the fabric compiled and routed.
    let ext = if scenario::topofile::ibnetdiscover::looks_like(src) { "ibnetdiscover" } else { "net" };
    let topo_name = format!("fuzz.{ext}");
    std::fs::write(dir.join(&topo_name), src).map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
    let scen = scenario_src.replace("fabric-2level.ibnetdiscover", &topo_name);
    let scen_file = dir.join("fuzz.toml").display().to_string();
    let out = check_scenario(&scen_file, &scen, dir)?;
    Ok(out)
}

/// A fresh directory for one thread's topology cases, with the files an ibsim seed
/// includes.
pub fn scratch_dir(root: &Path, tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fabriclab-fuzz-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let data = root.join("crates/scenario/tests/data");
    for f in ["ibsim-2sw-part.net", "ibsim-2sw.net"] {
        std::fs::copy(data.join(f), dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    dir
}

/// The input shown when a case fails.
pub fn show(file: &str, text: &str) -> String {
    let mut s = String::new();
    let _ = write!(s, "\n--- {file} ({} bytes) ---\n{text}\n--- end of {file} ---", text.len());
    s
}
