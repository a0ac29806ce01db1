//! Bad scenario files get errors that name the file, the line, the field and what is expected.

// The scenario-text builders the simulator's tests share.
#[path = "../../fabric/tests/common.rs"]
mod common;
use common::*;

fn err(s: &str) -> String {
    match scenario::load_str("bad.toml", s) {
        Ok(_) => panic!("accepted a bad scenario"),
        Err(e) => e.to_string(),
    }
}

fn base() -> String {
    scenario(
        LEAF_SPINE,
        "forwarding = \"store-and-forward\"\necn = [{ queue = 3, kmin = \"100KB\", kmax = \"400KB\", pmax = 0.2 }]\ndcqcn = { preset = \"paper\" }",
        BUFFER,
        "[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 8\nsize = \"1MB\"\nat = \"0us\"\ndscp = 26\n",
    )
}

#[test]
fn base_is_valid() {
    load(&base());
}

#[test]
fn bare_number_without_unit() {
    let s = base().replace("size = \"1MB\"", "size = 1000000");
    let e = err(&s);
    assert!(e.starts_with("bad.toml:"), "{e}");
    assert!(e.contains("traffic[0]"), "{e}");
    assert!(e.contains("has no unit"), "{e}");
    // The line named is the offending one (serde loses the field name inside tagged enums).
    let line: usize = e.split(':').nth(1).unwrap().parse().expect("a line number");
    assert!(s.lines().nth(line - 1).unwrap().contains("size = 1000000"), "{e}");
}

#[test]
fn unknown_field() {
    let e = err(&base().replace("cnp_dscp = 48", "cnp_dscp = 48\ncnp_dcsp = 48"));
    assert!(e.contains("unknown field `cnp_dcsp`"), "{e}");
    assert!(e.contains("bad.toml:"), "{e}");
}

#[test]
fn kmin_above_kmax() {
    let e = err(&base().replace("kmin = \"100KB\"", "kmin = \"500KB\""));
    assert!(e.contains("roce.ecn[0].kmin"), "{e}");
    assert!(e.contains("above kmax"), "{e}");
    let line: usize = e.split(':').nth(1).unwrap().parse().expect("a line number");
    assert!(base().lines().nth(line - 1).unwrap().contains("kmin"), "{e}");
}

#[test]
fn headroom_larger_than_buffer() {
    let e = err(&base().replace("headroom = \"auto\"", "headroom = \"2MB\""));
    assert!(e.contains("buffer.total") && e.contains("leave no shared buffer"), "{e}");
}

#[test]
fn link_to_missing_node_and_port_twice() {
    let topo = r#"
[topology]
kind = "explicit"
nodes = [{ name = "h0", kind = "host" }, { name = "h1", kind = "host" }, { name = "s0", kind = "switch", ports = 4 }]
links = [
  { a = "h0", b = "s0:0", speed = "100Gbps", cable = "2m" },
  { a = "h1", b = "s9:1", speed = "100Gbps", cable = "2m" },
]
"#;
    let s = scenario(
        topo,
        "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }",
        BUFFER,
        "[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 1\nsize = \"1MB\"\nat = \"0us\"\ndscp = 26\n",
    );
    let e = err(&s);
    assert!(e.contains("topology.links[1].b") && e.contains("no node named `s9`"), "{e}");
    let e = err(&s.replace("s9:1", "s0:0"));
    assert!(e.contains("port 0 of `s0` is used by two links"), "{e}");
}

#[test]
fn impossible_values() {
    assert!(err(&base().replace("mtu = \"4096B\"", "mtu = \"9000B\"")).contains("not an IB path MTU"));
    assert!(err(&base().replace("dst = 8", "dst = 99")).contains("host 99 does not exist"));
    assert!(err(&base().replace("speed = \"100Gbps\", cable = \"3m\"", "speed = \"1Gbps\", cable = \"3m\"")).contains("outside 10Gbps..800Gbps"));
    assert!(err(&base().replace("preset = \"paper\"", "preset = \"fast\"")).contains("unknown preset"));
}

#[test]
fn an_error_line_is_never_a_comment() {
    let src = "# algorithm = \"ring\" would be the default\n[scenario]\nname = \"x\"\nseed = 1\n";
    assert_eq!(scenario::locate(src, "traffic[0].algorithm"), None);
    let src = format!("{src}# seed = 2\n[[traffic]]\nalgorithm = \"sharp\"\n");
    assert_eq!(scenario::locate(&src, "traffic[0].algorithm"), Some(7));
}

/// DCQCN: a preset or rule that does not exist is named with what is accepted; ns-3's grid
/// needs an interval; `hpcc-ns3` needs one NIC speed to scale R_AI/R_HAI from.
#[test]
fn bad_dcqcn_rules() {
    let dcqcn = |table: &str| err(&base().replace("dcqcn = { preset = \"paper\" }", &format!("dcqcn = {{ {table} }}")));
    let e = dcqcn("preset = \"connectx\"");
    assert!(e.contains("roce.dcqcn.preset") && e.contains("hpcc-ns3") && e.contains("nvidia-default"), "{e}");
    let e = dcqcn("preset = \"paper\", cnp_scope = \"switch\"");
    assert!(e.starts_with("bad.toml:") && e.contains("switch") && e.contains("`qp`") && e.contains("`port`"), "{e}");
    let e = dcqcn("preset = \"paper\", rate_reduce_timing = \"grid\"");
    assert!(e.contains("roce.dcqcn.rate_reduce_interval") && e.contains("grid"), "{e}");
    let e = dcqcn("preset = \"nvidia-default\", retime = \"yes\"");
    assert!(e.starts_with("bad.toml:") && e.contains("boolean"), "{e}");
    let mixed = base()
        .replace("dcqcn = { preset = \"paper\" }", "dcqcn = { preset = \"hpcc-ns3\" }")
        .replace("[topology]\nkind = \"leaf-spine\"", "[topology]\nkind = \"explicit\"");
    let mixed = mixed.split("[topology]").next().unwrap().to_string()
        + r#"[topology]
kind = "explicit"
nodes = [{ name = "a", kind = "host" }, { name = "b", kind = "host" }, { name = "s0", kind = "switch", ports = 2 }]
links = [
  { a = "a", b = "s0:0", speed = "100Gbps", cable = "5m" },
  { a = "b", b = "s0:1", speed = "400Gbps", cable = "5m" },
]
"# + &mixed[mixed.find("[roce]").unwrap()..].replace("dst = 8", "dst = 1");
    let e = err(&mixed);
    assert!(e.contains("roce.dcqcn.preset") && e.contains("more than one speed") && e.contains("rate_ai"), "{e}");
    load(&mixed.replace("preset = \"hpcc-ns3\"", "preset = \"hpcc-ns3\", rate_ai = \"40Mbps\", rate_hai = \"400Mbps\""));
}
