//! The routing engines' output frozen: a digest of every switch's forwarding table (and of
//! dfsssp's SL table) per engine on a set of small fabrics, recorded with the engines as
//! they were before the speed work of issue 17 (commit 0e246b4). A change meant to make an
//! engine faster must keep every table byte for byte; any differing entry changes the
//! digest.
//!
//! The fabrics cover each engine's branches: fat trees of 4 to 16 ports per switch,
//! leaf-spines with parallel uplinks (port groups of several ports) and with two rails, a
//! failed fabric link (ftree from given roots) and a failed host link (a leaf with fewer
//! CAs, so ftree routes dummy targets), SHARP aggregation nodes, LMC > 0, and rings and
//! tori (dfsssp needs VLs there and leaves its layered shortcut for the heap Dijkstra;
//! ftree refuses them and falls back to minhop).
//!
//! The k=32 fat tree (`fabriclab sm --bench`'s fabric) is checked the same way by an
//! ignored test: `cargo test --release -p fabriclab-fabric --test sm_identity -- --ignored`.

mod sm_util;

use fabric::subnet_manager::layout::IbLayout;
use fabric::subnet_manager::{Engine, SmConfig, SubnetManager};
use fabric::topology::{PortId, Topology};
use sm_util::L;

/// FNV-1a, 64 bits (Fowler, Noll, Vo; the offset basis and prime of the published
/// FNV-1a 64 parameters).
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn u64(&mut self, x: u64) {
        self.bytes(&x.to_le_bytes());
    }
}

/// GUIDs of the switches whose name starts with `prefix`.
fn guids(t: &Topology, prefix: &str) -> Vec<u64> {
    IbLayout::synthesize(t).nodes.iter().filter(|n| n.switch && n.name.starts_with(prefix)).map(|n| n.guid).collect()
}

/// Brings the SM up with `engine` (re-sweeping after `down` fails, when given) and digests
/// what it programmed: the engine used, the roots, the tables, dfsssp's SLs. Returns the
/// engine that routed (minhop after a fallback) and the digest.
fn digest(t: &Topology, engine: Engine, lmc: u8, roots: &[u64], down: &[PortId]) -> (&'static str, u64) {
    let mut sm = SubnetManager::new(t, SmConfig { engine, lmc, roots: roots.to_vec(), ..Default::default() });
    sm.bring_up();
    if !down.is_empty() {
        sm.resweep(down);
    }
    let st = sm.state().expect("the SM found the fabric");
    let r = &st.routed;
    let mut h = Fnv::new();
    h.bytes(r.engine.name().as_bytes());
    h.u64(r.fallback.is_some() as u64);
    h.u64(r.roots.len() as u64);
    for &s in &r.roots {
        h.u64(s as u64);
    }
    h.u64(r.tables.nlid as u64);
    h.bytes(&r.tables.lft);
    if let Some(sl) = &r.sl {
        h.u64(sl.vls_needed as u64);
        h.bytes(&sl.split);
        h.bytes(&sl.vl);
    }
    (r.engine.name(), h.0)
}

/// A port of `t` by node name and 0-based port index.
fn port(t: &Topology, node: &str, index: u32) -> PortId {
    let n = (0..t.nodes.len() as u32).map(fabric::topology::NodeId).find(|&n| t.node(n).name == node).expect("node exists");
    t.port_of(n, index)
}

struct Case {
    name: &'static str,
    topo: Topology,
    engines: &'static [Engine],
    lmc: u8,
    roots: Vec<u64>,
    down: Vec<PortId>,
}

const ALL: &[Engine] = &Engine::ALL;

fn cases() -> Vec<Case> {
    let case = |name, topo, engines, lmc| Case { name, topo, engines, lmc, roots: vec![], down: vec![] };
    let ft8 = Topology::fat_tree(8, L, L).unwrap();
    let mut v = vec![
        case("fat-tree-4", Topology::fat_tree(4, L, L).unwrap(), ALL, 0),
        case("fat-tree-8", ft8.clone(), ALL, 0),
        case("fat-tree-12", Topology::fat_tree(12, L, L).unwrap(), ALL, 0),
        case("fat-tree-16", Topology::fat_tree(16, L, L).unwrap(), ALL, 0),
        case("leaf-spine-8x4-uplinks-2", Topology::leaf_spine(8, 4, 6, 1, 2, L, L).unwrap(), ALL, 0),
        case("leaf-spine-8x3-rails-2", Topology::leaf_spine(8, 3, 5, 2, 1, L, L).unwrap(), ALL, 0),
        case("fat-tree-8-sharp", ft8.with_aggregation_nodes().unwrap(), ALL, 0),
        case("fat-tree-4-lmc-2", Topology::fat_tree(4, L, L).unwrap(), &[Engine::Minhop, Engine::Updn, Engine::Dfsssp], 2),
        case("ring-6", Topology::ring(6, 1, L, L).unwrap(), ALL, 0),
        case("ring-9", Topology::ring(9, 2, L, L).unwrap(), ALL, 0),
        case("torus-5x3", Topology::torus_2d(5, 3, 2, L, L).unwrap(), ALL, 0),
        case("torus-4x4", Topology::torus_2d(4, 4, 1, L, L).unwrap(), ALL, 0),
    ];
    let roots = guids(&ft8, "core");
    v.push(Case { name: "fat-tree-8-fabric-link-down", roots: roots.clone(), down: vec![port(&ft8, "edge0-0", 4)], ..case("", ft8.clone(), ALL, 0) });
    v.push(Case { name: "fat-tree-8-host-link-down", roots, down: vec![port(&ft8, "edge1-2", 1)], ..case("", ft8.clone(), ALL, 0) });
    v.push(Case { name: "fat-tree-8-host-link-down-no-roots", down: vec![port(&ft8, "edge1-2", 1)], ..case("", ft8, ALL, 0) });
    v
}

/// Digests recorded at commit 0e246b4: (case, engine asked for, engine that routed,
/// digest).
const GOLDEN: &[(&str, &str, &str, u64)] = &[
    ("fat-tree-4", "minhop", "minhop", 0xecdc941d6748b645),
    ("fat-tree-4", "updn", "updn", 0x91b818ebf52ffb6d),
    ("fat-tree-4", "ftree", "ftree", 0x6f14cbb18dc2688c),
    ("fat-tree-4", "dfsssp", "dfsssp", 0x5fdde5287f4f5391),
    ("fat-tree-8", "minhop", "minhop", 0xf08d041c2526ca79),
    ("fat-tree-8", "updn", "updn", 0x4e74df7b4ad35de5),
    ("fat-tree-8", "ftree", "ftree", 0x1397466748ca2b66),
    ("fat-tree-8", "dfsssp", "dfsssp", 0x54e0f949d214eb35),
    ("fat-tree-12", "minhop", "minhop", 0x8bd609faf152b76b),
    ("fat-tree-12", "updn", "updn", 0x116b4e7b900305d3),
    ("fat-tree-12", "ftree", "ftree", 0x2be3ca26833d39fa),
    ("fat-tree-12", "dfsssp", "dfsssp", 0xa090dbd9c628d167),
    ("fat-tree-16", "minhop", "minhop", 0xf79fb96fad919ff0),
    ("fat-tree-16", "updn", "updn", 0xcc3753feb7ff208c),
    ("fat-tree-16", "ftree", "ftree", 0xe835ad84c1bdb1ef),
    ("fat-tree-16", "dfsssp", "dfsssp", 0x19838a525e322427),
    ("leaf-spine-8x4-uplinks-2", "minhop", "minhop", 0x703737d27a281dd9),
    ("leaf-spine-8x4-uplinks-2", "updn", "updn", 0x1b5114cd0eb761d9),
    ("leaf-spine-8x4-uplinks-2", "ftree", "ftree", 0xd7ef4d6d7e978c80),
    ("leaf-spine-8x4-uplinks-2", "dfsssp", "dfsssp", 0xbb5c043c712cb7aa),
    ("leaf-spine-8x3-rails-2", "minhop", "minhop", 0xaafa32ff10908ff9),
    ("leaf-spine-8x3-rails-2", "updn", "updn", 0xf586dd697ffa90d9),
    ("leaf-spine-8x3-rails-2", "ftree", "ftree", 0x2c9bbfe6d02546d8),
    ("leaf-spine-8x3-rails-2", "dfsssp", "dfsssp", 0x8dc684b516e1db94),
    ("fat-tree-8-sharp", "minhop", "minhop", 0x67827b37badedf38),
    ("fat-tree-8-sharp", "updn", "updn", 0x48ac20369ddb69ca),
    ("fat-tree-8-sharp", "ftree", "ftree", 0xb15574fd09f27441),
    ("fat-tree-8-sharp", "dfsssp", "dfsssp", 0x7fb25cce8056180f),
    ("fat-tree-4-lmc-2", "minhop", "minhop", 0x46359e7e84d2955e),
    ("fat-tree-4-lmc-2", "updn", "updn", 0x7040ed6c22b864fe),
    ("fat-tree-4-lmc-2", "dfsssp", "dfsssp", 0x21170737911e78e0),
    ("ring-6", "minhop", "minhop", 0xecc5bef9dfc5df99),
    ("ring-6", "updn", "minhop", 0x77e7bf8919813800),
    ("ring-6", "ftree", "minhop", 0x77e7bf8919813800),
    ("ring-6", "dfsssp", "dfsssp", 0x42cb49965f81ce67),
    ("ring-9", "minhop", "minhop", 0xd2100cc6bd31a51c),
    ("ring-9", "updn", "minhop", 0x2158820680be5255),
    ("ring-9", "ftree", "minhop", 0x2158820680be5255),
    ("ring-9", "dfsssp", "dfsssp", 0xbad550df5b354256),
    ("torus-5x3", "minhop", "minhop", 0x4f2f6f217dd9cdd6),
    ("torus-5x3", "updn", "minhop", 0x3ee4cff46c841983),
    ("torus-5x3", "ftree", "minhop", 0x3ee4cff46c841983),
    ("torus-5x3", "dfsssp", "dfsssp", 0x87e833a17a113bbc),
    ("torus-4x4", "minhop", "minhop", 0x64d46b2dc237ad68),
    ("torus-4x4", "updn", "minhop", 0x2c1b7a1e40210d31),
    ("torus-4x4", "ftree", "minhop", 0x2c1b7a1e40210d31),
    ("torus-4x4", "dfsssp", "dfsssp", 0x7a923118ae97df3c),
    ("fat-tree-8-fabric-link-down", "minhop", "minhop", 0x9cf98e67e5b887b8),
    ("fat-tree-8-fabric-link-down", "updn", "updn", 0x12ba8a44bd513661),
    ("fat-tree-8-fabric-link-down", "ftree", "ftree", 0x9bdb691a20408544),
    ("fat-tree-8-fabric-link-down", "dfsssp", "dfsssp", 0x853f95b4153feb05),
    ("fat-tree-8-host-link-down", "minhop", "minhop", 0x482706782f3542d1),
    ("fat-tree-8-host-link-down", "updn", "updn", 0x02b6dbc3cbc4bbbd),
    ("fat-tree-8-host-link-down", "ftree", "ftree", 0xbe72c773563c44a7),
    ("fat-tree-8-host-link-down", "dfsssp", "dfsssp", 0x5ed9a51e0b5f5f2a),
    ("fat-tree-8-host-link-down-no-roots", "minhop", "minhop", 0x482706782f3542d1),
    ("fat-tree-8-host-link-down-no-roots", "updn", "updn", 0x02b6dbc3cbc4bbbd),
    ("fat-tree-8-host-link-down-no-roots", "ftree", "ftree", 0xbe72c773563c44a7),
    ("fat-tree-8-host-link-down-no-roots", "dfsssp", "dfsssp", 0x5ed9a51e0b5f5f2a),
    ("fat-tree-32", "minhop", "minhop", 0x3768ecc2ce8441de),
    ("fat-tree-32", "updn", "updn", 0x820ec5a63df3c651),
    ("fat-tree-32", "ftree", "ftree", 0x1755c7041032a5fe),
    ("fat-tree-32", "dfsssp", "dfsssp", 0xa337133962c339d3),
];

type Got = (String, &'static str, (&'static str, u64));

fn check(got: &[Got]) {
    let mut bad = vec![];
    for (case, engine, (used, d)) in got {
        match GOLDEN.iter().find(|g| g.0 == case && g.1 == *engine) {
            Some(g) if g.2 == *used && g.3 == *d => {}
            Some(g) => bad.push(format!("{case} {engine}: routed by {used}, digest {d:#018x}; recorded {} {:#018x}", g.2, g.3)),
            None => bad.push(format!("(\"{case}\", \"{engine}\", \"{used}\", {d:#018x}),")),
        }
    }
    assert!(bad.is_empty(), "tables differ from the recorded ones:\n{}", bad.join("\n"));
}

#[test]
fn tables_are_unchanged_on_the_small_fabrics() {
    let mut got = vec![];
    for c in cases() {
        for &e in c.engines {
            got.push((c.name.to_string(), e.name(), digest(&c.topo, e, c.lmc, &c.roots, &c.down)));
        }
    }
    assert_eq!(got.len(), 14 * 4 + 3);
    check(&got);
}

#[test]
#[ignore = "k=32 fat tree: 8,192 hosts; run with --release"]
fn tables_are_unchanged_on_the_k32_fat_tree() {
    let t = Topology::fat_tree(32, L, L).unwrap();
    let got: Vec<Got> = Engine::ALL.iter().map(|&e| ("fat-tree-32".to_string(), e.name(), digest(&t, e, 0, &[], &[]))).collect();
    check(&got);
}
