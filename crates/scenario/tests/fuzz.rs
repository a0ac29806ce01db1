//! Fuzzing the scenario loader and the topology readers: seed files (every example
//! scenario, the seeds in `tests/data/fuzz/`, the topology files) mutated the way a new
//! user gets them wrong, each case loaded; nothing may panic, every error must name the
//! file (and a line inside it).
//! Mutations and checks are in `fuzz/harness.rs`, shared with the `cargo fuzz` targets.
//!
//! Deterministic: a fixed number of cases (`FABRICLAB_FUZZ_CASES`, default
//! [`DEFAULT_CASES`]) from a fixed seed (`FABRICLAB_FUZZ_SEED`, default 15) through
//! proptest's ChaCha generator. A long run: `docs/checks.md`, "Fuzzing".

#[path = "fuzz/harness.rs"]
mod harness;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use harness::{check_scenario, check_topology, mutate_scenario, mutate_topology, scratch_dir, show, Choices, Outcome, Policy, Seeds};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use scenario::topofile::{ibnetdiscover, ibsim, IbTopology, TopoFileError};

/// Cases per target when `FABRICLAB_FUZZ_CASES` is not set: a few seconds in a debug build.
const DEFAULT_CASES: u32 = 1000;
const DEFAULT_SEED: u64 = 15;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v.trim().parse().unwrap_or_else(|_| panic!("{name}={v}: expected a whole number")),
        _ => default,
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository")
}

/// A runner of `FABRICLAB_FUZZ_CASES` cases on ChaCha seeded from `FABRICLAB_FUZZ_SEED`
/// and `salt` (each target its own stream). No regression files: the fixed inputs below
/// are the regressions.
fn runner(salt: u64) -> TestRunner {
    let cases = env_u64("FABRICLAB_FUZZ_CASES", DEFAULT_CASES as u64) as u32;
    let seed = env_u64("FABRICLAB_FUZZ_SEED", DEFAULT_SEED);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&salt.to_le_bytes());
    let config = Config { cases, rng_algorithm: RngAlgorithm::ChaCha, failure_persistence: None, max_shrink_iters: 256, ..Config::default() };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// How the cases went, printed at the end (`--nocapture`). With
/// `FABRICLAB_FUZZ_KEEP_GOING=1` a failing case does not stop the run: the first input of
/// each kind of failure is kept and all are shown at the end (a long run's survey).
#[derive(Default)]
struct Tally {
    keep_going: bool,
    loaded: Cell<u32>,
    refused: Cell<u32>,
    slowest: Cell<Duration>,
    slowest_case: RefCell<(String, String)>,
    failures: RefCell<BTreeMap<String, String>>,
}

impl Tally {
    fn new() -> Tally {
        Tally { keep_going: env_u64("FABRICLAB_FUZZ_KEEP_GOING", 0) != 0, ..Tally::default() }
    }

    /// Counts a case that took `took` and came to `r`; a failure fails it (the reason and
    /// the input), unless the run keeps going.
    fn case(&self, file: &str, text: &str, took: Duration, r: Result<Outcome, String>) -> Result<(), TestCaseError> {
        match r {
            Ok(Outcome::Loaded) => self.loaded.set(self.loaded.get() + 1),
            Ok(Outcome::Refused(_)) => self.refused.set(self.refused.get() + 1),
            Err(why) => {
                let shown = format!("{why}{}", show(file, text));
                if !self.keep_going {
                    return Err(TestCaseError::fail(shown));
                }
                // A kind of failure: its first line (a panic's location) without numbers.
                let kind: String = why.lines().next().unwrap_or("").chars().filter(|c| !c.is_ascii_digit()).take(100).collect();
                self.failures.borrow_mut().entry(kind).or_insert(shown);
            }
        }
        if took > self.slowest.get() {
            self.slowest.set(took);
            *self.slowest_case.borrow_mut() = (file.to_string(), text.to_string());
        }
        Ok(())
    }

    fn finish(&self, what: &str, r: Result<(), TestError<(usize, Vec<u8>)>>) {
        eprintln!(
            "fuzz {what}: {} loaded, {} refused with an error; slowest case {:?} ({})",
            self.loaded.get(),
            self.refused.get(),
            self.slowest.get(),
            self.slowest_case.borrow().0
        );
        if self.keep_going {
            let (file, text) = &*self.slowest_case.borrow();
            eprintln!("the slowest case:{}", show(file, text));
        }
        match r {
            Ok(()) => {}
            Err(TestError::Fail(why, (seed, bytes))) => panic!("{why}\n(seed file #{seed}, choice bytes {bytes:?})"),
            Err(e) => panic!("{e}"),
        }
        let failures = self.failures.borrow();
        if !failures.is_empty() {
            let all: Vec<&str> = failures.values().map(String::as_str).collect();
            panic!("{} kinds of failure:\n\n{}", failures.len(), all.join("\n\n"));
        }
    }
}

/// The choice bytes of a case: what the mutations decode.
fn case() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..160)
}

#[test]
fn seeds_load() {
    let seeds = Seeds::load(&root());
    for s in &seeds.scenarios {
        let file = s.path.display().to_string();
        match check_scenario(&file, &s.text, &seeds.examples) {
            Ok(Outcome::Loaded) => {}
            other => panic!("{file}: {other:?}"),
        }
    }
}

#[test]
fn fuzz_scenarios() {
    let seeds = Seeds::load(&root());
    let policy = Policy::from_env();
    let tally = Tally::new();
    let r = runner(1).run(&(0..seeds.scenarios.len(), case()), |(i, bytes)| {
        let seed = &seeds.scenarios[i];
        let text = mutate_scenario(&seed.text, policy, &mut Choices::new(&bytes));
        let file = seed.path.display().to_string();
        let t0 = Instant::now();
        let r = check_scenario(&file, &text, &seeds.examples);
        tally.case(&file, &text, t0.elapsed(), r)
    });
    tally.finish("scenarios", r);
}

#[test]
fn fuzz_topology_files() {
    let root = root();
    let seeds = Seeds::load(&root);
    let dir = scratch_dir(&root, "topology");
    let scenario_src = std::fs::read_to_string(seeds.examples.join("ib-from-ibnetdiscover.toml")).expect("the example");
    let tally = Tally::new();
    let r = runner(2).run(&(0..seeds.topologies.len(), case()), |(i, bytes)| {
        let seed = &seeds.topologies[i];
        let text = mutate_topology(&seed.text, &mut Choices::new(&bytes));
        let t0 = Instant::now();
        let r = check_topology(&seed.path, &text, &scenario_src, &dir);
        tally.case(&seed.path.display().to_string(), &text, t0.elapsed(), r)
    });
    let _ = std::fs::remove_dir_all(&dir);
    tally.finish("topology files", r);
}

// ---------------------------------------------------------------------------------------
// Regressions: inputs the fuzzer found, each fixed with an error that says what is
// expected.

/// Example `seed` (as a seed: RoCE when it has both fabrics) with `from` replaced by `to`
/// is refused with an error naming the file and a line that contains `at`, and
/// containing every one of `want`.
fn refused(seed: &str, from: &str, to: &str, at: &str, want: &[&str]) {
    let seeds = Seeds::load(&root());
    let src = &seeds.scenarios.iter().find(|s| s.path.ends_with(seed)).expect("the example").text;
    assert!(src.contains(from), "{seed} has no `{from}`");
    let text = src.replacen(from, to, 1);
    let file = seeds.examples.join(seed).display().to_string();
    match check_scenario(&file, &text, &seeds.examples) {
        Ok(Outcome::Refused(e)) => {
            for w in want {
                assert!(e.contains(w), "expected `{w}` in: {e}");
            }
            let line: usize = e[file.len() + 1..].split(':').next().and_then(|l| l.parse().ok()).unwrap_or_else(|| panic!("no line in: {e}"));
            assert!(text.lines().nth(line - 1).is_some_and(|l| l.contains(at)), "line {line} does not hold `{at}`: {e}");
        }
        other => panic!("{seed} with `{to}`: {other:?}"),
    }
}

/// A cable of 2^64 − 1 mm overflowed the propagation delay and the headroom's sum.
#[test]
fn cable_too_long() {
    refused(
        "roce-incast.toml",
        "host_link = { speed = \"100Gbps\", cable = \"3m\" }",
        "host_link = { speed = \"100Gbps\", cable = \"18446744073709551615mm\" }",
        "host_link",
        &["topology.host_link.cable", "expected at most 1000km"],
    );
    refused("roce-incast.toml", "cable = \"3m\"", "delay = \"1s\"", "host_link", &["topology.host_link.delay", "expected at most 5ms"]);
}

/// Topology file `seed` (relative to the repository) with `from` replaced by `to`, read by
/// `read`: the error, which must name the file, and the text.
fn topo_refused(seed: &str, from: &str, to: &str, read: fn(&str, &str) -> Result<IbTopology, TopoFileError>) -> (TopoFileError, String) {
    let path = root().join(seed);
    let src = std::fs::read_to_string(&path).expect("the seed");
    assert!(src.contains(from), "{seed} has no `{from}`");
    let text = src.replacen(from, to, 1);
    let file = path.display().to_string();
    let e = read(&file, &text).err().unwrap_or_else(|| panic!("{seed} with `{to}` was read"));
    assert!(e.to_string().starts_with(&format!("{file}:{}: ", e.line)), "{e}");
    (e, text)
}

/// An InfiniBand fabric with no links panicked looking for the generation of its fastest
/// link (`switch_latency = "auto"`).
#[test]
fn ib_fabric_without_links() {
    refused(
        "ib-incast.toml",
        "kind = \"leaf-spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 8\nhost_link = { speed = \"100Gbps\", cable = \"3m\" }\nfabric_link = { speed = \"100Gbps\", cable = \"20m\" }",
        "kind = \"explicit\"\nnodes = [{ name = \"s0\", kind = \"switch\", ports = 4 }]\nlinks = []",
        "switch_latency =",
        &["infiniband.switch_latency: \"auto\" is the datasheet latency of the fastest link's generation, but the fabric has no links"],
    );
}

/// A PFC response time of 2^64 − 1 ps overflowed the headroom window's sum.
#[test]
fn pfc_response_longer_than_a_pause() {
    refused(
        "roce-incast.toml",
        "response = \"auto\"",
        "response = \"18446744073709551615ps\"",
        "pfc =",
        &["roce.pfc.response: a response time of 18446744.074s; expected at most 3.355ms, the longest pause (65535 quanta at 10 Gb/s"],
    );
}

/// A switch latency of 2^64 − 1 ps overflowed the headroom window's sum (RoCE).
#[test]
fn switch_latency_too_long() {
    let huge = "switch_latency = \"18446744073709551615ps\"";
    let want = "a switch latency of 18446744.074s; expected at most 1ms";
    refused("roce-incast.toml", "switch_latency = \"0ns\"", huge, "switch_latency", &["roce.switch_latency: ", want]);
    refused("ib-incast.toml", "switch_latency = \"auto\"", huge, "switch_latency", &["infiniband.switch_latency: ", want]);
}

/// A fault at 2^64 − 1 ps with a duration overflowed its end time.
#[test]
fn fault_ends_after_time_itself() {
    refused(
        "routing-loop.toml",
        "at = \"20us\"\nduration = \"200us\"",
        "at = \"18446744073709551615ps\"\nduration = \"200us\"",
        "duration =",
        &["faults[0].duration: at 18446744.074s + duration 200us ends after the last time there is, 18446744.074s"],
    );
}

/// A chunk of 2^64 − 1 bytes overflowed the bytes of a ring loop (chunk × ranks); the
/// loader now refuses chunks above the largest RDMA message first, and the workload
/// builds one loop (`workload`'s `chunk_past_2_pow_64_is_one_loop`).
#[test]
fn chunk_of_2_pow_64() {
    refused(
        "allreduce-compare.toml",
        "chunk = \"512KiB\"",
        "chunk = \"18446744073709551615B\"",
        "chunk =",
        &["traffic[0].chunk: ", "is above the largest RDMA message, 2^31 bytes"],
    );
}

/// An incast's stagger × sender, or a background's start + duration, overflowed a start time.
#[test]
fn traffic_starting_after_time_itself() {
    refused(
        "roce-incast.toml",
        "size = \"1MB\"",
        "size = \"1MB\"\nstagger = \"18446744073709551615ps\"",
        "stagger =",
        &["traffic[0].stagger: sender 2 would start at start + 2 × stagger, after the last time there is, 18446744.074s"],
    );
    refused(
        "roce-incast-background.toml",
        "kind = \"background\"",
        "kind = \"background\"\nstart = \"18446744073709551615ps\"",
        "duration =",
        &["traffic[1].duration: start 18446744.074s + duration ", " ends after the last time there is, 18446744.074s"],
    );
}

/// A 1000-leaf InfiniBand leaf-spine gave its spines 1000 ports, which overflowed the
/// subnet manager's 8-bit port numbers.
#[test]
fn ib_switch_with_more_than_254_ports() {
    refused(
        "ib-incast.toml",
        "leaves = 4",
        "leaves = 1000",
        "[topology]",
        &["topology: switch `spine0` has 1000 ports; an InfiniBand switch has at most 254 (port numbers are 8 bits)"],
    );
    refused(
        "ib-sharp-allreduce.toml",
        "hosts_per_leaf = 4",
        "hosts_per_leaf = 250",
        "[topology]",
        &["topology: switch `leaf0` has 255 ports, its SHARP aggregation node's included; an InfiniBand switch has at most 254"],
    );
}

/// A fat tree of k = 2^32 − 1 overflowed the memory estimate's products (in u128); a
/// leaf-spine whose leaves need 2^32 ports overflowed the generator's port numbers
/// (`--force`, no limits).
#[test]
fn fabric_beyond_32_bit_ids() {
    refused(
        "roce-permutation.toml",
        "k = 8",
        "k = 4294967295",
        "k =",
        &["topology.k: the fabric would have ", "ports; at most 4294967295 of each (node and port ids are 32 bits)"],
    );
    let seeds = Seeds::load(&root());
    let src = std::fs::read_to_string(seeds.examples.join("roce-incast.toml")).unwrap().replacen("spines = 2", "spines = 65536\nuplinks_per_spine = 65536", 1);
    let e = scenario::load_str_limited("x.toml", &src, &seeds.examples, &scenario::Limits::none()).err().expect("refused");
    assert!(e.to_string().starts_with("x.toml:12: topology.leaves: the fabric would have 65572 nodes and 34359738432 ports"), "{e}");
}

/// A VL buffer of 1 TiB (2^34 blocks) was cut to 32 bits: 0 blocks, "holds 0 blocks"
/// (found reading the code the fuzzer reached, not by a panic).
#[test]
fn vl_buffer_past_32_bit_blocks() {
    refused(
        "ib-incast.toml",
        "vl_buffer = \"128KiB\"",
        "vl_buffer = \"1TiB\"",
        "vl_buffer =",
        &["infiniband.vl_buffer: 1099.512GB is 2^32 blocks of 64 B or more; expected fewer"],
    );
}

/// `oversubscription = nan` became 0 uplinks ("uplinks must be at least 1"), and a tiny
/// ratio saturated to 2^32 − 1 uplinks (found reading the code the fuzzer reached).
#[test]
fn oversubscription_not_a_ratio() {
    let topo = "spines = 2\nhosts_per_leaf = 8";
    let with = |o: &str| format!("{topo}\noversubscription = {o}");
    let nan = "topology.oversubscription: NaN; expected a positive ratio such as 1 or 2";
    refused("roce-incast.toml", topo, &with("nan"), "oversubscription", &[nan]);
    let tiny = "topology.oversubscription: 1e-20:1 needs 4.000e20 uplinks per spine; at most 4294967295";
    refused("roce-incast.toml", topo, &with("1e-20"), "oversubscription", &[tiny]);
}

/// A port of a switch with no ports ("z:0") panicked naming its range `0..nports − 1`.
#[test]
fn port_of_a_switch_without_ports() {
    let nodes = "  { name = \"s0\", kind = \"switch\", ports = 3 },\n";
    let with_z = "  { name = \"s0\", kind = \"switch\", ports = 3 },\n  { name = \"z\", kind = \"switch\", ports = 0 },\n";
    let fault = "[[faults]]\nkind = \"link-down\"\nlink = \"z:0\"\nat = \"1us\"\n";
    let seeds = Seeds::load(&root());
    let src = &seeds.scenarios.iter().find(|s| s.path.ends_with("deadlock-ring.toml")).unwrap().text;
    let text = src.replacen(nodes, with_z, 1).replacen("[roce]\n", "[roce]\nreroute_delay = \"1us\"\n", 1) + fault;
    let e = scenario::load_str_limited("x.toml", &text, &seeds.examples, &harness::LIMITS).err().expect("refused");
    assert!(e.to_string().contains("faults[0].link: `z` has no ports; port 0 does not exist"), "{e}");
    // On InfiniBand, an SL→VL table of a port of it.
    let src = &seeds.scenarios.iter().filter(|s| s.path.ends_with("deadlock-ring.toml")).nth(1).unwrap().text;
    let table = "[[infiniband.sl_to_vl_ports]]\nnode = \"z\"\nin_port = 0\nmap = { 0 = 0 }\n";
    let text = src.replacen(nodes, with_z, 1) + table;
    let e = scenario::load_str_limited("x.toml", &text, &seeds.examples, &harness::LIMITS).err().expect("refused");
    assert!(e.to_string().contains("infiniband.sl_to_vl_ports[0].in_port: `z` has no ports; port 0 does not exist"), "{e}");
}

/// An error in `faults[1].link` was reported at the first line holding `link =` in the
/// file: `host_link = …` (a key ending in the name), or `faults[0]`'s link (found by the
/// fuzz seeds' errors, which named the wrong lines).
#[test]
fn error_line_of_a_field_in_an_entry() {
    let fault = |link: &str| format!("[[faults]]\nkind = \"link-down\"\nlink = \"{link}\"\nat = \"1us\"\n");
    let one = format!("dscp = 26\n\n{}", fault("leaf0:99"));
    refused("roce-incast.toml", "dscp = 26\n", &one, "link = \"leaf0:99\"", &["faults[0].link: `leaf0` has 10 ports (0..9); port 99 does not exist"]);
    let two = format!("dscp = 26\n\n{}\n{}", fault("leaf0:1"), fault("leaf0:98"));
    refused("roce-incast.toml", "dscp = 26\n", &two, "link = \"leaf0:98\"", &["faults[1].link: `leaf0` has 10 ports (0..9); port 98 does not exist"]);
}

/// A flow-size CDF whose sizes are all 0 has mean 0: Poisson arrivals 0 ps apart, and the
/// background generator never reached the end of its duration (found reading the code
/// the fuzzer reached: its mutations do not touch CDF files).
#[test]
fn background_cdf_of_empty_flows() {
    let dir = std::env::temp_dir().join(format!("fabriclab-fuzz-{}-cdf", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("zero.cdf"), "0 0\n0 100\n").unwrap();
    let seeds = Seeds::load(&root());
    let src = &seeds.scenarios.iter().find(|s| s.path.ends_with("roce-incast-background.toml")).unwrap().text;
    let text = src.replacen("data/WebSearch_distribution.txt", "zero.cdf", 1).replacen("duration = \"2ms\"", "duration = \"1us\"", 1);
    let e = scenario::load_str_limited("x.toml", &text, &dir, &harness::LIMITS).err().expect("refused");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(e.to_string().contains("traffic[1].cdf: ") && e.to_string().ends_with("zero.cdf: its flows average 0 bytes; expected at least 1 byte"), "{e}");
}

/// A flow-size CDF reaching past the largest RDMA message drew background flows that the
/// simulator's 32-bit flow records could not hold (a panic while the simulator was built,
/// found reviewing the generated-collectives change): it is refused like any other entry's
/// message above 2^31 bytes, naming the file.
#[test]
fn background_cdf_above_the_largest_message() {
    let dir = std::env::temp_dir().join(format!("fabriclab-fuzz-{}-bigcdf", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("big.cdf"), "1000 0\n5000000000 100\n").unwrap();
    std::fs::write(dir.join("edge.cdf"), "1000 0\n2147483648 100\n").unwrap();
    let seeds = Seeds::load(&root());
    let src = &seeds.scenarios.iter().find(|s| s.path.ends_with("roce-incast-background.toml")).unwrap().text;
    let with = |cdf: &str| src.replacen("data/WebSearch_distribution.txt", cdf, 1).replacen("duration = \"2ms\"", "duration = \"1us\"", 1);
    let big = scenario::load_str_limited("x.toml", &with("big.cdf"), &dir, &harness::LIMITS).err().map(|e| e.to_string());
    let edge = scenario::load_str_limited("x.toml", &with("edge.cdf"), &dir, &harness::LIMITS).err().map(|e| e.to_string());
    let _ = std::fs::remove_dir_all(&dir);
    let big = big.expect("refused");
    assert!(
        big.contains("traffic[1].cdf: ") && big.ends_with("big.cdf: its largest flow, 5GB, is above the largest RDMA message, 2^31 bytes (2.147GB)"),
        "{big}"
    );
    assert_eq!(edge, None, "2^31 bytes is the largest message, and allowed");
}

/// A reserve of 2^64 − 1 bytes per port and PG overflowed the buffer budget's arithmetic.
#[test]
fn reserve_larger_than_anything() {
    refused(
        "roce-incast.toml",
        "reserved = \"0B\"",
        "reserved = \"18446744073709551615B\"",
        "total =",
        &["buffer.total: switch `leaf0`: reserved (1475739525896764129280B) + headroom (", ") leave no shared buffer in 16.777MB (10 ports)"],
    );
}

/// Two nodes with one GUID read (and could not be written back as an ibsim file).
#[test]
fn duplicate_node_guid() {
    let (e, text) = topo_refused(
        "examples/fabric-2level.ibnetdiscover",
        "switchguid=0x248a0703005c0c30(248a0703005c0c30)",
        "switchguid=0x0002c90300a1b200(248a0703005c0c30)",
        ibnetdiscover::read_str,
    );
    // Reported at the second node with the GUID, naming the first and its line.
    assert!(text.lines().nth(e.line - 1).unwrap().starts_with("Ca\t2 \"H-0002c90300a1b200\""), "{e}");
    let first = text.lines().position(|l| l.starts_with("Switch\t36 \"S-248a0703005c0c30\"")).unwrap() + 1;
    assert!(e.msg.contains(&format!("has GUID 0x2c90300a1b200, already the GUID of \"S-248a0703005c0c30\" (line {first}); node GUIDs are unique")), "{e}");
}

/// `include ""` named the directory, at line 0 of it, not the including line.
#[test]
fn include_a_directory() {
    let (e, text) = topo_refused("crates/scenario/tests/data/ibsim-2sw.net", "include \"ibsim-2sw-part.net\"", "include \"\"", ibsim::read_str);
    assert_eq!(text.lines().nth(e.line - 1), Some("include \"\""), "{e}");
    assert!(e.msg.ends_with("data/\" is a directory; expected a net file"), "{e}");
}

/// A link of 4294967295 lanes overflowed its rate (lanes × lane rate).
#[test]
fn link_width_not_an_ib_width() {
    let (e, text) = topo_refused("examples/fabric-2level.ibnetdiscover", "lid 6 4xHDR", "lid 6 4294967295xHDR", ibnetdiscover::read_str);
    assert!(text.lines().nth(e.line - 1).unwrap().contains("4294967295xHDR"), "{e}");
    assert_eq!(e.msg, "link width `4294967295xHDR`: expected 1x, 2x, 4x, 8x or 12x lanes");
    let (e, _) = topo_refused("examples/fabric-2level.ibnetdiscover", "lid 6 4xHDR", "lid 6 0xHDR", ibnetdiscover::read_str);
    assert_eq!(e.msg, "link width `0xHDR`: expected 1x, 2x, 4x, 8x or 12x lanes");
}

/// ibsim's `w=4294967298` was cut to 32 bits: read as `w=2`, a 4x link (found reading the
/// code the fuzzer reached).
#[test]
fn ibsim_mask_past_32_bits() {
    let (e, _) =
        topo_refused("crates/scenario/tests/data/ibsim-2sw.net", "[1]\t\"Switch1\"[1]\tw=2 e=8", "[1]\t\"Switch1\"[1]\tw=4294967298 e=8", ibsim::read_str);
    assert_eq!(e.msg, "option `w=4294967298`: 4294967298 is above 2^32 − 1; expected a mask");
}

/// GUIDs near 2^64 overflowed the next GUID (ibsim) or a CA's port GUIDs (both readers).
#[test]
fn guids_past_64_bits() {
    // The last GUID is a GUID: what follows it sets its own.
    let path = root().join("examples/fabric-2level.ibnetdiscover");
    let text = std::fs::read_to_string(&path).unwrap().replacen("switchguid=0x248a0703005c0a10(", "switchguid=0xffffffffffffffff(", 1);
    ibsim::read_str(&path.display().to_string(), &text).unwrap();
    let ca = "caguid=0x2c90300a1b200";
    let (e, _) = topo_refused("examples/fabric-2level.ibnetdiscover", ca, "caguid=0xfffffffffffffffe", ibnetdiscover::read_str);
    assert_eq!(e.msg, "\"H-0002c90300a1b200\" has GUID 0xfffffffffffffffe: its port GUIDs (GUID + port) pass 0xffffffffffffffff");
    let (e, _) = topo_refused("crates/scenario/tests/data/ibsim-2sw.net", "Hca\t2 \"H_1\"", "caguid=0xfffffffffffffffe\nHca\t2 \"H_1\"", ibsim::read_str);
    assert_eq!(e.msg, "\"H_1\" has GUID 0xfffffffffffffffe: its port GUIDs (GUID + port) pass 0xffffffffffffffff");
    let (e, _) = topo_refused(
        "crates/scenario/tests/data/ibsim-2sw.net",
        "Switch\t8 \"Switch1\"",
        "switchguid +0xffffffffffffffff\nSwitch\t8 \"Switch1\"",
        ibsim::read_str,
    );
    assert_eq!(e.msg, "no GUID for \"Switch1\": the one it would get passes 0xffffffffffffffff");
}
