//! `run --pcap`, checked by Wireshark: every frame dissects with no malformed packet and
//! no error-level expert info (whole frames and a short snap length); the dissected
//! fields of every frame equal the simulator's own record of it; counts per kind equal
//! the run's counters for the port; the storm's pause frames refresh; the misconfigured
//! fabric's capture shows the PSN gap and the NAK; `run --json` is unchanged. The same on
//! InfiniBand (ERF captures, flow-control packets in `<port>.fcp.csv`): LIDs, VL, SL,
//! opcode, destination QP, PSN and FCCL as the simulator sent them.
//!
//! Without tshark the Wireshark checks are skipped (the test says so), unless
//! `CI=true`, where they fail.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;

use fabric::sim::{CaptureSink, CaptureSpec, Captured, Direction, FrameKind};
use fabric::topology::PortId;
use units::SimTime;

fn tshark_available() -> bool {
    let found = Command::new("tshark").arg("-v").output().map(|o| o.status.success()).unwrap_or(false);
    if !found {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("tshark not found but CI=true: install it (apt-get install tshark) so the Wireshark checks run");
        }
        println!("tshark not found: skipping the Wireshark checks of run --pcap (apt-get install tshark)");
    }
    found
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name)
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pcap-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `fabriclab run FILE ARGS...`: stdout, stderr; it must succeed.
fn run(file: &Path, args: &[&str]) -> (String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_fabriclab")).arg("run").arg(file).args(args).output().expect("runs");
    let (out, err) = (String::from_utf8(o.stdout).unwrap(), String::from_utf8(o.stderr).unwrap());
    assert!(o.status.success(), "run {} {args:?} failed: {err}", file.display());
    (out, err)
}

/// tshark's fields, one row per frame.
fn fields(file: &Path, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.args(["-n", "-r"]).arg(file).args(["-T", "fields", "-E", "separator=,", "-E", "occurrence=a", "-E", "aggregator=;"]);
    if !filter.is_empty() {
        cmd.args(["-Y", filter]);
    }
    for f in fields {
        cmd.arg("-e").arg(f);
    }
    let out = cmd.output().expect("tshark runs");
    assert!(out.status.success(), "tshark: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split(',').map(str::to_owned).collect()).collect()
}

/// Frames Wireshark finds malformed or flags with an error-level expert item
/// (PI_ERROR = 0x00800000).
fn bad_frames(file: &Path) -> Vec<Vec<String>> {
    fields(file, "_ws.malformed || _ws.expert.severity >= 8388608", &["frame.number", "_ws.expert.message"])
}

#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<Captured>>>);

impl CaptureSink for Shared {
    fn frame(&mut self, f: &Captured) {
        self.0.borrow_mut().push(*f);
    }
}

/// The simulator's own records for `ports`, in time order as a file holds them, and
/// its run.
fn records(file: &Path, ports: &[PortId]) -> (Vec<Captured>, fabric::Sim) {
    let src = std::fs::read_to_string(file).unwrap();
    let w = scenario::load_str(&file.display().to_string(), &src).unwrap();
    let sink = Shared::default();
    let mut sim = w.simulator(false);
    sim.set_capture(CaptureSpec { ports: ports.to_vec(), from: SimTime::ZERO, to: SimTime::MAX }, Box::new(sink.clone()));
    sim.run();
    drop(sim.take_capture());
    let mut recs = sink.0.borrow().clone();
    recs.sort_by_key(|r| r.t); // stable: equal stamps keep the order they were sent in
    (recs, sim)
}

fn world(file: &Path) -> scenario::World {
    scenario::load_str(&file.display().to_string(), &std::fs::read_to_string(file).unwrap()).unwrap()
}

const FIELDS: [&str; 20] = [
    "frame.time_epoch",
    "frame.p2p_dir",
    "frame.len",
    "eth.src",
    "ip.src",
    "ip.dst",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "udp.srcport",
    "udp.dstport",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.bth.a",
    "infiniband.aeth.syndrome",
    "macc.cbfc.enbv",
    "macc.cbfc.pause_time.c3",
    "infiniband.reth.dmalen",
    "eth.fcs",
    "vlan.priority",
];

/// "s.nnnnnnnnn" → ns.
fn ns(epoch: &str) -> u64 {
    let (s, f) = epoch.split_once('.').unwrap();
    s.parse::<u64>().unwrap() * 1_000_000_000 + format!("{f:0<9}")[..9].parse::<u64>().unwrap()
}

/// One dissected row against the record the simulator kept.
fn check_row(i: usize, row: &[String], r: &Captured) {
    let col = |name: &str| row[FIELDS.iter().position(|f| *f == name).unwrap()].as_str();
    assert_eq!(ns(col("frame.time_epoch")), r.t.ps() / 1000, "frame {i}: time");
    assert_eq!(col("frame.p2p_dir"), if r.dir == Direction::Inbound { "1" } else { "0" }, "frame {i}: direction");
    assert_eq!(col("frame.len").parse::<u32>().unwrap() + 4, r.frame_bytes, "frame {i}: length + FCS");
    assert_eq!(col("eth.fcs"), "", "frame {i}: if_fcslen 0: no FCS read from the frame's end");
    let pcp = if r.vlan && r.kind != FrameKind::Pfc { (r.tc & 7).to_string() } else { String::new() };
    assert_eq!(col("vlan.priority"), pcp, "frame {i}: 802.1Q PCP when the scenario tags (PFC frames untagged)");
    if r.kind == FrameKind::Pfc {
        assert_eq!(u8::from_str_radix(col("macc.cbfc.enbv").trim_start_matches("0x"), 16).unwrap(), r.pfc_vector, "frame {i}");
        if r.pfc_vector & 8 != 0 {
            assert_eq!(col("macc.cbfc.pause_time.c3"), r.pfc_quanta[3].to_string(), "frame {i}");
        }
        assert_eq!(col("eth.src"), mac(fabric::sim::port_mac(r.from_port)));
        return;
    }
    assert_eq!(col("eth.src"), mac(fabric::sim::endpoint_mac(r.src)), "frame {i}");
    assert_eq!(col("ip.src"), fabric::sim::endpoint_ip(r.src).to_string(), "frame {i}");
    assert_eq!(col("ip.dst"), fabric::sim::endpoint_ip(r.dst).to_string(), "frame {i}");
    assert_eq!(col("ip.dsfield.dscp"), r.dscp.to_string(), "frame {i}");
    let ecn = match r.ecn {
        fabric::sim::Ecn::NotEct => "0",
        fabric::sim::Ecn::Ect1 => "1",
        fabric::sim::Ecn::Ect0 => "2",
        fabric::sim::Ecn::Ce => "3",
    };
    assert_eq!(col("ip.dsfield.ecn"), ecn, "frame {i}");
    assert_eq!(col("udp.srcport"), r.sport.to_string(), "frame {i}");
    assert_eq!(col("udp.dstport"), "4791", "frame {i}");
    assert_eq!(col("infiniband.bth.opcode"), r.opcode().0.to_string(), "frame {i}");
    assert_eq!(col("infiniband.bth.destqp"), format!("0x{:06x}", fabric::sim::qpn(r.qp.unwrap())), "frame {i}");
    assert_eq!(col("infiniband.bth.psn"), (r.psn & 0xFF_FFFF).to_string(), "frame {i}");
    let ack_req = r.kind == FrameKind::Data && r.last;
    assert_eq!(col("infiniband.bth.a"), if ack_req { "1" } else { "0" }, "frame {i}");
    let syndrome = match r.kind {
        FrameKind::Ack => "31",
        FrameKind::Nak => "96", // 0b011_00000: NAK, PSN sequence error
        _ => "",
    };
    assert_eq!(col("infiniband.aeth.syndrome"), syndrome, "frame {i}");
    assert_eq!(col("infiniband.reth.dmalen").is_empty(), !(r.kind == FrameKind::Data && r.first), "frame {i}: RETH");
}

fn mac(m: [u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

#[test]
fn storm_capture_is_what_the_simulator_sent() {
    storm_capture(&example("roce-pfc-storm.toml"), "storm");
}

/// The incast with DCQCN: CE-marked data in, CNPs out, each as the simulator sent it.
#[test]
fn incast_capture_is_what_the_simulator_sent() {
    let Some(path) = capture_matches_the_run(&example("roce-incast.toml"), "incast") else { return };
    let count = |filter: &str| fields(&path, filter, &["frame.number"]).len() as u64;
    assert!(count("frame.p2p_dir == 1 && ip.dsfield.ecn == 3") > 0, "CE-marked data reaches the receiver");
    assert!(count("frame.p2p_dir == 0 && infiniband.bth.opcode == 0x81") > 0, "the receiver sends CNPs");
}

/// The storm with 802.1Q tags: the PCP is the priority, and every length grows by 4.
#[test]
fn tagged_storm_capture_is_what_the_simulator_sent() {
    let src = std::fs::read_to_string(example("roce-pfc-storm.toml")).unwrap().replace("[roce]\n", "[roce]\nvlan = true\n");
    assert!(src.contains("vlan = true"));
    let dir = tmp("tagged-src");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("storm-tagged.toml");
    std::fs::write(&file, src).unwrap();
    storm_capture(&file, "tagged");
}

/// Runs `file` with and without `--pcap` (same JSON), then, with tshark, checks every
/// frame of h0's capture against the simulator's record and the counts per kind against
/// the run's counters. The capture's path; `None` without tshark.
fn capture_matches_the_run(file: &Path, name: &str) -> Option<PathBuf> {
    let file = file.to_path_buf();
    let dir = tmp(name);
    let plain = run(&file, &["--json"]).0;
    // Default ports: the first traffic entry (h4 -> h0) has h0 as its receiver.
    let (out, err) = run(&file, &["--json", "--pcap", dir.to_str().unwrap()]);
    assert_eq!(out, plain, "run --json is byte-identical with --pcap");
    let path = dir.join("h0-0.pcapng");
    assert!(err.contains("pcap: ") && err.contains("h0-0.pcapng"), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "one file: h0's port");
    if !tshark_available() {
        return None;
    }
    assert!(bad_frames(&path).is_empty(), "{:?}", bad_frames(&path));
    let w = world(&file);
    let port = w.topo.ep_port(0);
    let (recs, sim) = records(&file, &[port]);
    let rows = fields(&path, "", &FIELDS);
    assert_eq!(rows.len(), recs.len());
    let tagged = std::fs::read_to_string(&file).unwrap().contains("vlan = true");
    assert!(recs.iter().all(|r| r.vlan == tagged));
    for (i, (row, r)) in rows.iter().zip(&recs).enumerate() {
        check_row(i + 1, row, r);
    }
    // Counts per kind against the run's counters for this port and its peer.
    let count = |filter: &str| fields(&path, filter, &["frame.number"]).len() as u64;
    let st = &sim.stats;
    let peer = w.topo.port(port).peer.unwrap();
    assert_eq!(count("frame.p2p_dir == 0"), st.ports[port.index()].tx_frames);
    assert_eq!(count("frame.p2p_dir == 1"), st.ports[peer.index()].tx_frames);
    assert_eq!(count("frame.p2p_dir == 0 && infiniband.bth.opcode <= 11"), st.nics[0].tx_data_pkts);
    assert_eq!(count("frame.p2p_dir == 0 && infiniband.aeth.syndrome.opcode == 3"), st.nics[0].nak_tx);
    assert_eq!(count("frame.p2p_dir == 0 && infiniband.bth.opcode == 0x81"), st.nics[0].cnp_tx);
    assert_eq!(count("frame.p2p_dir == 0 && macc.cbfc.enbv & 0x08"), st.ports[port.index()].pfc_tx[3]);
    assert_eq!(count("frame.p2p_dir == 1 && macc.opcode == 0x0101"), st.ports[peer.index()].pfc_tx.iter().sum::<u64>());
    Some(path)
}

fn storm_capture(file: &Path, name: &str) {
    let Some(path) = capture_matches_the_run(file, name) else { return };
    // The stuck receiver's pause frames refresh: priority 3, 65535 quanta, again and
    // again at one period while it is stuck.
    let xoff = fields(&path, "frame.p2p_dir == 0 && macc.cbfc.pause_time.c3 == 65535", &["frame.time_epoch"]);
    let t: Vec<u64> = xoff.iter().map(|r| ns(&r[0])).collect();
    assert!(t.len() >= 10, "{} pause frames", t.len());
    let gaps: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|&g| g > 0));
    let median = {
        let mut g = gaps.clone();
        g.sort();
        g[g.len() / 2]
    };
    // 65535 quanta at 100 Gb/s last 335.5 us: the refresh comes before they run out.
    assert!(median < 335_544, "refresh period {median} ns");
}

#[test]
fn misconfigured_capture_shows_the_psn_gap_then_the_nak() {
    let file = example("roce-misconfigured.toml");
    let dir = tmp("misconf");
    run(&file, &["--json", "--pcap", dir.to_str().unwrap()]);
    let path = dir.join("h0-0.pcapng");
    if !tshark_available() {
        return;
    }
    assert!(bad_frames(&path).is_empty(), "{:?}", bad_frames(&path));
    // The first NAK: PSN sequence error, asking for PSN n of its QP.
    let naks = fields(&path, "infiniband.aeth.syndrome == 96", &["frame.number", "infiniband.bth.destqp", "infiniband.bth.psn"]);
    assert!(!naks.is_empty(), "a NAK");
    let (nak_no, qp, want) = (naks[0][0].parse::<u64>().unwrap(), &naks[0][1], naks[0][2].parse::<u32>().unwrap());
    // Before it, data of that QP arrived with PSNs past n (the gap), and never n itself.
    let data = fields(&path, &format!("frame.p2p_dir == 1 && infiniband.bth.destqp == {qp} && frame.number < {nak_no}"), &["infiniband.bth.psn"]);
    let psns: Vec<u32> = data.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(psns.contains(&(want - 1)) || want == 0, "PSN {} arrived before the gap", want.wrapping_sub(1));
    assert!(!psns.contains(&want), "the NAKed PSN {want} did not arrive before the NAK");
    assert!(psns.iter().any(|&p| p > want), "a PSN past {want} arrived: the gap");
    // And the retransmission from n follows it.
    let after = fields(
        &path,
        &format!("frame.p2p_dir == 1 && infiniband.bth.destqp == {qp} && frame.number > {nak_no} && infiniband.bth.psn == {want}"),
        &["frame.number"],
    );
    assert!(!after.is_empty(), "go-back-N resends PSN {want}");
}

#[test]
fn snap_length_window_limit_and_hottest() {
    let file = example("roce-pfc-storm.toml");
    let dir = tmp("snap");
    let (_, err) =
        run(&file, &["--json", "--pcap", dir.to_str().unwrap(), "--pcap-ports", "h0,h4", "--pcap-snaplen", "60", "--pcap-from", "40us", "--pcap-to", "60us"]);
    assert!(err.contains("h4-0.pcapng"), "{err}");
    if tshark_available() {
        for name in ["h0-0.pcapng", "h4-0.pcapng"] {
            let path = dir.join(name);
            assert!(bad_frames(&path).is_empty(), "{name}: {:?}", bad_frames(&path));
            let rows = fields(&path, "", &["frame.time_epoch", "frame.cap_len", "frame.len"]);
            assert!(!rows.is_empty());
            for r in &rows {
                let t = ns(&r[0]);
                assert!((40_000..=60_000).contains(&t), "{name}: frame at {t} ns outside the window");
                assert!(r[1].parse::<u32>().unwrap() <= 60 && r[1].parse::<u32>().unwrap() <= r[2].parse::<u32>().unwrap());
            }
        }
    }
    // A byte limit cuts the file and the run says so.
    let dir = tmp("limit");
    let (_, err) = run(&file, &["--json", "--pcap", dir.to_str().unwrap(), "--pcap-limit", "20KB"]);
    assert!(err.contains("reached the 20000 byte limit"), "{err}");
    assert!(std::fs::metadata(dir.join("h0-0.pcapng")).unwrap().len() <= 20_000);
    // `hottest` finds the busiest port and captures it.
    let dir = tmp("hottest");
    let (_, err) = run(&file, &["--json", "--pcap", dir.to_str().unwrap(), "--pcap-ports", "hottest"]);
    assert!(err.contains("the hottest port is"), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn bad_flags_name_what_is_expected() {
    let file = example("roce-pfc-storm.toml");
    let dir = tmp("bad");
    let o = Command::new(env!("CARGO_BIN_EXE_fabriclab"))
        .args(["run", file.to_str().unwrap(), "--pcap", dir.to_str().unwrap(), "--pcap-ports", "nosuch"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no node named \"nosuch\""));
    let o = Command::new(env!("CARGO_BIN_EXE_fabriclab"))
        .args(["run", example("ib-incast.toml").to_str().unwrap(), "--pcap", dir.to_str().unwrap(), "--pcap-snaplen", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--pcap-snaplen 0: expected 1 to"));
}

const IB_FIELDS: [&str; 15] = [
    "frame.time_epoch",
    "frame.p2p_dir",
    "erf.flags.cap",
    "frame.len",
    "infiniband.lrh.vl",
    "infiniband.lrh.sl",
    "infiniband.lrh.slid",
    "infiniband.lrh.dlid",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.bth.a",
    "infiniband.aeth.syndrome",
    "infiniband.reth.dmalen",
    "infiniband.grh.dgid",
];

/// One dissected InfiniBand packet against the simulator's record, `lid` giving LIDs.
fn check_ib_row(i: usize, row: &[String], r: &Captured, lid: &dyn Fn(u32) -> u16) {
    let col = |name: &str| row[IB_FIELDS.iter().position(|f| *f == name).unwrap()].as_str();
    assert_eq!(ns(col("frame.time_epoch")), r.t.ps() / 1000, "frame {i}: time");
    let dir = if r.dir == Direction::Inbound { "1" } else { "0" };
    assert_eq!((col("frame.p2p_dir"), col("erf.flags.cap")), (dir, dir), "frame {i}: direction");
    assert_eq!(col("frame.len").parse::<u32>().unwrap(), r.frame_bytes, "frame {i}: LRH to VCRC");
    assert_eq!(col("infiniband.lrh.vl"), format!("0x{:02x}", r.tc), "frame {i}: VL");
    assert_eq!(col("infiniband.lrh.sl"), r.sl.to_string(), "frame {i}: SL");
    assert_eq!(col("infiniband.lrh.slid"), lid(r.src).to_string(), "frame {i}: SLID");
    assert_eq!(col("infiniband.lrh.dlid"), lid(r.dst).to_string(), "frame {i}: DLID");
    assert_eq!(col("infiniband.bth.opcode"), r.opcode().0.to_string(), "frame {i}");
    assert_eq!(col("infiniband.bth.destqp"), format!("0x{:06x}", fabric::sim::qpn(r.qp.unwrap())), "frame {i}");
    assert_eq!(col("infiniband.bth.psn"), (r.psn & 0xFF_FFFF).to_string(), "frame {i}");
    assert_eq!(col("infiniband.bth.a"), if r.kind == FrameKind::Data && r.last { "1" } else { "0" }, "frame {i}");
    let syndrome = match r.kind {
        FrameKind::Ack => "31",
        FrameKind::Nak => "96",
        _ => "",
    };
    assert_eq!(col("infiniband.aeth.syndrome"), syndrome, "frame {i}");
    assert_eq!(col("infiniband.reth.dmalen").is_empty(), !(r.kind == FrameKind::Data && r.first), "frame {i}: RETH");
    let gid = if r.grh { format!("fe80::{:x}", r.dst + 1) } else { String::new() };
    assert_eq!(col("infiniband.grh.dgid"), gid, "frame {i}: GRH");
}

/// The file name `run --pcap` gives a port.
fn port_file(w: &scenario::World, p: PortId, ext: &str) -> String {
    let n: String = w.topo.port_name(p).chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' { c } else { '-' }).collect();
    format!("{n}.{ext}")
}

/// Runs the InfiniBand scenario `file` with and without `--pcap` on endpoint `ep`'s port
/// (same JSON), then checks with tshark every packet of the capture against the
/// simulator's record, every row of the FCP log against its FCP, and the counts per kind
/// against the run's counters. The capture's path; `None` without tshark.
fn ib_capture_matches_the_run(file: &Path, name: &str, ep: u32, lid: &dyn Fn(u32) -> u16) -> Option<PathBuf> {
    let w = world(file);
    let port = w.topo.ep_port(ep);
    let dir = tmp(name);
    let plain = run(file, &["--json"]).0;
    let (out, err) = run(file, &["--json", "--pcap", dir.to_str().unwrap(), "--pcap-ports", &w.topo.port_name(port)]);
    assert_eq!(out, plain, "run --json is byte-identical with --pcap");
    let (path, csv) = (dir.join(port_file(&w, port, "pcapng")), dir.join(port_file(&w, port, "fcp.csv")));
    assert!(err.contains("flow-control packets") && err.contains("not in the capture"), "{err}");
    let (recs, sim) = records(file, &[port]);
    // The FCP log: one row per flow-control packet, as the credit model sent it.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time_ns,direction,vl,fctbs,fccl"));
    let fcps: Vec<&Captured> = recs.iter().filter(|r| r.kind == FrameKind::Fcp).collect();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), fcps.len());
    for (row, r) in rows.iter().zip(&fcps) {
        let dir = if r.dir == Direction::Inbound { "in" } else { "out" };
        assert_eq!(*row, format!("{},{dir},{},{},{}", r.t.ps() / 1000, r.tc, r.fctbs, r.fccl));
    }
    let peer = w.topo.port(port).peer.unwrap();
    let (st, pst) = (&sim.stats.ports[port.index()], &sim.stats.ports[peer.index()]);
    let fcp_rows = |d: &str| rows.iter().filter(|r| r.split(',').nth(1) == Some(d)).count() as u64;
    assert_eq!((fcp_rows("out"), fcp_rows("in")), (st.fcp_tx, pst.fcp_tx), "FCPs per direction");
    assert!(st.fcp_tx > 0 && pst.fcp_tx > 0);
    if !tshark_available() {
        return None;
    }
    assert!(bad_frames(&path).is_empty(), "{:?}", bad_frames(&path));
    let packets: Vec<&Captured> = recs.iter().filter(|r| r.kind != FrameKind::Fcp).collect();
    let rows = fields(&path, "", &IB_FIELDS);
    assert_eq!(rows.len(), packets.len());
    for (i, (row, r)) in rows.iter().zip(&packets).enumerate() {
        check_ib_row(i + 1, row, r, lid);
    }
    // Counts per kind against the run's counters for this port and its peer.
    let count = |filter: &str| fields(&path, filter, &["frame.number"]).len() as u64;
    assert_eq!(count("frame.p2p_dir == 0") + st.fcp_tx, st.tx_frames);
    assert_eq!(count("frame.p2p_dir == 1") + pst.fcp_tx, pst.tx_frames);
    let nic = &sim.stats.nics[ep as usize];
    assert_eq!(count("frame.p2p_dir == 0 && infiniband.bth.opcode <= 11"), nic.tx_data_pkts);
    assert_eq!(count("frame.p2p_dir == 0 && infiniband.aeth.syndrome.opcode == 3"), nic.nak_tx);
    assert_eq!(count("frame.p2p_dir == 0 && infiniband.bth.opcode == 0x80"), nic.cnp_tx);
    let data_in = count("frame.p2p_dir == 1 && infiniband.bth.opcode <= 11");
    assert_eq!(data_in, recs.iter().filter(|r| r.dir == Direction::Inbound && r.kind == FrameKind::Data).count() as u64);
    assert!(data_in > 0);
    Some(path)
}

/// The IB incast with IB congestion control, a GRH and the traffic on SL 1 → VL 1: every
/// packet and FCP at h0 as the simulator sent it, FECN-marked data in and CNPs out.
#[test]
fn ib_capture_is_what_the_simulator_sent() {
    let src = std::fs::read_to_string(example("ib-incast.toml"))
        .unwrap()
        .replace("data_vls = 1", "data_vls = 2")
        .replace("sl_to_vl = { 0 = 0 }", "sl_to_vl = { 0 = 0, 1 = 1 }")
        .replace("sl = 0", "sl = 1")
        .replace(
            "routing = \"dest-hash\"",
            "routing = \"dest-hash\"\ngrh = true\ncongestion_control = { threshold = \"20KB\", marking_rate = 1, packet_size = \"0B\", ccti_increase = 1, ccti_min = 0, ccti_timer = \"20us\", cct_step = 0.05, cct_entries = 128 }",
        );
    assert!(src.contains("congestion_control") && src.contains("sl = 1"));
    let dir = tmp("ib-cc-src");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ib-cc.toml");
    std::fs::write(&file, src).unwrap();
    // No subnet manager ("dest-hash"): endpoint e has LID e + 1.
    let Some(path) = ib_capture_matches_the_run(&file, "ib-cc", 0, &|e| (e + 1) as u16) else { return };
    let count = |filter: &str| fields(&path, filter, &["frame.number"]).len() as u64;
    assert!(count("frame.p2p_dir == 1 && infiniband.lrh.vl == 1 && infiniband.lrh.sl == 1") > 0, "data on SL 1, VL 1");
    assert!(count("frame.p2p_dir == 0 && infiniband.bth.opcode == 0x80") > 0, "the receiver sends CNPs");
}

/// A fabric read from ibnetdiscover and routed by the subnet manager: the LIDs in the
/// capture are the ones it assigned (OpenSM's, `opensm.rs` checks).
#[test]
fn ib_capture_carries_the_subnet_managers_lids() {
    let file = example("ib-from-ibnetdiscover.toml");
    let w = world(&file);
    let sm = w.sm.as_ref().expect("routed by a subnet manager");
    let mgr = scenario::ib::sm_bring_up(&w.topo, w.layout.as_ref(), sm, w.params.ib.as_ref().unwrap().data_vls);
    let lids: Vec<u16> = (0..w.topo.endpoints.len() as u32).map(|e| mgr.ep_lid(e)).collect();
    assert!(lids.iter().all(|&l| l > 0), "{lids:?}");
    ib_capture_matches_the_run(&file, "ib-sm", w.flows.to_vec()[0].dst, &|e| lids[e as usize]);
}

/// Snap length, window, byte limit and `hottest` on InfiniBand.
#[test]
fn ib_snap_length_window_limit_and_hottest() {
    let file = example("ib-incast.toml");
    let dir = tmp("ib-snap");
    let (_, err) = run(&file, &["--json", "--pcap", dir.to_str().unwrap(), "--pcap-snaplen", "40", "--pcap-from", "10us", "--pcap-to", "20us"]);
    assert!(err.contains("h0-0.pcapng"), "{err}");
    let fcp_times: Vec<u64> =
        std::fs::read_to_string(dir.join("h0-0.fcp.csv")).unwrap().lines().skip(1).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
    assert!(!fcp_times.is_empty() && fcp_times.iter().all(|t| (10_000..=20_000).contains(t)), "{fcp_times:?}");
    if tshark_available() {
        let path = dir.join("h0-0.pcapng");
        assert!(bad_frames(&path).is_empty(), "{:?}", bad_frames(&path));
        let rows = fields(&path, "", &["frame.time_epoch", "frame.cap_len", "frame.len", "infiniband.lrh.dlid"]);
        assert!(!rows.is_empty());
        for r in &rows {
            let t = ns(&r[0]);
            assert!((10_000..=20_000).contains(&t), "frame at {t} ns outside the window");
            let (cap, len) = (r[1].parse::<u32>().unwrap(), r[2].parse::<u32>().unwrap());
            assert!(cap <= 40 && cap <= len, "{r:?}");
            assert!(!r[3].is_empty(), "the LRH survives the snap length");
        }
        assert!(rows.iter().any(|r| r[2].parse::<u32>().unwrap() > 40), "some packets were cut");
    }
    let dir = tmp("ib-limit");
    let (_, err) = run(&file, &["--json", "--pcap", dir.to_str().unwrap(), "--pcap-limit", "100KB"]);
    assert!(err.contains("reached the 100000 byte limit"), "{err}");
    assert!(std::fs::metadata(dir.join("h0-0.pcapng")).unwrap().len() <= 100_000);
    let dir = tmp("ib-hottest");
    let (_, err) = run(&file, &["--json", "--pcap", dir.to_str().unwrap(), "--pcap-ports", "hottest"]);
    assert!(err.contains("the hottest port is"), "{err}");
    let names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), 2, "a capture and its FCP log: {names:?}");
}
