//! The `auto` headroom is tight in both directions.
//!
//! Worst case built here: a 300 m cable from sender h0 to switch s0; h0 and h2 write to
//! h1 (2:1 at s0's port to h1), so h0's ingress PG pauses again and again; h1 writes back
//! to h0 in a lossy class at line rate, so every PFC frame s0 sends to h0 waits behind a
//! maximum-size frame already on the wire, at a different phase each pause cycle. The
//! buffer is counted in 256-byte cells. `auto` is the IEEE 802.1Qbb window W with the
//! simulator's whole-frame admission: ceil(W/P) = 16 maximum frames (272 cells) after a
//! static trigger, one more with a dynamic trigger (the frame that finds its PG over a
//! threshold that fell since its last arrival lands in headroom itself; `model::headroom`).
//! With `auto` nothing drops (and with the static trigger the peak headroom use is the bound
//! exactly); with one maximum frame (17 cells) less the lossless class drops, every drop
//! attributed to headroom overflow.

mod common;
use common::*;

fn world(headroom: &str, xoff: &str) -> scenario::World {
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
        &BUFFER
            .replace("headroom = \"auto\"", &format!("headroom = \"{headroom}\""))
            .replace("xoff = \"dynamic\"", &format!("xoff = \"{xoff}\"\nxon_offset = \"20KB\"")),
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
fn auto_headroom_is_enough_and_one_mtu_less_is_not() {
    let frame_cells = 4174u64.div_ceil(256);
    // Static trigger: 16 maximum frames follow the one that crosses it. Dynamic trigger:
    // that frame can land in headroom too (α·free falls while h2's PG fills the pool).
    for (xoff, frames) in [("40KB", 16), ("dynamic", 17)] {
        let w = world("auto", xoff);
        let p0 = w.topo.port_of(fabric::topology::NodeId(8), 0).0 as usize;
        let auto_cells = w.headroom_cells[p0];
        assert_eq!(auto_cells, frames * frame_cells, "{xoff}");
        let (sim, r) = report::run(&w, false);
        let peak = sim.stats.ports[p0].peak_headroom_cells;
        assert_eq!(r.totals.drops, 0, "{xoff}");
        assert!(r.totals.pfc_frames > 50, "{xoff}: the pattern must pause often: {}", r.totals.pfc_frames);
        assert!(peak <= auto_cells, "{xoff}: peak {peak} cells > auto {auto_cells}");
        if xoff == "40KB" {
            assert_eq!(peak, auto_cells, "the peak is the bound exactly");
        }
        // One maximum frame (4174 B = 17 cells of 256 B) less.
        let short = world(&format!("{}B", (auto_cells - frame_cells) * 256), xoff);
        let (_, r2) = report::run(&short, false);
        let hdrm_drops = r2.totals.drops_by_cause.iter().find(|(c, _)| c == "headroom-overflow").unwrap().1;
        assert!(hdrm_drops > 0, "{xoff}: peak {peak} of {auto_cells} cells; with {} cells nothing dropped", auto_cells - frame_cells);
        assert_eq!(hdrm_drops, r2.totals.drops, "{xoff}");
    }
}
