//! Allocations counted, for measuring only (the `count-allocs` feature, off by default;
//! `bench/allocs/run`): the global allocator wrapped so that every block it hands out adds to
//! two relaxed atomic counters, allocations and bytes, written to stderr whenever the process
//! gets `SIGUSR2` (`allocations=N bytes=M`).
//!
//! Counted: each `alloc`, `alloc_zeroed` and `realloc` (a growing `Vec` counts each time it
//! moves), and the bytes each asks for (a `realloc`, its new size). Frees are not counted.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Blocks handed out so far.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Bytes asked for so far.
static BYTES: AtomicU64 = AtomicU64::new(0);

/// The allocator `A`, counting what it hands out.
pub struct Counted<A>(pub A);

/// The counts so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Blocks handed out (fresh, zeroed or resized).
    pub allocations: u64,
    /// Bytes asked for.
    pub bytes: u64,
}

/// The counts so far, across every thread.
pub fn counts() -> Counts {
    Counts {
        allocations: ALLOCATIONS.load(Relaxed),
        bytes: BYTES.load(Relaxed),
    }
}

/// Counts one block of `size` bytes.
fn count(size: usize) {
    ALLOCATIONS.fetch_add(1, Relaxed);
    BYTES.fetch_add(u64::try_from(size).unwrap_or(u64::MAX), Relaxed);
}

// SAFETY: every call goes to `A` unchanged; counting touches no memory of the caller's.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counted<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { self.0.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { self.0.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}

/// Writes the counts to stderr, from a thread of its own, each time the process gets
/// `SIGUSR2`.
pub fn report_on_sigusr2() -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGUSR2])?;
    std::thread::Builder::new()
        .name("alloc-counts".into())
        .spawn(move || {
            for _ in signals.forever() {
                let Counts { allocations, bytes } = counts();
                eprintln!("allocations={allocations} bytes={bytes}");
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::System;

    #[test]
    fn each_block_handed_out_counts_with_its_size() {
        let counted = Counted(System);
        let layout = Layout::from_size_align(100, 8).unwrap();
        let before = counts();
        // SAFETY: a layout of non-zero size; the block is freed with the same layout.
        unsafe {
            let block = counted.alloc(layout);
            assert!(!block.is_null());
            let block = counted.realloc(block, layout, 300);
            assert!(!block.is_null());
            counted.dealloc(block, Layout::from_size_align(300, 8).unwrap());
        }
        let after = counts();
        // Other threads of the test binary may count too (when this allocator is theirs).
        assert!(after.allocations >= before.allocations + 2);
        assert!(after.bytes >= before.bytes + 400);
    }
}
