//! `plan::verify::simulate` on a small leaf-spine derived from a real SONiC config
//! (tests/data/sonic/leafspine, made by its make.py from sonic-utilities
//! `tests/counterpoll_input/config_db.json` at 691b1bbc4fd2b71657d1b0b334c37136deb51526:
//! the source's values on four ports per leaf and two per spine, new hostnames and
//! DEVICE_NEIGHBOR links). The scenario it writes must parse with the `scenario` crate and
//! run; a config that verifies clean must simulate clean, and a headroom finding must turn
//! into lossless drops at exactly the ports of that profile.

use plan::verify::simulate::{build, SimOptions, Simulation};
use plan::verify::{check, Input, Options, ReadError};
use serde_json::{json, Value};
use units::Bytes;

const SWITCHES: [&str; 4] = ["leaf1", "leaf2", "spine1", "spine2"];

fn fixture(name: &str) -> Value {
    let p = format!("{}/tests/data/sonic/leafspine/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(p).expect("fixture")).expect("json")
}

/// The leaf-spine with `edit(switch name, its JSON)` applied.
fn sources(edit: impl Fn(&str, &mut Value)) -> Vec<(String, String)> {
    SWITCHES
        .iter()
        .map(|s| {
            let mut v = fixture(s);
            edit(s, &mut v);
            (format!("{s}.json"), v.to_string())
        })
        .collect()
}

/// DSCP 3 (lossless under SONiC's AZURE map) and a 256 B cell: this test's assumptions,
/// since config_db holds neither the NICs' DSCP nor the ASIC's cell.
fn opts() -> Options {
    Options { roce_dscp: 3, cell: Some(Bytes(256)), ..Options::default() }
}

fn simulate(src: &[(String, String)]) -> Result<(Simulation, report::Report), ReadError> {
    let input = Input::read(src, &[], &[])?;
    let sim = build(&input, &opts(), &SimOptions::default())?;
    let w = scenario::load_str("verify-simulate.toml", &sim.scenario).unwrap_or_else(|e| panic!("{e}\n{}", sim.scenario));
    let (_, rep) = report::run(&w, false);
    Ok((sim, rep))
}

/// A port that dropped: switch, SONiC port, its lossless profile, drops by cause.
type Dropped = (String, String, Option<String>, Vec<(String, u64)>);

/// Ports that dropped packets, with the causes.
fn drop_ports(sim: &Simulation, rep: &report::Report) -> Vec<Dropped> {
    rep.ports
        .iter()
        .filter(|p| p.drops.iter().any(|(_, n)| *n > 0))
        .map(|p| {
            let s = sim.ports.iter().find(|s| s.node == p.node && s.index == p.port).expect("a switch port of the configuration");
            (s.switch.clone(), s.port.clone(), s.profile.clone(), p.drops.clone())
        })
        .collect()
}

#[test]
fn clean_leaf_spine_verifies_and_simulates_clean() {
    let src = sources(|_, _| {});
    let input = Input::read(&src, &[], &[]).unwrap();
    let r = check(&input, &opts()).unwrap();
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(r.switches.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), SWITCHES);
    let (sim, rep) = simulate(&src).unwrap();
    assert_eq!(sim.hosts, ["leaf1-Ethernet4", "leaf1-Ethernet8", "leaf2-Ethernet4", "leaf2-Ethernet8"]);
    assert_eq!((sim.receiver.as_str(), sim.senders.len()), ("leaf2-Ethernet8", 3));
    // The incast pauses (so headroom is exercised) and loses nothing.
    assert!(rep.totals.pfc_frames > 0, "no pause: the run does not test headroom");
    assert_eq!(rep.totals.lossless_drops, 0);
    assert_eq!(rep.totals.drops, 0, "{:?}", rep.totals.drops_by_cause);
    assert_eq!((rep.flows.count, rep.flows.completed), (3, 3));
    // One headroom for the fabric: the profiles' xoff are equal, so no per-port fault.
    assert!(!sim.scenario.contains("[[faults]]"), "{}", sim.scenario);
}

#[test]
fn headroom_finding_turns_into_drops_at_its_ports() {
    // One field: leaf2's 40 m profile (its uplinks) far below the IEEE need.
    let src = sources(|s, v| {
        if s == "leaf2" {
            v["BUFFER_PROFILE"]["pg_lossless_40000_40m_profile"]["xoff"] = json!("5120")
        }
    });
    let r = check(&Input::read(&src, &[], &[]).unwrap(), &opts()).unwrap();
    let got: Vec<_> = r.findings.iter().map(|f| (f.id, f.switch.as_str(), f.place.file.as_str(), f.place.path.as_str())).collect();
    // The same field differs from the S6000's pg_profile_lookup.ini row (55120 B): the
    // traditional model's warning at the same place.
    let place = "BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff";
    assert_eq!(got, [("headroom-below-ieee", "leaf2", "leaf2.json", place), ("headroom-vs-sonic", "leaf2", "leaf2.json", place)]);
    assert_eq!(r.findings[0].ports, ["Ethernet112", "Ethernet116"]);

    let (sim, rep) = simulate(&src).unwrap();
    assert!(rep.totals.lossless_drops > 0, "the short headroom lost nothing");
    let drops = drop_ports(&sim, &rep);
    assert!(!drops.is_empty());
    for (sw, port, profile, causes) in &drops {
        assert_eq!((sw.as_str(), profile.as_deref()), ("leaf2", Some("pg_lossless_40000_40m_profile")), "{drops:?}");
        assert!(r.findings[0].ports.contains(port), "{drops:?}");
        assert!(causes.iter().all(|(c, _)| c == "headroom-overflow"), "{causes:?}");
    }
    // The uplink that carries the incast from spine1 (ECMP puts both leaf1 senders there).
    assert_eq!(drops.iter().map(|d| d.1.as_str()).collect::<Vec<_>>(), ["Ethernet112"]);
    // The port's headroom is set by a fault at t = 0, with its origin.
    assert!(sim.scenario.contains("headroom = \"5120B\"  # leaf2.json BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff"), "{}", sim.scenario);
}

#[test]
fn every_value_has_its_origin() {
    let (sim, _) = simulate(&sources(|_, _| {})).unwrap();
    let s = &sim.scenario;
    for want in [
        "dynamic_th = -3  # leaf1.json BUFFER_PROFILE|pg_lossless_40000_5m_profile|dynamic_th",
        "headroom = \"55120B\"  # leaf1.json BUFFER_PROFILE|pg_lossless_40000_5m_profile|xoff",
        "reserved = \"56368B\"  # leaf1.json BUFFER_PROFILE|pg_lossless_40000_5m_profile|size",
        "xon_offset = \"2496B\"  # leaf1.json BUFFER_PROFILE|pg_lossless_40000_5m_profile|xon_offset",
        "lossless_priorities = [3, 4]  # leaf1.json PORT_QOS_MAP|Ethernet4|pfc_enable",
        "3 = 3  # leaf1.json DSCP_TO_TC_MAP|AZURE|3",
        "kmin = \"1048576B\"  # leaf1.json WRED_PROFILE|AZURE_LOSSLESS|green_min_threshold",
        "speed: leaf1.json PORT|Ethernet112|speed; cable: leaf1.json CABLE_LENGTH|AZURE|Ethernet112",
        "(leaf1.json BUFFER_POOL|ingress_lossless_pool|size)",
    ] {
        assert!(s.contains(want), "missing {want:?} in\n{s}");
    }
    // Every line that sets a value says where it comes from.
    for l in s.lines().filter(|l| l.contains(" = ") && !l.starts_with('#') && !l.ends_with('[')) {
        assert!(l.contains("  # "), "no origin: {l}");
    }
}

#[test]
fn a_port_with_its_own_dscp_map_gets_a_fault() {
    // leaf2 Ethernet4 maps DSCP 3 to the lossy TC 1 (its own map, copied from AZURE).
    let src = sources(|s, v| {
        if s == "leaf2" {
            let mut m = v["DSCP_TO_TC_MAP"]["AZURE"].clone();
            m["3"] = json!("1");
            v["DSCP_TO_TC_MAP"]["LOSSY3"] = m;
            v["PORT_QOS_MAP"]["Ethernet4"]["dscp_to_tc_map"] = json!("LOSSY3");
        }
    });
    let (sim, rep) = simulate(&src).unwrap();
    assert!(sim.scenario.contains("port = \"leaf2:0\""), "{}", sim.scenario);
    assert!(sim.scenario.contains("dscp_to_tc = { 3 = 1 }  # leaf2.json DSCP_TO_TC_MAP|LOSSY3"), "{}", sim.scenario);
    // Its sender's packets ride a lossy class there: only leaf2 Ethernet4 may drop.
    for (sw, port, _, _) in drop_ports(&sim, &rep) {
        assert_eq!((sw.as_str(), port.as_str()), ("leaf2", "Ethernet4"));
    }
}

#[test]
fn switch_groups_name_switches_whatever_the_hostname() {
    let src = sources(|s, v| {
        if s == "leaf1" {
            v["DEVICE_METADATA"]["localhost"]["hostname"] = json!("str-s6000-acs-14");
        }
    });
    // By hostname, the spines' neighbour leaf1 is missing.
    let e = build(&Input::read(&src, &[], &[]).unwrap(), &opts(), &SimOptions::default()).unwrap_err();
    assert!(e.to_string().contains("\"leaf1\" (port \"Ethernet112\") is a switch that is not among the switches given"), "{e}");
    let g = plan::verify::Group { name: "leaf1".into(), files: vec!["leaf1.json".into()] };
    let input = Input::read(&src, &[g], &[]).unwrap();
    assert_eq!(input.switches.iter().map(|s| s.name()).collect::<Vec<_>>(), SWITCHES);
    assert!(build(&input, &opts(), &SimOptions::default()).is_ok());
}

/// `build`'s error on the leaf-spine with `edit`.
fn error(edit: impl Fn(&str, &mut Value)) -> String {
    build(&Input::read(&sources(edit), &[], &[]).unwrap(), &opts(), &SimOptions::default()).unwrap_err().to_string()
}

#[test]
fn bad_topology_names_file_and_key() {
    let e = error(|s, v| {
        if s == "leaf1" {
            v["DEVICE_NEIGHBOR"]["Ethernet112"]["port"] = json!("Ethernet999");
        }
    });
    assert_eq!(e, "leaf1.json: DEVICE_NEIGHBOR|Ethernet112|port: \"Ethernet999\" is not a port of switch \"spine1\" (its PORT table has no such key)");
    let e = error(|s, v| {
        if s == "leaf1" {
            v["DEVICE_NEIGHBOR"]["Ethernet112"]["name"] = json!("spine9");
        }
    });
    assert!(
        e.starts_with("leaf1.json: DEVICE_NEIGHBOR|Ethernet112|name: \"spine9\" (port \"Ethernet112\") is a switch that is not among the switches given"),
        "{e}"
    );
    // spine1 says its Ethernet112 goes to leaf2, leaf1 says its Ethernet112 goes there.
    let e = error(|s, v| {
        if s == "spine1" {
            v["DEVICE_NEIGHBOR"]["Ethernet112"]["name"] = json!("leaf2");
        }
    });
    assert!(e.contains("DEVICE_NEIGHBOR|Ethernet112: says Ethernet112 goes to leaf2:Ethernet112"), "{e}");
    let e = error(|s, v| {
        if s == "leaf1" {
            v["PORT"]["Ethernet4"].as_object_mut().unwrap().remove("speed");
        }
    });
    assert_eq!(e, "leaf1.json: PORT|Ethernet4|speed: absent: --simulate needs the speed of every simulated port");
    let e = error(|s, v| {
        if s == "leaf2" {
            v["BUFFER_PG"].as_object_mut().unwrap().remove("Ethernet4|3-4");
        }
    });
    assert!(e.starts_with("leaf2.json: BUFFER_PG|Ethernet4|3,4: absent"), "{e}");
    let e = error(|s, v| {
        if s == "leaf2" {
            v["BUFFER_PROFILE"]["pg_lossless_40000_5m_profile"]["xon_offset"] = json!("lots");
        }
    });
    assert_eq!(e, "leaf2.json: BUFFER_PROFILE|pg_lossless_40000_5m_profile|xon_offset: \"lots\" is not a whole number of bytes");
    let e = build(&Input::read(&sources(|_, _| {}), &[], &[]).unwrap(), &Options { cell: None, ..opts() }, &SimOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "(command line): --cell: --simulate needs the buffer's cell size");
}

/// The leaf-spine's wiring as a scenario-format topology: switch port i is the PORT entry
/// with `index` i (Ethernet4 1, Ethernet8 2, Ethernet112 28, Ethernet116 29 on the S6000).
const TOPOLOGY: &str = r#"
[topology]
kind = "explicit"
nodes = [
  { name = "leaf1", kind = "switch", ports = 32 },
  { name = "leaf2", kind = "switch", ports = 32 },
  { name = "spine1", kind = "switch", ports = 32 },
  { name = "spine2", kind = "switch", ports = 32 },
  { name = "h1", kind = "host" }, { name = "h2", kind = "host" }, { name = "h3", kind = "host" }, { name = "h4", kind = "host" },
]
links = [
  { a = "h1", b = "leaf1:1", speed = "40Gbps", cable = "5m" },
  { a = "h2", b = "leaf1:2", speed = "40Gbps", cable = "5m" },
  { a = "h3", b = "leaf2:1", speed = "40Gbps", cable = "5m" },
  { a = "h4", b = "leaf2:2", speed = "40Gbps", cable = "5m" },
  { a = "leaf1:28", b = "spine1:28", speed = "40Gbps", cable = "40m" },
  { a = "leaf1:29", b = "spine2:28", speed = "40Gbps", cable = "40m" },
  { a = "leaf2:28", b = "spine1:29", speed = "40Gbps", cable = "40m" },
  { a = "leaf2:29", b = "spine2:29", speed = "40Gbps", cable = "40m" },
]
"#;

fn with_topology(text: &str) -> Result<(Simulation, report::Report), ReadError> {
    let mut input = Input::read(&sources(|_, _| {}), &[], &[])?;
    input.topology = Some(("fabric.toml".into(), text.into()));
    let sim = build(&input, &opts(), &SimOptions::default())?;
    let w = scenario::load_str("verify-simulate.toml", &sim.scenario).unwrap_or_else(|e| panic!("{e}\n{}", sim.scenario));
    let (_, rep) = report::run(&w, false);
    Ok((sim, rep))
}

#[test]
fn topology_file_gives_the_same_fabric() {
    let (_, by_neighbour) = simulate(&sources(|_, _| {})).unwrap();
    let (sim, rep) = with_topology(TOPOLOGY).unwrap();
    assert_eq!(sim.hosts, ["h1", "h2", "h3", "h4"]);
    assert!(sim.scenario.contains("{ a = \"leaf1:2\", b = \"spine1:0\", speed = \"40000Mbps\", cable = \"40m\" }"), "{}", sim.scenario);
    assert_eq!((rep.totals.lossless_drops, rep.totals.drops), (0, 0));
    assert_eq!(rep.totals.pfc_frames, by_neighbour.totals.pfc_frames);
    assert_eq!((rep.flows.count, rep.flows.completed), (3, 3));

    // A port index no PORT entry has; a switch not given; a link DEVICE_NEIGHBOR contradicts.
    let e = with_topology(&TOPOLOGY.replace("leaf1:29", "leaf1:30")).unwrap_err().to_string();
    assert!(e.starts_with("fabric.toml: topology.links[5].a: \"leaf1:30\": switch leaf1 has no PORT entry with index \"30\""), "{e}");
    let e = with_topology(&TOPOLOGY.replace("\"spine2:29\"", "\"spine3:29\"")).unwrap_err().to_string();
    assert_eq!(e, "fabric.toml: topology.links[7].b: \"spine3\" is not among the switches given");
    let swapped =
        TOPOLOGY.replace("b = \"spine1:28\"", "b = \"SWAP\"").replace("b = \"spine2:28\"", "b = \"spine1:28\"").replace("b = \"SWAP\"", "b = \"spine2:28\"");
    let e = with_topology(&swapped).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "fabric.toml: topology.links[4]: links leaf1 Ethernet112 to spine2 Ethernet112, but leaf1.json DEVICE_NEIGHBOR|Ethernet112 says spine1:Ethernet112"
        ),
        "{e}"
    );
    let e = with_topology("[topology]\nkind = \"leaf-spine\"\n").unwrap_err().to_string();
    assert!(e.starts_with("fabric.toml: topology.kind: \"leaf-spine\": --topology takes an \"explicit\" topology"), "{e}");
}

#[test]
fn nic_dcqcn_values_become_the_scenarios() {
    let nic = r#"
switch = "leaf2"
port = "Ethernet8"
pfc = [3, 4]
timeout = 14
[roce_rp]
rpg_time_reset = 300
rpg_ai_rate = 10
dce_tcp_g = 1019
clamp_tgt_rate = 1
rpg_gd = 11
[roce_np]
min_time_between_cnps = 8
"#;
    let src = sources(|_, _| {});
    let input = Input::read(&src, &[], &[("nic.toml".into(), nic.into())]).unwrap();
    let sim = build(&input, &opts(), &SimOptions::default()).unwrap();
    for want in [
        "preset = \"nvidia-default\"  # nic.toml: [roce_rp]/[roce_np] over the ConnectX firmware defaults",
        "rate_timer = \"300us\"  # nic.toml [roce_rp] rpg_time_reset",
        "rate_ai = \"10Mbps\"  # nic.toml [roce_rp] rpg_ai_rate",
        "g = 0.0048828125  # nic.toml [roce_rp] dce_tcp_g",
        "clamp_tgt_rate = true  # nic.toml [roce_rp] clamp_tgt_rate",
        "cnp_interval = \"8us\"  # nic.toml [roce_np] min_time_between_cnps",
        "timeout = 14  # nic.toml timeout",
    ] {
        assert!(sim.scenario.contains(want), "missing {want:?}:\n{}", sim.scenario);
    }
    assert!(sim.notes.iter().any(|n| n == "nic.toml: rpg_gd not simulated (the scenario's DCQCN has no such parameter)"), "{:?}", sim.notes);
    let w = scenario::load_str("verify-simulate.toml", &sim.scenario).unwrap();
    let (_, rep) = report::run(&w, false);
    assert_eq!(rep.settings.dcqcn.as_deref(), Some("nvidia-default +g +rate_timer +rate_ai +cnp_interval +clamp_tgt_rate"));
    assert_eq!(rep.totals.lossless_drops, 0);
}

#[test]
fn a_lossy_link_port_gets_pfc_off() {
    // leaf1's uplink to spine2 without pfc_enable: still simulated (a switch link), PFC off
    // there by a fault; the fabric's lossless classes stay those of the other ports.
    let src = sources(|s, v| {
        if s == "leaf1" {
            v["PORT_QOS_MAP"]["Ethernet116"].as_object_mut().unwrap().remove("pfc_enable");
        }
    });
    let (sim, rep) = simulate(&src).unwrap();
    assert!(sim.scenario.contains("lossless_priorities = [3, 4]  # leaf1.json PORT_QOS_MAP|Ethernet4|pfc_enable"), "{}", sim.scenario);
    assert!(
        sim.scenario.contains(
            "port = \"leaf1:3\"  # leaf1 Ethernet116\nat = \"0us\"  # configured from the start\npfc = false  # leaf1.json PORT_QOS_MAP|Ethernet116|pfc_enable"
        ),
        "{}",
        sim.scenario
    );
    assert_eq!(sim.scenario.matches("pfc = false").count(), 1);
    assert!(scenario::load_str("x.toml", &sim.scenario).is_ok());
    assert_eq!((rep.flows.count, rep.flows.completed), (3, 3));
}
