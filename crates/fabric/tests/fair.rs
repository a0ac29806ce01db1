//! Fair comparisons: each fabric's switches get their own sourced latency, `compare` lists
//! every setting the two sides differ in with its reason (text and JSON), and a switch
//! generation with no published figure shares InfiniBand's and says so.

use report::compare;
use units::SimDuration;

mod common;

/// A RoCE-only scenario (compare fills `[infiniband]` with its defaults): a 2-leaf,
/// 1-spine fabric at `speed`, cut-through, `roce_switch` lines in `[roce]` in place of the
/// shared builder's fixed switch latency, one 64 KiB message.
fn scenario(speed: &str, roce_switch: &str) -> String {
    let topology = format!(
        "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\n\
         host_link = {{ speed = \"{speed}\", cable = \"3m\" }}\nfabric_link = {{ speed = \"{speed}\", cable = \"20m\" }}\n"
    );
    let roce = "forwarding = \"cut-through\"\necn = [{ queue = 3, kmin = \"150KB\", kmax = \"1500KB\", pmax = 0.1 }]\ndcqcn = { preset = \"nvidia-default\" }";
    let traffic = "[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 3\nsize = \"64KiB\"\nat = \"0us\"\ndscp = 26\n";
    common::scenario(&topology, roce, common::BUFFER, traffic).replace("switch_latency = \"0ns\"\n", &format!("{roce_switch}\n"))
}

fn err(s: &str) -> String {
    match scenario::load_str("bad.toml", s) {
        Ok(_) => panic!("accepted a bad scenario"),
        Err(e) => e.to_string(),
    }
}

/// Spectrum-4 at 400 Gb/s: nothing published, so RoCE gets InfiniBand NDR's 130 ns, and
/// both the text and the JSON say so; every other difference of a RoCE-only file compared
/// against compare's InfiniBand defaults is listed, in order, with a reason.
#[test]
fn no_published_figure_means_the_same_value_and_says_so() {
    let src = scenario("400Gbps", "switch = \"spectrum-4\"");
    let (cmp, ib, roce) = compare::run("fair.toml", &src, false).expect("valid scenario");
    let ndr = SimDuration::from_ns(130);
    assert_eq!((ib.world.params.switch_latency, roce.world.params.switch_latency), (ndr, ndr));
    assert!(roce.world.switch_latency.same_as_infiniband);

    let params: Vec<&str> = cmp.differing_defaults.iter().map(|d| d.parameter.as_str()).collect();
    assert_eq!(
        params,
        [
            "switch latency",
            "wire bytes per full data packet",
            "link-level flow control",
            "switch buffer",
            "congestion control",
            "ECN / FECN marking",
            "routing",
            "transport timeout",
            "stuck-queue containment",
        ]
    );
    let lat = &cmp.differing_defaults[0];
    assert_eq!((lat.infiniband.as_str(), lat.roce.as_str()), ("130ns", "130ns"));
    assert!(lat.reason.contains("no published figure for spectrum-4; same as InfiniBand: NDR switch"), "{}", lat.reason);
    let by = |p: &str| cmp.differing_defaults.iter().find(|d| d.parameter == p).unwrap();
    assert_eq!(by("wire bytes per full data packet").infiniband, "4130 B per 4096 B payload (99.18 %)");
    assert_eq!(by("wire bytes per full data packet").roce, "4178 B per 4096 B payload (98.04 %)");
    assert_eq!(by("switch buffer").infiniband, "128 KiB per input port and VL");
    assert!(by("switch buffer").roce.starts_with("16 MiB shared per switch, 256 B cells"), "{}", by("switch buffer").roce);
    assert_eq!((by("congestion control").infiniband.as_str(), by("congestion control").roce.as_str()), ("off (OpenSM ships none)", "DCQCN nvidia-default"));
    assert_eq!(by("transport timeout").infiniband, "4.295s × 7 retries");
    assert_eq!(by("transport timeout").roce, "67.109ms × 7 retries");
    assert!(by("routing").reason.contains("compare's default (the file has no [infiniband])"), "{}", by("routing").reason);
    for d in &cmp.differing_defaults {
        assert!(!d.reason.is_empty(), "{} has no reason", d.parameter);
    }

    let text = compare::text(&cmp);
    assert!(text.contains("settings that differ between the sides (and why):"), "{text}");
    assert!(text.contains("switch latency: InfiniBand 130ns | RoCEv2 130ns"), "{text}");
    assert!(text.contains("no published figure for spectrum-4; same as InfiniBand"), "{text}");

    let json = serde_json::to_value(&cmp).unwrap();
    let list = json["differing_defaults"].as_array().expect("a differing_defaults array");
    assert_eq!(list.len(), params.len());
    assert_eq!(list[0]["parameter"], "switch latency");
    assert_eq!((&list[0]["infiniband"], &list[0]["roce"]), (&serde_json::json!("130ns"), &serde_json::json!("130ns")));
    assert!(list[0]["reason"].as_str().unwrap().contains("no published figure"));
    // The existing fields are still there, under their names.
    for k in ["scenario", "seed", "rows", "limitations", "infiniband", "roce"] {
        assert!(json.get(k).is_some(), "{k}");
    }
}

/// A generation with a published figure keeps it: Spectrum-2 (300 ns, its source named)
/// against HDR's 130 ns. No switch named at all: InfiniBand's figure, said so. Given as a
/// time: the file's.
#[test]
fn published_figures_and_explicit_times_are_used_as_such() {
    let src = scenario("200Gbps", "switch = \"spectrum-2\"\nswitch_latency = \"auto\"");
    let (cmp, _, roce) = compare::run("fair.toml", &src, false).unwrap();
    assert_eq!(roce.world.params.switch_latency, SimDuration::from_ns(300));
    let lat = &cmp.differing_defaults[0];
    assert_eq!((lat.parameter.as_str(), lat.infiniband.as_str(), lat.roce.as_str()), ("switch latency", "130ns", "300ns"));
    assert!(lat.reason.contains("linleygroup.com") && !lat.reason.contains("same value on both sides"), "{}", lat.reason);
    assert!(roce.report.notes.iter().any(|n| n.starts_with("switch latency auto: 300ns (spectrum-2")), "{:?}", roce.report.notes);

    // Left out: "auto" with no switch named.
    let w = scenario::load_str("t.toml", &scenario("100Gbps", "")).unwrap();
    assert_eq!(w.params.switch_latency, SimDuration::from_ns(90));
    assert!(w.switch_latency.same_as_infiniband && w.switch_latency.source.starts_with("no switch named"), "{}", w.switch_latency.source);

    // A time in the file wins, and the difference is listed against it.
    let src = scenario("100Gbps", "switch = \"spectrum-1\"\nswitch_latency = \"0ns\"");
    let (cmp, _, roce) = compare::run("fair.toml", &src, false).unwrap();
    assert_eq!(roce.world.params.switch_latency, SimDuration::ZERO);
    let lat = &cmp.differing_defaults[0];
    assert_eq!((lat.infiniband.as_str(), lat.roce.as_str()), ("90ns", "0ps"));
    assert!(lat.reason.contains("RoCEv2: set in the scenario file"), "{}", lat.reason);
}

/// Both sides given the same time in the file: nothing to list for the switch latency.
#[test]
fn equal_times_from_the_file_are_not_a_difference() {
    let src = scenario("100Gbps", "switch_latency = \"90ns\"");
    let (cmp, _, _) = compare::run("fair.toml", &src, false).unwrap();
    assert!(cmp.differing_defaults.iter().all(|d| d.parameter != "switch latency"), "{:?}", cmp.differing_defaults);
}

/// An unknown generation names the field and every accepted value; "auto" where no figure
/// can be found names its field and says what to do.
#[test]
fn bad_switch_names_and_unresolvable_auto_are_clear_errors() {
    let e = err(&scenario("400Gbps", "switch = \"spectrum-9\""));
    assert!(e.starts_with("bad.toml:"), "{e}");
    assert!(e.contains("roce.switch: unknown switch `spectrum-9`"), "{e}");
    for name in model::switch_latency::EthernetSwitch::NAMES {
        assert!(e.contains(name), "{name} missing from: {e}");
    }
    let line: usize = e.split(':').nth(1).unwrap().parse().expect("a line number");
    assert!(scenario("400Gbps", "switch = \"spectrum-9\"").lines().nth(line - 1).unwrap().contains("spectrum-9"), "{e}");

    let e = err(&scenario("25Gbps", "switch = \"tomahawk-5\""));
    assert!(e.contains("roce.switch_latency: \"auto\": no published figure for tomahawk-5, and 25Gbps matches no InfiniBand generation"), "{e}");
    assert!(e.contains("spectrum-1, spectrum-2, tomahawk-ultra"), "{e}");
    // With a published figure, any speed will do.
    let w = scenario::load_str("t.toml", &scenario("25Gbps", "switch = \"spectrum\"")).unwrap();
    assert_eq!(w.params.switch_latency, SimDuration::from_ns(300));
}
