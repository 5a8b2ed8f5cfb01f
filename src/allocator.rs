//! The global allocator: mimalloc, asked the way Rust's system allocator asks malloc. A layout
//! whose alignment every mimalloc block already has goes to plain `mi_malloc`; only a larger
//! alignment takes mimalloc's aligned path. (The `mimalloc` crate sends every allocation down
//! the aligned path, whose fast case covers blocks of up to 1 KiB only: each larger one, and a
//! proxy makes ~24 per request (read buffers, boxed futures), over-allocated and re-aligned,
//! ~5 k instructions per request in callgrind.)
//!
//! Why the plain path is sound. The `mimalloc` crate once took it for a wider rule (any
//! alignment up to `MI_MAX_ALIGN_GUARANTEE` dividing the size) and returned misaligned blocks
//! when mimalloc's internals changed (RUSTSEC-2022-0094, mimalloc_rust#87); its fix was to
//! always ask the aligned path. Ours is the narrow rule jemallocator and Rust's own `System`
//! use, `align <= MI_MAX_ALIGN_SIZE (16) && align <= size`, which rests on what the mimalloc
//! of `libmimalloc-sys` 0.1.49 (v3.3) keeps: size classes of up to 8 words are rounded to 2
//! words (`page-queue.c`, `MI_ALIGN2W`), a page's first block is 16-aligned
//! (`MI_PAGE_MIN_START_BLOCK_ALIGN`), and every block of 16 bytes or more is 16-aligned
//! (asserted in `alloc.c`), so a block under 16 bytes is one word and 8-aligned, enough for
//! any alignment not above its size. `tests.rs` proves it rather than trusting it: every
//! power-of-two alignment up to 4 KiB with every size up to 4097 bytes and a spread to 16 MiB,
//! fresh, zeroed and resized (widening the rule to 4 KiB fails it at once). Guarded pages and
//! padding (mimalloc's `debug`/`secure` builds) are off here; re-run the test when
//! `libmimalloc-sys` or its features change.

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};
use std::alloc::{GlobalAlloc, Layout};

/// The alignment of every mimalloc block of at least this size (`MI_MAX_ALIGN_SIZE`).
const MIN_ALIGN: usize = 16;

/// mimalloc as the global allocator.
pub struct MiMalloc;

/// Whether a block of `size` bytes from plain `mi_malloc` is aligned to `align`.
fn plain(size: usize, align: usize) -> bool {
    align <= MIN_ALIGN && align <= size
}

// SAFETY: each call hands mimalloc a layout's size and alignment and returns its block (or
// null) unchanged; a block is freed and resized only by mimalloc, which knows its size.
unsafe impl GlobalAlloc for MiMalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let block = match plain(layout.size(), layout.align()) {
            true => unsafe { mi_malloc(layout.size()) },
            false => unsafe { mi_malloc_aligned(layout.size(), layout.align()) },
        };
        block.cast()
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let block = match plain(layout.size(), layout.align()) {
            true => unsafe { mi_zalloc(layout.size()) },
            false => unsafe { mi_zalloc_aligned(layout.size(), layout.align()) },
        };
        block.cast()
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi_free(ptr.cast()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let block = match plain(new_size, layout.align()) {
            true => unsafe { mi_realloc(ptr.cast(), new_size) },
            false => unsafe { mi_realloc_aligned(ptr.cast(), new_size, layout.align()) },
        };
        block.cast()
    }
}

/// Hands the pages mimalloc keeps for reuse back to the system: after a rare big allocation
/// (a CrowdSec answer of megabytes), so the process does not stay at its peak.
pub fn give_back() {
    extern "C" {
        fn mi_collect(force: bool);
    }
    // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any time.
    unsafe { mi_collect(true) }
}

#[cfg(feature = "count-allocs")]
mod counted;
#[cfg(feature = "count-allocs")]
pub use counted::{report_on_sigusr2, Counted};

#[cfg(test)]
mod tests;
