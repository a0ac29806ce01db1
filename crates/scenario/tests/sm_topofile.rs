//! Topology files: ibnetdiscover output and ibsim net files read into a Topology with the
//! file's names, GUIDs, port numbers and speeds; the ibsim writer round-trips; bad files
//! give file:line errors.

// The subnet manager tests' route walker.
#[path = "../../fabric/tests/sm_util/mod.rs"]
mod sm_util;

use std::path::PathBuf;

use fabric::subnet_manager::layout::IbLayout;
use fabric::subnet_manager::{SmConfig, SubnetManager};
use fabric::topology::Topology;
use scenario::topofile::{ibnetdiscover, ibsim, IbTopology};
use sm_util::{walk, L};
use units::BitRate;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

type NamedLink = ((String, u8), (String, u8), u64);

/// (name, IB port) ↔ (name, IB port) and rate for every link, sorted.
fn named_links(x: &IbTopology) -> Vec<NamedLink> {
    let mut v = vec![];
    for (i, p) in x.topo.ports.iter().enumerate() {
        let Some(peer) = p.peer else { continue };
        let (a, ap) = x.layout.ib_port(fabric::topology::PortId(i as u32));
        let (b, bp) = x.layout.ib_port(peer);
        let s = (x.layout.nodes[a as usize].name.clone(), ap);
        let t = (x.layout.nodes[b as usize].name.clone(), bp);
        if s < t {
            v.push((s, t, p.rate.0));
        }
    }
    v.sort();
    v
}

fn routes_everything(x: &IbTopology) {
    let mut sm = SubnetManager::with_layout(x.topo.clone(), x.layout.clone(), SmConfig::default());
    let r = sm.bring_up();
    assert_eq!(r.nodes, x.layout.nodes.len());
    let n = x.topo.endpoints.len() as u32;
    for s in 0..n {
        for d in 0..n {
            if s != d {
                assert!(walk(&x.topo, sm.lft(), s, d).is_some(), "{s}->{d}");
            }
        }
    }
}

#[test]
fn reads_ibnetdiscover_output() {
    let x = ibnetdiscover::read(&data("ibnetdiscover-2level.txt")).unwrap();
    let lay = &x.layout;
    assert_eq!(lay.nodes.len(), 8);
    assert_eq!(lay.nodes.iter().filter(|n| n.switch).count(), 4);
    // Names are the quoted ids; descriptions are kept.
    let leaf1 = lay.node_by_name("S-248a0703005c0b20").unwrap() as usize;
    assert_eq!(lay.nodes[leaf1].guid, 0x248a0703005c0b20);
    assert_eq!(lay.nodes[leaf1].desc, "leaf1 SwitchIB Mellanox Technologies");
    assert_eq!(lay.nodes[leaf1].nports, 36);
    // A dual-port CA with both ports cabled is two endpoints: "id" and "id:2".
    assert!(lay.ep_names.contains(&"H-0002c90300a1b400".to_string()));
    assert!(lay.ep_names.contains(&"H-0002c90300a1b400:2".to_string()));
    assert_eq!(x.topo.endpoints.len(), 5);
    let n3 = lay.node_by_name("H-0002c90300a1b400").unwrap() as usize;
    assert_eq!(lay.nodes[n3].port_guids[2], 0x2c90300a1b402);
    assert_eq!(lay.nodes[n3].sys_guid, 0x2c90300a1b403);
    // Links with the file's port numbers and speeds (4xEDR = 100, 4xHDR = 200 Gb/s).
    let links = named_links(&x);
    assert_eq!(links.len(), 9);
    assert!(links.contains(&(("H-0002c90300a1b300".into(), 1), ("S-248a0703005c0b20".into(), 2), 200_000_000_000)));
    assert!(links.contains(&(("S-248a0703005c0a10".into(), 2), ("S-248a0703005c0c30".into(), 35), 100_000_000_000)));
    // Switch port n is topology port n−1 of that switch.
    let sw = lay.nodes[leaf1].topo_nodes[0];
    assert_eq!(x.topo.node(sw).nports, 36);
    assert_eq!(lay.nodes[leaf1].ports[35], Some(x.topo.port_of(sw, 34)));
    // The SM runs where ibnetdiscover was initiated from.
    let (smn, smp) = lay.sm;
    assert_eq!((lay.nodes[smn as usize].name.as_str(), smp), ("H-0002c90300a1b200", 1));
    routes_everything(&x);
}

#[test]
fn reads_ibsim_net_files_with_includes() {
    let x = ibsim::read(&data("ibsim-2sw.net")).unwrap();
    let lay = &x.layout;
    let guid = |n: &str| lay.nodes[lay.node_by_name(n).unwrap() as usize].guid;
    // ibsim's GUID allocation in file order (the include is read where it stands).
    assert_eq!(guid("Switch1"), 0x200000);
    assert_eq!(guid("Switch2"), 0x200001);
    assert_eq!(guid("H_1"), 0x100000);
    assert_eq!(guid("H_3"), 0x100003);
    assert_eq!(guid("H_4"), 0x100005);
    assert_eq!(guid("H_2"), 0x100007);
    assert_eq!(lay.nodes[lay.node_by_name("Switch2").unwrap() as usize].desc, "second switch");
    let links = named_links(&x);
    assert_eq!(links.len(), 6);
    assert!(links.contains(&(("H_2".into(), 2), ("Switch1".into(), 2), 400_000_000_000)), "w=2 e=8: 4x NDR");
    assert!(links.contains(&(("Switch1".into(), 3), ("Switch2".into(), 3), 200_000_000_000)), "w=2 e=4: 4x HDR");
    assert!(links.contains(&(("H_3".into(), 1), ("Switch2".into(), 5), scenario::topofile::DEFAULT_RATE.0)), "no options: default");
    // The SM is on the first node's first port.
    assert_eq!(lay.sm, (lay.node_by_name("H_1").unwrap(), 1));
    routes_everything(&x);
}

#[test]
fn ibsim_writer_round_trips_generated_and_read_topologies() {
    for t in [Topology::fat_tree(4, L, L).unwrap(), Topology::torus_2d(3, 3, 1, (BitRate::from_gbps(400), L.1), (BitRate::from_gbps(400), L.1)).unwrap()] {
        let lay = IbLayout::synthesize(&t);
        let text = ibsim::write(&t, &lay).unwrap();
        let back = ibsim::read_str("written.net", &text).unwrap();
        let orig = IbTopology { topo: t.clone(), layout: lay.clone() };
        assert_eq!(
            named_links(&back).into_iter().map(|l| (l.0, l.1)).collect::<Vec<_>>(),
            named_links(&orig).into_iter().map(|l| (l.0, l.1)).collect::<Vec<_>>()
        );
        // ibsim allocates the same GUIDs the synthesized layout uses.
        for n in &lay.nodes {
            let b = &back.layout.nodes[back.layout.node_by_name(&n.name).unwrap() as usize];
            assert_eq!((b.guid, b.switch, b.nports), (n.guid, n.switch, n.nports), "{}", n.name);
        }
        assert_eq!(back.layout.nodes[back.layout.sm.0 as usize].name, lay.nodes[lay.sm.0 as usize].name);
    }
    // A read file written back keeps names, GUIDs and speeds.
    let x = ibnetdiscover::read(&data("ibnetdiscover-2level.txt")).unwrap();
    let text = ibsim::write(&x.topo, &x.layout).unwrap();
    let back = ibsim::read_str("written.net", &text).unwrap();
    assert_eq!(named_links(&back), named_links(&x));
    for n in &x.layout.nodes {
        assert_eq!(back.layout.nodes[back.layout.node_by_name(&n.name).unwrap() as usize].guid, n.guid);
    }
}

fn bad(text: &str) -> String {
    ibsim::read_str("bad.net", text).unwrap_err().to_string()
}

#[test]
fn bad_files_name_file_line_and_expectation() {
    let e = bad("Switch 8 \"A\"\n[1] \"B\"[1]\n");
    assert!(e.starts_with("bad.net:2: no node \"B\""), "{e}");
    let e = bad("Switch 8 \"A\"\n[9] \"A\"[1]\n");
    assert!(e.starts_with("bad.net:2: port 9 does not exist: the node has ports 1..8"), "{e}");
    let e = bad("Switch eight \"A\"\n");
    assert!(e.starts_with("bad.net:1: Switch: expected the number of ports"), "{e}");
    let e = bad("Switch 8 A\n");
    assert!(e.starts_with("bad.net:1: Switch: expected a quoted node id"), "{e}");
    let e = bad("\n\nSwitch 4 \"A\"\n[1] \"B\"[1]\n\nSwitch 4 \"B\"\n[1] \"A\"[2]\n");
    assert!(e.starts_with("bad.net:7: "), "{e}");
    assert!(e.contains("is cabled to \"A\"[2] here, but line 4 cables it to \"A\"[1]"), "{e}");
    let e = bad("Switch 4 \"A\"\n\nSwitch 4 \"A\"\n");
    assert!(e.starts_with("bad.net:3: node \"A\" is defined twice (first at line 1)"), "{e}");
    let e = bad("Hca 1 \"x\"\n[1] \"y\"[1]\n\nHca 1 \"y\"\n[1] \"x\"[1]\n");
    assert!(e.contains("is cabled to CA"), "{e}");
    let e = bad("hello world\n");
    assert!(e.starts_with("bad.net:1: unexpected `hello world`"), "{e}");
    let e = bad("Switch 4 \"A\"\n[1] \"A\"[2] w=99\n");
    assert!(e.starts_with("bad.net:2: w=99"), "{e}");
    let e = bad("include \"missing.net\"\n");
    assert!(e.starts_with("bad.net:1: include: cannot find"), "{e}");
    let e = ibnetdiscover::read_str("ibnd.txt", "Switch 8 \"foo\"\n").unwrap_err().to_string();
    assert!(e.starts_with("ibnd.txt:1: cannot tell the GUID of \"foo\""), "{e}");
    let e = ibnetdiscover::read(&data("no-such-file")).unwrap_err().to_string();
    assert!(e.contains("no-such-file:0: cannot read"), "{e}");
}

mod never_panics {
    use proptest::prelude::*;

    /// Fragments of real lines, recombined at random: the readers must return Ok or a
    /// file:line error, never panic.
    const PIECES: &[&str] = &[
        "Switch",
        "Ca",
        "Hca",
        "Rt",
        " 8",
        " 0",
        " 300",
        " \"a\"",
        " \"b\"",
        " \"S-0002c90200402fd0\"",
        "\"",
        "[1]",
        "[0]",
        "[9]",
        "[",
        "]",
        "(2c9)",
        "(zz",
        "\"a\"[2]",
        "\"b\"[1]",
        " w=2",
        " e=8",
        " w=99",
        " s=0",
        "=",
        "#",
        " # \"desc\" lid 3 4xEDR",
        "switchguid=0x10",
        "caguid=+3",
        "sysimgguid=0x5",
        "vendid=0x2c9",
        "include \"x\"",
        "@",
        "\t",
        "é",
        "\n",
        "\n\n",
    ];

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(0..PIECES.len(), 0..60).prop_map(|v| v.into_iter().map(|i| PIECES[i]).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]
        #[test]
        fn readers_return_errors_not_panics(src in text()) {
            if let Err(e) = scenario::topofile::ibsim::read_str("p.net", &src) {
                prop_assert!(e.to_string().starts_with("p.net:"));
            }
            if let Err(e) = scenario::topofile::ibnetdiscover::read_str("p.txt", &src) {
                prop_assert!(e.to_string().starts_with("p.txt:"));
            }
        }
    }
}
