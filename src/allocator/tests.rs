//! The allocator's alignment promise, checked over every layout the fast path may take and a
//! spread of the others: each block (fresh, zeroed, resized) is aligned as its layout asks.

use super::MiMalloc;
use std::alloc::{GlobalAlloc, Layout};

/// Every power-of-two alignment up to 4 KiB (mimalloc's natural-alignment limit).
fn alignments() -> impl Iterator<Item = usize> {
    (0..=12).map(|shift| 1usize << shift)
}

/// Every size up to 4097 bytes, then a spread around each power of two up to 16 MiB (past
/// mimalloc's small, medium and large size classes into its huge blocks).
fn sizes() -> impl Iterator<Item = usize> {
    let beyond = (13..=24).flat_map(|shift| {
        let power = 1usize << shift;
        [
            power - 8,
            power - 1,
            power,
            power + 1,
            power + power / 2 + 8,
        ]
    });
    (0..=4097).chain(beyond)
}

/// Whether `block` is non-null and a multiple of `align`.
fn aligned(block: *mut u8, align: usize) -> bool {
    !block.is_null() && (block as usize).is_multiple_of(align)
}

/// Blocks kept alive per layout, so a layout is served from a page's first block and from
/// blocks further in.
const LIVE_PER_LAYOUT: usize = 3;

/// The largest block kept alive (bigger ones are freed at once, to keep the test small).
const LIVE_UP_TO: usize = 64 * 1024;

#[test]
fn every_block_is_aligned_as_its_layout_asks() {
    let allocator = MiMalloc;
    let mut misaligned = Vec::new();
    for align in alignments() {
        let mut live = Vec::new();
        for size in sizes() {
            let layout = Layout::from_size_align(size, align).expect("a valid layout");
            for _ in 0..LIVE_PER_LAYOUT {
                // SAFETY: a valid layout; the block is freed below with the same layout.
                let block = unsafe { allocator.alloc(layout) };
                if !aligned(block, align) {
                    misaligned.push(("alloc", size, align));
                }
                live.push((block, layout));
            }
            // SAFETY: as above.
            let zeroed = unsafe { allocator.alloc_zeroed(layout) };
            if !aligned(zeroed, align) {
                misaligned.push(("alloc_zeroed", size, align));
            }
            live.push((zeroed, layout));
            if size > LIVE_UP_TO {
                free(&allocator, live.drain(live.len() - LIVE_PER_LAYOUT - 1..));
            }
        }
        free(&allocator, live.drain(..));
    }
    assert!(misaligned.is_empty(), "misaligned blocks: {misaligned:?}");
}

#[test]
fn every_resized_block_keeps_its_alignment() {
    let allocator = MiMalloc;
    let mut misaligned = Vec::new();
    for align in alignments() {
        for size in sizes().filter(|size| *size > 0) {
            let layout = Layout::from_size_align(size, align).expect("a valid layout");
            // SAFETY: a valid layout of a non-zero size.
            let mut block = unsafe { allocator.alloc(layout) };
            let mut current = layout;
            // Shrink past the plain path's bound, grow back past where it started.
            for new_size in [size / 2 + 1, align.max(1), size * 2 + 3, size] {
                // SAFETY: `block` came from `allocator` with `current`; new sizes are non-zero.
                block = unsafe { allocator.realloc(block, current, new_size) };
                if !aligned(block, align) {
                    misaligned.push((size, new_size, align));
                }
                current = Layout::from_size_align(new_size, align).expect("a valid layout");
            }
            // SAFETY: `block` is the last one `realloc` gave, with `current`.
            unsafe { allocator.dealloc(block, current) };
        }
    }
    assert!(
        misaligned.is_empty(),
        "misaligned after realloc: {misaligned:?}"
    );
}

/// Frees each `(block, layout)` of `blocks`.
fn free(allocator: &MiMalloc, blocks: impl Iterator<Item = (*mut u8, Layout)>) {
    for (block, layout) in blocks {
        // SAFETY: each block came from `allocator` with its layout and is not used again.
        unsafe { allocator.dealloc(block, layout) };
    }
}
