//! A parallel map over indices on scoped threads, results in index order: what `sweep`
//! and the nccl-tests size sweep (`run -b/-e`) spread their simulations with. Workers take
//! the next index as they finish, so the order of completion varies; the results do not.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Maps `work` over `0..n` on `workers` threads; results in index order.
pub fn par_map<T: Send>(workers: usize, n: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = work(i);
                *slots[i].lock().expect("a worker panicked") = Some(r);
            });
        }
    });
    slots.into_iter().map(|m| m.into_inner().expect("a worker panicked").expect("every index ran")).collect()
}
