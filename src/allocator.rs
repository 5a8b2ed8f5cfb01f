//! The global allocator: mimalloc, asked the way Rust's system allocator asks malloc. A layout
//! whose alignment every mimalloc block already has goes to plain `mi_malloc`; only a larger
//! alignment takes mimalloc's aligned path. (The `mimalloc` crate sends every allocation down
//! the aligned path, whose fast case covers blocks of up to 1 KiB only: each larger one, and a
//! proxy makes ~24 per request (read buffers, boxed futures), over-allocated and re-aligned,
//! ~5 k instructions per request in callgrind.)

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
