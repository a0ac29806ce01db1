//! dfsssp's helper: the work of routing that does not feed the next destination, done
//! inline or on a second thread while the router charges loads.
//!
//! Each destination's tree depends on the link loads the destinations before it charged,
//! so the trees are found one after another, on one thread (the *router*,
//! [`super::route_all`]). Two things around them do not read the loads:
//! - building a destination switch's [`Layers`] (they depend on the switch graph only; the
//!   router adds the current loads to them, [`Layers::load_keys`]), which the helper
//!   does ahead, for the destination switches in `schedule` order;
//! - writing the trees out ([`Writer`]): forwarding tables and VL 0's dependencies.
//!
//! With one thread ([`Helper::Inline`]) both happen on the spot. With two
//! ([`Helper::Thread`]) the router sends the helper, in order, batches to write and the
//! layers it is done with, to be rebuilt for the next switch of `schedule`; the helper
//! sends built layers and empty batches back. Layers are a pure function of their
//! destination switch and the writer of the batches in order, so results are the same
//! whatever the thread count; the router checks each received layers' switch and builds
//! its own when the schedule does not have it.
//!
//! Left out: splitting one destination's tree over threads (a barrier per layer, which on
//! a shared machine waits on a descheduled thread).

use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

use super::tree::{Graph, Layers};
use super::writer::{Batch, Writer};

/// What building layers reads, fixed for the whole route.
#[derive(Clone, Copy)]
pub(super) struct Builder<'a> {
    pub g: &'a Graph,
    /// Switch-to-switch hop counts, row by row.
    pub dist: &'a [u8],
    /// Per switch: the LIDs it and its CAs own.
    pub lids: &'a [u64],
}

impl Builder<'_> {
    /// `l` rebuilt as the layers from destination switch `d`.
    fn build(&self, l: &mut Layers, d: usize) {
        let n = self.g.n;
        l.build(self.g, d, &self.dist[d * n..(d + 1) * n], self.lids);
    }
}

/// What the router sends the helper thread, in order.
pub(super) enum Job {
    Write(Batch),
    /// Layers the router is done with, to rebuild for the next scheduled switch.
    Recycle(Box<Layers>),
}

/// The router's side of the helper.
pub(super) enum Helper<'a> {
    Inline { writer: Writer, builder: Builder<'a> },
    Thread { jobs: SyncSender<Job>, batches: Receiver<Batch>, built: Receiver<Box<Layers>>, builder: Builder<'a> },
}

impl Helper<'_> {
    /// Hands `b` over to be written; returns an empty batch to fill next.
    pub fn write(&mut self, mut b: Batch) -> Batch {
        match self {
            Helper::Inline { writer, .. } => {
                writer.write(&b);
                b.clear();
                b
            }
            Helper::Thread { jobs, batches, .. } => {
                jobs.send(Job::Write(b)).expect("the dfsssp helper thread stopped");
                batches.try_recv().unwrap_or_default()
            }
        }
    }

    /// Replaces `l` by the layers from destination switch `d` (keys: ranks only, see
    /// [`Layers::build`]).
    pub fn layers(&mut self, l: &mut Box<Layers>, d: usize) {
        match self {
            Helper::Inline { builder, .. } => builder.build(l, d),
            Helper::Thread { jobs, built, builder, .. } => loop {
                // Every layers received come back, so the helper builds the next switch of
                // its schedule into them; those for a switch the router skipped (by the
                // heap Dijkstra, or a destination LID out of range) are passed over.
                let Ok(next) = built.recv() else {
                    // The schedule is done (cannot happen for a scheduled switch).
                    builder.build(l, d);
                    return;
                };
                let old = std::mem::replace(l, next);
                jobs.send(Job::Recycle(old)).expect("the dfsssp helper thread stopped");
                if l.src == d {
                    return;
                }
            },
        }
    }
}

/// Layers built ahead on the helper thread (more absorb its being descheduled; each is
/// about 0.5 MB on the k=32 tree).
const AHEAD: usize = 3;

/// Batches in flight to the helper thread before the router waits.
const IN_FLIGHT: usize = 4;

/// Runs `route` with a [`Helper`]: inline when `threads <= 1`, else on a second thread,
/// which builds the layers of `schedule`'s destination switches ahead, in order, and
/// writes with the writer `make_writer` returns. Returns `route`'s result and the writer.
pub(super) fn run<R>(
    threads: usize,
    builder: Builder,
    schedule: &[usize],
    make_writer: impl FnOnce() -> Writer + Send,
    route: impl FnOnce(&mut Helper) -> R,
) -> (R, Writer) {
    if threads <= 1 {
        let mut h = Helper::Inline { writer: make_writer(), builder };
        let r = route(&mut h);
        let Helper::Inline { writer, .. } = h else { unreachable!("built inline above") };
        return (r, writer);
    }
    std::thread::scope(|sc| {
        let (jobs, jobs_rx) = mpsc::sync_channel::<Job>(IN_FLIGHT);
        let (batches_tx, batches) = mpsc::channel::<Batch>();
        let (built_tx, built) = mpsc::channel::<Box<Layers>>();
        let helper = sc.spawn(move || {
            let mut ahead = Ahead { builder, schedule, next: 0, built: Some(built_tx) };
            for _ in 0..AHEAD {
                ahead.supply(Box::new(Layers::new(builder.g)));
            }
            let mut w = make_writer();
            for job in jobs_rx {
                match job {
                    Job::Write(mut b) => {
                        w.write(&b);
                        b.clear();
                        // The router may be done and gone; the batch is then dropped.
                        let _ = batches_tx.send(b);
                    }
                    Job::Recycle(l) => ahead.supply(l),
                }
            }
            w
        });
        let mut h = Helper::Thread { jobs, batches, built, builder };
        let r = route(&mut h);
        drop(h);
        let w = helper.join().expect("the dfsssp helper thread panicked");
        (r, w)
    })
}

/// The helper thread's layers built ahead: the next switch of the schedule, and the
/// channel to the router, closed once the schedule is done.
struct Ahead<'a> {
    builder: Builder<'a>,
    schedule: &'a [usize],
    next: usize,
    built: Option<Sender<Box<Layers>>>,
}

impl Ahead<'_> {
    /// Builds `l` for the next scheduled switch and sends it (or drops it, the schedule
    /// done).
    fn supply(&mut self, mut l: Box<Layers>) {
        let Some(&d) = self.schedule.get(self.next) else {
            self.built = None;
            return;
        };
        self.next += 1;
        self.builder.build(&mut l, d);
        if let Some(tx) = &self.built {
            // The router may be done and gone.
            let _ = tx.send(l);
        }
    }
}
