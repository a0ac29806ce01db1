//! The `auto` headroom (IEEE 802.1Qbb worst case) is tight in both directions.
//!
//! Worst case built here: a 300 m cable from sender h0 to switch s0; h0 and h2 write to
//! h1 (2:1 at s0's port to h1), so h0's ingress PG pauses again and again; h1 writes back
//! to h0 in a lossy class at line rate, so every PFC frame s0 sends to h0 waits behind a
//! maximum-size frame already on the wire, at a different phase each pause cycle. The
//! buffer is counted in 256-byte cells. With the auto headroom nothing drops and the peak
//! headroom use stays within it. The simulated need is exactly the whole-frame bound
//! ceil(W/P) frames (the model's `whole_frame_admission`); `auto` adds one frame over it as
//! an allowance for interleaved short tail frames, so it is headroom two maximum frames
//! short of `auto` that drops here, with every drop attributed to headroom overflow.

mod common;
use common::*;

fn world(headroom: &str) -> fabric::World {
    let topo = r#"
[topology]
kind = "explicit"
nodes = [{ name = "h0", kind = "host" }, { name = "h1", kind = "host" }, { name = "h2", kind = "host" },
         { name = "h3", kind = "host" }, { name = "h4", kind = "host" }, { name = "h5", kind = "host" },
         { name = "h6", kind = "host" }, { name = "h7", kind = "host" },
         { name = "s0", kind = "switch", ports = 8 }]
links = [
  { a = "h0", b = "s0:0", speed = "100Gbps", cable = "300m" },
  { a = "h1", b = "s0:1", speed = "10Gbps", cable = "2m" },
  { a = "h2", b = "s0:2", speed = "100Gbps", cable = "2m" },
  { a = "h3", b = "s0:3", speed = "100Gbps", cable = "2m" },
  { a = "h4", b = "s0:4", speed = "100Gbps", cable = "2m" },
  { a = "h5", b = "s0:5", speed = "100Gbps", cable = "2m" },
  { a = "h6", b = "s0:6", speed = "100Gbps", cable = "2m" },
  { a = "h7", b = "s0:7", speed = "100Gbps", cable = "2m" },
]
"#;
    let s = scenario(
        topo,
        "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }",
        &BUFFER.replace("headroom = \"auto\"", &format!("headroom = \"{headroom}\"")).replace("xoff = \"dynamic\"", "xoff = \"40KB\"\nxon_offset = \"20KB\""),
        r#"
[[traffic]]
kind = "message"
src = 0
dst = 1
size = "20MB"
at = "0us"
dscp = 26

[[traffic]]
kind = "incast"
receiver = 1
senders = [2, 3, 4, 5, 6, 7]
size = "5MB"
dscp = 26

[[traffic]]
kind = "message"
src = 1
dst = 0
size = "20MB"
at = "0us"
dscp = 0
"#,
    );
    load(&s)
}

#[test]
fn auto_headroom_is_enough_and_one_frame_less_is_not() {
    let w = world("auto");
    let auto_cells = w.headroom_cells[w.topo.port_of(fabric::topology::NodeId(8), 0).0 as usize];
    let (sim, r) = w.run(false);
    let p0 = w.topo.port_of(fabric::topology::NodeId(8), 0).0 as usize;
    let peak = sim.stats.ports[p0].peak_headroom_cells;
    assert_eq!(r.totals.drops, 0);
    assert!(r.totals.pfc_frames > 50, "the pattern must pause often: {}", r.totals.pfc_frames);
    assert!(peak <= auto_cells, "peak {peak} cells > auto {auto_cells}");
    // The simulated peak is the whole-frame bound exactly: auto minus its one-frame allowance.
    let frame_cells = 4174u64.div_ceil(256);
    assert_eq!(peak, auto_cells - frame_cells, "peak equals ceil(W/P) maximum frames");
    // One maximum frame (4174 B = 17 cells of 256 B) below the simulated need.
    let short = world(&format!("{}B", (auto_cells - 2 * frame_cells) * 256));
    let (_, r2) = short.run(false);
    let hdrm_drops = r2.totals.drops_by_cause.iter().find(|(c, _)| c == "headroom-overflow").unwrap().1;
    assert!(hdrm_drops > 0, "peak {peak} of {auto_cells} cells; with {} cells nothing dropped", auto_cells - frame_cells);
    assert_eq!(hdrm_drops, r2.totals.drops);
}
