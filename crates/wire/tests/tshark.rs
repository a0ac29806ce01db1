//! Cross-check against Wireshark: write captures with this crate, dissect
//! them with `tshark`, and assert the fields Wireshark reports.
//!
//! Wireshark 4.0's InfiniBand dissector shows but does not verify the ICRC
//! and VCRC, so the CRC fields are compared with an independent bit-serial
//! CRC written here from the IBTA definition (not with `wire::crc`); the
//! ICRC algorithm itself is pinned to a hardware capture in the unit tests
//! (`icrc::tests::hardware_cnp_icrc`). Wireshark *does* verify the IPv4
//! header checksum and, when told the FCS is present, the Ethernet FCS;
//! both are asserted as "Good".
//!
//! Without tshark the test is skipped, unless `CI=true`, where it fails.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;
use wire::ethernet::strip_fcs;
use wire::*;

fn tshark_available() -> bool {
    let found = Command::new("tshark").arg("-v").output().map(|o| o.status.success()).unwrap_or(false);
    if !found {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("tshark not found but CI=true: install it (apt-get install tshark) so the Wireshark cross-check runs");
        }
        println!("tshark not found: skipping Wireshark cross-check (apt-get install tshark)");
    }
    found
}

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-{name}", std::process::id()))
}

/// Runs tshark on `file`; one row of fields per packet, or tshark's stderr.
fn try_dissect(file: &Path, prefs: &[&str], fields: &[&str]) -> std::result::Result<Vec<Vec<String>>, String> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-n").arg("-r").arg(file);
    for p in prefs {
        cmd.arg("-o").arg(p);
    }
    cmd.args(["-T", "fields", "-E", "separator=,", "-E", "occurrence=a", "-E", "aggregator=;"]);
    for f in fields {
        cmd.arg("-e").arg(f);
    }
    let out = cmd.output().map_err(|e| format!("cannot run tshark: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8(out.stdout).map_err(|_| "tshark output is not UTF-8".to_owned())?;
    Ok(text.lines().map(|l| l.split(',').map(str::to_owned).collect()).collect())
}

fn dissect(file: &Path, prefs: &[&str], fields: &[&str]) -> Vec<Vec<String>> {
    try_dissect(file, prefs, fields).unwrap_or_else(|e| panic!("tshark failed: {e}"))
}

fn write_one(path: &Path, link: LinkType, packet: &[u8]) {
    let file = std::fs::File::create(path).expect("create pcap");
    let mut w = PcapWriter::new(file, link).expect("pcap header");
    w.write_packet(5_000_000, packet).expect("write packet");
}

/// Bit-serial reflected CRC, written from the polynomial definitions
/// (IEEE 802.3 §3.2.9 for CRC-32, IBTA Vol 1 §7.8.2 for the VCRC) so it
/// shares no code with `wire::crc`.
fn crc_bitwise(data: &[u8], poly_reflected: u32, bits: u32) -> u32 {
    let mask = if bits == 32 { u32::MAX } else { (1 << bits) - 1 };
    let mut c = mask;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ poly_reflected } else { c >> 1 };
        }
    }
    !c & mask
}

/// RoCEv2/IPv4 ICRC computed independently: mask a copy of the packet as
/// IBTA Annex A17 says and CRC it behind 8 bytes of ones.
fn icrc_reference(frame: &[u8], l2_len: usize) -> u32 {
    let ip_end = frame.len() - 4; // ICRC at the end (no FCS in the capture)
    let mut m = frame[l2_len..ip_end].to_vec();
    for i in [1, 8, 10, 11, 26, 27, 32] {
        m[i] = 0xFF; // TOS, TTL, IP checksum, UDP checksum, BTH byte 4
    }
    let mut data = vec![0xFF; 8];
    data.extend_from_slice(&m);
    crc_bitwise(&data, 0xEDB8_8320, 32)
}

fn roce_frames() -> Vec<RoceFrame> {
    let base = RoceFrame {
        src_mac: EthernetAddress([0x02, 0, 0, 0, 0, 0x01]),
        dst_mac: EthernetAddress([0x02, 0, 0, 0, 0, 0x02]),
        vlan: Some(VlanTag { pcp: 3, dei: false, vid: 100 }),
        src_ip: Ipv4Addr::new(10, 0, 0, 1),
        dst_ip: Ipv4Addr::new(10, 0, 0, 2),
        payload_len: 1024,
        payload_fill: PayloadFill::Counter,
        src_port: 0xC123,
        ..RoceFrame::new(BthRepr::new(Opcode::RC_RDMA_WRITE_FIRST, 0x000123, 100))
    };
    let first = RoceFrame { reth: Some(RethRepr { va: 0x7F00_0000_0000, rkey: 0x4242, dma_len: 3072 }), ..base };
    let middle = RoceFrame { ecn: Ecn::Ce, bth: BthRepr::new(Opcode::RC_RDMA_WRITE_MIDDLE, 0x000123, 101), ..base };
    let last = RoceFrame { ecn: Ecn::Ect1, bth: BthRepr { ack_req: true, ..BthRepr::new(Opcode::RC_RDMA_WRITE_LAST, 0x000123, 102) }, ..base };
    let reply = RoceFrame {
        src_mac: base.dst_mac,
        dst_mac: base.src_mac,
        src_ip: base.dst_ip,
        dst_ip: base.src_ip,
        payload_len: 0,
        payload_fill: PayloadFill::Zeros,
        ..base
    };
    let ack = RoceFrame {
        bth: BthRepr::new(Opcode::RC_ACKNOWLEDGE, 0x000456, 102),
        aeth: Some(AethRepr { syndrome: Syndrome::Ack { credits: 31 }, msn: 1 }),
        ..reply
    };
    let nak = RoceFrame {
        bth: BthRepr::new(Opcode::RC_ACKNOWLEDGE, 0x000456, 101),
        aeth: Some(AethRepr { syndrome: Syndrome::Nak(NakCode::PsnSequenceError), msn: 0 }),
        ..reply
    };
    let cnp =
        RoceFrame { src_mac: reply.src_mac, dst_mac: reply.dst_mac, vlan: reply.vlan, src_ip: reply.src_ip, dst_ip: reply.dst_ip, ..RoceFrame::cnp(0x000456) };
    vec![first, middle, last, ack, nak, cnp]
}

fn pfc_frames() -> Vec<PfcFrame> {
    let src = EthernetAddress([0x02, 0, 0, 0, 0, 0x0A]);
    vec![
        PfcFrame { src_mac: src, control: MacControlRepr::Pfc(PfcRepr::pause(&[3, 4], 0xFFFF)) },
        PfcFrame { src_mac: src, control: MacControlRepr::Pfc(PfcRepr::pause(&[3, 4], 0)) },
        PfcFrame { src_mac: src, control: MacControlRepr::Pause(PauseRepr { quanta: 0x1234 }) },
    ]
}

/// Emits the RoCE capture: frames without FCS (LINKTYPE_ETHERNET), 1 µs
/// apart plus 1 ps to exercise truncation to ns.
fn write_ethernet_pcap(path: &Path, with_fcs: bool) -> Vec<Vec<u8>> {
    let mut frames: Vec<Vec<u8>> = roce_frames().iter().map(|f| f.emit().expect("valid frame")).collect();
    frames.extend(pfc_frames().iter().map(PfcFrame::emit));
    let file = std::fs::File::create(path).expect("create pcap");
    let mut w = PcapWriter::new(std::io::BufWriter::new(file), LinkType::Ethernet).expect("pcap header");
    for (i, f) in frames.iter().enumerate() {
        let bytes = if with_fcs { &f[..] } else { strip_fcs(f) };
        w.write_packet(1_000_000 * (i as u64 + 1) + 1, bytes).expect("write packet");
    }
    w.flush().expect("flush");
    frames
}

#[test]
fn roce_and_pfc_dissect_as_built() {
    if !tshark_available() {
        return;
    }
    let path = tmp("roce.pcap");
    let frames = write_ethernet_pcap(&path, false);
    let fields = [
        "frame.time_epoch",
        "vlan.priority",
        "ip.dsfield.dscp",
        "ip.dsfield.ecn",
        "ip.checksum.status",
        "udp.dstport",
        "udp.srcport",
        "infiniband.bth.opcode",
        "infiniband.bth.destqp",
        "infiniband.bth.psn",
        "infiniband.bth.a",
        "infiniband.reth.dmalen",
        "infiniband.reth.r_key",
        "infiniband.aeth.syndrome",
        "infiniband.aeth.syndrome.opcode",
        "infiniband.aeth.syndrome.error_code",
        "infiniband.aeth.msn",
        "infiniband.invariant.crc",
        "infiniband.vendor",
        "infiniband.reserved",
        "macc.opcode",
        "macc.cbfc.enbv",
        "macc.cbfc.pause_time.c3",
        "macc.cbfc.pause_time.c4",
        "macc.cbfc.pause_time.c0",
        "macc.pause_time",
        "frame.protocols",
    ];
    let rows = dissect(&path, &["ip.check_checksum:TRUE"], &fields);
    assert_eq!(rows.len(), 9, "one row per packet: {rows:?}");
    let col = |row: usize, name: &str| -> &str {
        let i = fields.iter().position(|f| *f == name).expect("field requested");
        rows[row].get(i).map(String::as_str).unwrap_or("")
    };

    // RoCEv2 packets 0..6.
    let want_opcode = ["6", "7", "8", "17", "17", "129"];
    let want_qp = ["0x000123", "0x000123", "0x000123", "0x000456", "0x000456", "0x000456"];
    let want_psn = ["100", "101", "102", "102", "101", "0"];
    let want_ecn = ["2", "3", "1", "2", "2", "2"];
    for i in 0..6 {
        assert!(col(i, "frame.protocols").contains("infiniband"), "row {i}: {}", col(i, "frame.protocols"));
        assert_eq!(col(i, "udp.dstport"), "4791", "row {i}");
        assert_eq!(col(i, "vlan.priority"), "3", "row {i}");
        assert_eq!(col(i, "ip.checksum.status"), "1", "row {i}: IPv4 checksum Good");
        assert_eq!(col(i, "infiniband.bth.opcode"), want_opcode[i], "row {i}");
        assert_eq!(col(i, "infiniband.bth.destqp"), want_qp[i], "row {i}");
        assert_eq!(col(i, "infiniband.bth.psn"), want_psn[i], "row {i}");
        assert_eq!(col(i, "ip.dsfield.ecn"), want_ecn[i], "row {i}");
        let f = strip_fcs(&frames[i]);
        let reference = icrc_reference(f, 18);
        if i < 5 {
            // Wireshark shows the ICRC as a big-endian u32 of the wire bytes.
            let field = col(i, "infiniband.invariant.crc");
            let shown = u32::from_str_radix(field.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("row {i}: ICRC field {field:?}"));
            assert_eq!(shown.swap_bytes(), reference, "row {i}: ICRC");
        } else {
            // Wireshark 4.0 does not know the CNP opcode 0x81 ("Unknown
            // (129)") and shows everything after the BTH as vendor data:
            // the 16 reserved bytes, then the ICRC.
            let want: String = [0u8; 16].iter().chain(&reference.to_le_bytes()).map(|b| format!("{b:02x}")).collect();
            // The vendor item occurs twice (a 4-byte group, then the data).
            assert_eq!(col(i, "infiniband.vendor").rsplit(';').next(), Some(&want[..]), "row {i}: CNP reserved bytes + ICRC");
            // BTH byte 4 (FECN/BECN, which Wireshark 4.0 calls Reserved): BECN.
            assert_eq!(col(i, "infiniband.reserved"), "40", "row {i}: BECN");
        }
    }
    assert_eq!(col(0, "udp.srcport"), "49443");
    assert_eq!(col(0, "ip.dsfield.dscp"), "26");
    assert_eq!(col(5, "ip.dsfield.dscp"), "48");
    assert_eq!(col(0, "infiniband.reth.dmalen"), "3072");
    assert_eq!(col(0, "infiniband.reth.r_key"), "0x00004242");
    assert_eq!(col(1, "infiniband.reth.dmalen"), "");
    assert_eq!(col(2, "infiniband.bth.a"), "1");
    // ACK: syndrome 0x1F (ACK, 31 credits); NAK: 0x60 (NAK, PSN sequence error).
    assert_eq!(col(3, "infiniband.aeth.syndrome"), "31");
    assert_eq!(col(3, "infiniband.aeth.syndrome.opcode"), "0");
    assert_eq!(col(3, "infiniband.aeth.msn"), "1");
    assert_eq!(col(4, "infiniband.aeth.syndrome"), "96");
    assert_eq!(col(4, "infiniband.aeth.syndrome.opcode"), "3");
    assert_eq!(col(4, "infiniband.aeth.syndrome.error_code"), "0");

    // PFC pause of priorities 3 and 4, then the zero-quanta resume.
    for (i, q) in [(6, "65535"), (7, "0")] {
        assert_eq!(col(i, "macc.opcode"), "0x0101", "row {i}");
        assert_eq!(col(i, "macc.cbfc.enbv"), "0x0018", "row {i}");
        assert_eq!(col(i, "macc.cbfc.pause_time.c3"), q, "row {i}");
        assert_eq!(col(i, "macc.cbfc.pause_time.c4"), q, "row {i}");
        assert_eq!(col(i, "macc.cbfc.pause_time.c0"), "0", "row {i}");
    }
    assert_eq!(col(8, "macc.opcode"), "0x0001");
    assert_eq!(col(8, "macc.pause_time"), "4660");

    // Timestamps: 1 µs + 1 ps truncated to 0.000001000 s.
    assert_eq!(col(0, "frame.time_epoch"), "0.000001000");
    std::fs::remove_file(&path).ok();
}

#[test]
fn fcs_verified_by_wireshark() {
    if !tshark_available() {
        return;
    }
    let path = tmp("fcs.pcap");
    let frames = write_ethernet_pcap(&path, true);
    let rows = dissect(&path, &["eth.fcs:Always", "eth.check_fcs:TRUE"], &["eth.fcs", "eth.fcs.status"]);
    assert_eq!(rows.len(), frames.len());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.get(1).map(String::as_str), Some("1"), "row {i}: FCS status Good: {r:?}");
        let n = frames[i].len();
        let fcs = u32::from_le_bytes([frames[i][n - 4], frames[i][n - 3], frames[i][n - 2], frames[i][n - 1]]);
        assert_eq!(fcs, crc_bitwise(&frames[i][..n - 4], 0xEDB8_8320, 32), "row {i}");
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn native_ib_dissects_as_built() {
    if !tshark_available() {
        return;
    }
    let pkt = IbPacket {
        vl: 2,
        sl: 5,
        reth: Some(RethRepr { va: 0x1000, rkey: 0xBEEF, dma_len: 512 }),
        payload_len: 512,
        payload_fill: PayloadFill::Counter,
        ..IbPacket::new(0x0012, 0x0034, BthRepr::new(Opcode::RC_RDMA_WRITE_ONLY, 0x0000AB, 7))
    };
    let bytes = pkt.emit().expect("valid packet");
    let path = tmp("ib.pcap");
    write_one(&path, LinkType::Infiniband, &bytes);
    let fields = [
        "infiniband.lrh.vl",
        "infiniband.lrh.lver",
        "infiniband.lrh.sl",
        "infiniband.lrh.lnh",
        "infiniband.lrh.dlid",
        "infiniband.lrh.pktlen",
        "infiniband.lrh.slid",
        "infiniband.bth.opcode",
        "infiniband.bth.destqp",
        "infiniband.bth.psn",
        "infiniband.reth.dmalen",
        "infiniband.invariant.crc",
        "infiniband.variant.crc",
    ];
    // LINKTYPE_INFINIBAND (247) is the registered link type, but Wireshark
    // 4.0 has no mapping for it in pcap files ("network type 247 unknown
    // or unsupported"). Where that is so, write the same bytes as
    // LINKTYPE_USER0 and bind it to the "infiniband" dissector, which is
    // exactly what the 247 mapping would select.
    let rows = match try_dissect(&path, &[], &fields) {
        Ok(rows) => rows,
        Err(msg) if msg.contains("network type 247") => {
            println!("tshark does not read LINKTYPE_INFINIBAND; using LINKTYPE_USER0 -> infiniband");
            let user = tmp("ib-user0.pcap");
            write_one(&user, LinkType::User(0), &bytes);
            let uat = r#"uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0","""#;
            let rows = dissect(&user, &[uat], &fields);
            std::fs::remove_file(&user).ok();
            rows
        }
        Err(msg) => panic!("tshark failed: {msg}"),
    };
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    // LRH 8 + BTH 12 + RETH 16 + 512 + ICRC 4 = 552 bytes = 138 words.
    let want = ["0x02", "0", "5", "0x02", "18", "138", "52", "10", "0x0000ab", "7", "512"];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(r[i], *w, "{}: {r:?}", fields[i]);
    }
    // ICRC: independent computation with the LRH masked to ones (IBTA
    // Vol 1 §7.8.1) and BTH byte 4 masked.
    let n = bytes.len();
    let mut m = bytes[..n - 6].to_vec();
    m[..8].fill(0xFF);
    m[8 + 4] = 0xFF;
    let icrc = crc_bitwise(&m, 0xEDB8_8320, 32);
    let shown = u32::from_str_radix(r[11].trim_start_matches("0x"), 16).expect("ICRC field");
    assert_eq!(shown.swap_bytes(), icrc, "ICRC");
    let vcrc = crc_bitwise(&bytes[..n - 2], 0xD008, 16) as u16;
    let shown = u16::from_str_radix(r[12].trim_start_matches("0x"), 16).expect("VCRC field");
    assert_eq!(shown.swap_bytes(), vcrc, "VCRC");
    std::fs::remove_file(&path).ok();
}

/// Native InfiniBand as Debian's Wireshark reads it: LINKTYPE_ERF (197). ERF type 21
/// goes to the `infiniband` dissector, which shows every field of LRH, BTH, RETH/AETH,
/// ICRC and VCRC as built, with the ERF capture interface as the direction; IB CC's CNP
/// (0x80) dissects without error. ERF type 25 (flow control) is
/// `flow_control_erf_is_read_as_an_lrh`'s.
#[test]
fn native_ib_as_erf_dissects() {
    if !tshark_available() {
        return;
    }
    let write = IbPacket {
        vl: 2,
        sl: 5,
        reth: Some(RethRepr { va: 0, rkey: 0x77, dma_len: 8192 }),
        payload_len: 4096,
        ..IbPacket::new(0x0011, 0x0022, BthRepr::new(Opcode::RC_RDMA_WRITE_FIRST, 0x100, 7))
    };
    let ack = IbPacket {
        vl: 3,
        sl: 1,
        aeth: Some(AethRepr { syndrome: Syndrome::Ack { credits: 31 }, msn: 0 }),
        ..IbPacket::new(0x0022, 0x0011, BthRepr::new(Opcode::RC_ACKNOWLEDGE, 0x100, 7))
    };
    let nak = IbPacket { aeth: Some(AethRepr { syndrome: Syndrome::Nak(NakCode::PsnSequenceError), msn: 0 }), ..ack };
    // IB congestion control's CNP: opcode 0x80, BECN, 16 reserved bytes.
    let mut cnp_bth = BthRepr::new(Opcode::IB_CNP, 0x100, 0);
    cnp_bth.becn = true;
    let cnp = IbPacket { vl: 2, sl: 5, ..IbPacket::new(0x0011, 0x0022, cnp_bth) };
    let path = tmp("ib.erf.pcap");
    let file = std::fs::File::create(&path).unwrap();
    let mut w = PcapWriter::new(file, LinkType::Erf).unwrap();
    let packets = [write.emit().unwrap(), ack.emit().unwrap(), nak.emit().unwrap(), cnp.emit().unwrap()];
    for (i, p) in packets.iter().enumerate() {
        let t = 1_000_000 * (i as u64 + 1);
        w.write_packet(t, &erf::record(t, erf::TYPE_INFINIBAND, (i % 2) as u8, p)).unwrap();
    }
    drop(w);
    let fields = [
        "erf.types.type",
        "_ws.malformed",
        "infiniband.lrh.vl",
        "infiniband.lrh.sl",
        "infiniband.lrh.dlid",
        "infiniband.lrh.slid",
        "infiniband.bth.opcode",
        "infiniband.bth.destqp",
        "infiniband.bth.psn",
        "infiniband.reth.dmalen",
        "infiniband.aeth.syndrome",
        "infiniband.invariant.crc",
        "infiniband.variant.crc",
        "erf.flags.cap",
        "_ws.expert.severity",
        "infiniband.vendor",
    ];
    let rows = dissect(&path, &[], &fields);
    let col = |row: usize, name: &str| -> String {
        let i = fields.iter().position(|f| *f == name).unwrap();
        rows[row].get(i).cloned().unwrap_or_default()
    };
    assert_eq!(rows.len(), 4);
    for (i, p) in [write, ack, nak, cnp].iter().enumerate() {
        assert_eq!(col(i, "erf.types.type"), "21", "row {i}");
        assert_eq!(col(i, "_ws.malformed"), "", "row {i}");
        assert_eq!(col(i, "_ws.expert.severity"), "", "row {i}: no expert info");
        assert_eq!(col(i, "infiniband.lrh.vl"), format!("0x{:02x}", p.vl), "row {i}");
        assert_eq!(col(i, "infiniband.lrh.sl"), p.sl.to_string(), "row {i}");
        assert_eq!(col(i, "infiniband.lrh.dlid"), p.dlid.to_string(), "row {i}");
        assert_eq!(col(i, "infiniband.lrh.slid"), p.slid.to_string(), "row {i}");
        assert_eq!(col(i, "infiniband.bth.destqp"), "0x000100", "row {i}");
        assert_eq!(col(i, "infiniband.bth.psn"), p.bth.psn.to_string(), "row {i}");
        // The ERF capture interface (Wireshark: 0 "sent", 1 "received").
        assert_eq!(col(i, "erf.flags.cap"), (i % 2).to_string(), "row {i}");
        let b = &packets[i];
        if p.bth.opcode == Opcode::IB_CNP {
            // Wireshark 4.0 knows opcode 0x80 by name only: what follows the BTH is shown
            // as a 4-byte header item and one field of the rest: the 16 reserved bytes
            // and both CRCs.
            assert_eq!(b.len(), 8 + 12 + 16 + 4 + 2);
            let hex: String = b[20..].iter().map(|x| format!("{x:02x}")).collect();
            assert_eq!(col(i, "infiniband.vendor").rsplit(';').next(), Some(hex.as_str()), "row {i}");
            continue;
        }
        // The CRCs as emitted (Wireshark shows the wire bytes as big-endian numbers).
        let icrc = u32::from_be_bytes(b[b.len() - 6..b.len() - 2].try_into().unwrap());
        assert_eq!(col(i, "infiniband.invariant.crc"), format!("0x{icrc:08x}"), "row {i}");
        let vcrc = u16::from_be_bytes(b[b.len() - 2..].try_into().unwrap());
        assert_eq!(col(i, "infiniband.variant.crc"), format!("0x{vcrc:04x}"), "row {i}");
    }
    assert_eq!(col(0, "infiniband.bth.opcode"), "6");
    assert_eq!(col(0, "infiniband.reth.dmalen"), "8192");
    assert_eq!(col(1, "infiniband.aeth.syndrome"), "31");
    assert_eq!(col(2, "infiniband.aeth.syndrome"), "96");
    assert_eq!(col(3, "infiniband.bth.opcode"), "128");
    std::fs::remove_file(&path).ok();
}

/// Why fabriclab writes no ERF type-25 records: Wireshark 4.0's `infiniband_link`
/// dissector first reads the link packet as a Local Route Header for its address columns
/// (`dissect_general_info`, `packet-infiniband.c` line 2242 at tag v4.0.17), so a correct
/// 6-byte flow-control packet is "Malformed" (the LRH's SLID would be bytes 6-7), with
/// bytes 2-3 shown as the destination LID; given two more bytes whose LNH bits (the low
/// two bits of byte 1, FCTBS's lowest here) say "raw", the same packet dissects. A
/// Wireshark that reads the 6-byte packet passes the first half and says so.
#[test]
fn flow_control_erf_is_read_as_an_lrh() {
    if !tshark_available() {
        return;
    }
    let fcp = FlowControlRepr { op: 0, fctbs: 0x020, vl: 2, fccl: 0x456 }.emit().unwrap();
    assert_eq!(fcp.len(), ib_fc::FCP_LEN);
    let path = tmp("fcp.erf.pcap");
    let file = std::fs::File::create(&path).unwrap();
    let mut w = PcapWriter::new(file, LinkType::Erf).unwrap();
    w.write_packet(1_000, &erf::record(1_000, erf::TYPE_INFINIBAND_LINK, 0, &fcp)).unwrap();
    let mut padded = fcp.to_vec();
    padded.extend_from_slice(&[0, 0]);
    w.write_packet(2_000, &erf::record(2_000, erf::TYPE_INFINIBAND_LINK, 0, &padded)).unwrap();
    drop(w);
    let fields = ["erf.types.type", "frame.protocols", "_ws.malformed", "_ws.col.Destination", "infiniband_link.fccl", "infiniband_link.vl"];
    let rows = dissect(&path, &[], &fields);
    assert_eq!(rows.len(), 2);
    let col = |row: usize, i: usize| rows[row].get(i).cloned().unwrap_or_default();
    assert_eq!(col(0, 0), "25");
    assert!(col(0, 1).ends_with("erf:infiniband_link"), "{}", col(0, 1));
    let version = Command::new("tshark").arg("-v").output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    if col(0, 2).is_empty() && col(0, 4) == "1110" {
        println!("this Wireshark dissects a 6-byte ERF type-25 flow-control packet: fabriclab could write them (docs/captures.md)");
        return;
    }
    assert!(!col(0, 2).is_empty(), "the 6-byte FCP is malformed: {:?}", rows[0]);
    assert_eq!(col(0, 4), "", "no FCCL shown: the exception came first");
    // Bytes 2-3 (VL 2, FCCL 0x456: 0x2456) taken as the LRH's DLID.
    assert_eq!(col(0, 3), format!("LID: {}", 0x2456), "{:?}", rows[0]);
    // With two more bytes the LRH reading ends before the packet does: dissected whole.
    assert_eq!(col(1, 2), "", "{:?}", rows[1]);
    assert_eq!((col(1, 4).as_str(), col(1, 5).as_str()), ("1110", "2"), "{:?}", rows[1]);
    assert!(version.contains("4.0."), "the LRH reading is Wireshark 4.0's; this is {version}");
    std::fs::remove_file(&path).ok();
}
