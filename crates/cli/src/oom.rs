//! Out of memory as an error, never an abort: the global allocator is the system's,
//! except that an allocation the system refuses ends the process with exit code 2 and a
//! message naming the size, like every other refusal, instead of Rust's
//! "memory allocation of N bytes failed" and SIGABRT.
//!
//! The estimate (`scenario::estimate`) refuses scenarios beyond the machine before
//! anything is built; this catches what gets past it (`--force`, an estimate too low,
//! other processes taking the memory). Writing the message must not allocate: the
//! digits go into a stack buffer and out with one `write(2)`, and the process ends with
//! `_exit`, which runs no destructors and no atexit handlers that might.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, with refusals turned into a clean exit.
pub struct Checked;

// SAFETY: every call is forwarded to `System` unchanged; only its failure is handled.
unsafe impl GlobalAlloc for Checked {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded; `ptr` came from `System` with `layout`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            out_of_memory(new_size);
        }
        p
    }
}

/// Writes "error: out of memory: ..." to stderr and exits with code 2, allocating
/// nothing.
fn out_of_memory(size: usize) -> ! {
    let mut buf = [0u8; 320];
    let mut n = 0;
    let mut put = |s: &[u8]| {
        let k = s.len().min(buf.len() - n);
        buf[n..n + k].copy_from_slice(&s[..k]);
        n += k;
    };
    put(b"\nerror: out of memory: this machine refused an allocation of ");
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = size;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    put(&digits[i..]);
    put(b" bytes. The scenario is larger than this machine can hold: `fabriclab run FILE --estimate` shows what it needs, term by term (--force skips the check that refuses such scenarios)\n");
    // SAFETY: writes our own stack buffer to fd 2, then ends the process without running
    // anything that could allocate.
    unsafe {
        libc::write(2, buf.as_ptr().cast(), n);
        libc::_exit(2);
    }
}
