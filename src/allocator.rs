//! The static musl build's allocator (main.rs registers it there; the glibc build keeps the
//! C library's malloc): dlmalloc (why dlmalloc: Cargo.toml, beside the dependency) behind a
//! lock of the standard library's, a futex word taken and given back with one atomic
//! instruction each when nobody waits.
//!
//! dlmalloc's own global allocator (`GlobalDlmalloc`) locks a `pthread_mutex_t`; musl's
//! `pthread_mutex_lock` and `pthread_mutex_unlock` cost about 8 and 47 instructions, and a
//! press allocates and frees about 185 times: some 10,000 of the service's 111,000 user-space
//! instructions per press went to that lock alone (callgrind, `scripts/profile.sh`).
//! The heap is the same dlmalloc, with the same settings; only the lock differs.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The heap: one dlmalloc, for every thread, behind one lock.
static HEAP: Mutex<dlmalloc::Dlmalloc> = Mutex::new(dlmalloc::Dlmalloc::new());

/// dlmalloc behind `HEAP`'s lock.
pub struct Allocator;

/// The heap, locked. A panic never happens while it is held (dlmalloc does not panic on
/// a valid request, and a release build aborts on panic), so a poisoned lock still guards
/// a consistent heap.
fn heap() -> MutexGuard<'static, dlmalloc::Dlmalloc> {
    HEAP.lock().unwrap_or_else(PoisonError::into_inner)
}

// SAFETY: every method hands its request to the one dlmalloc under `HEAP`'s lock, as
// dlmalloc's own `GlobalDlmalloc` does under its pthread mutex, so no two threads touch the
// heap at once; the standard library's lock allocates nothing (a futex word), so taking it
// cannot re-enter the allocator. The layouts passed on are the caller's, whose contracts
// (`GlobalAlloc`'s) are dlmalloc's.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Allocator {
    // SAFETY: the caller keeps `GlobalAlloc`'s contract for this method (the impl's comment).
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: `GlobalAlloc::alloc`'s contract (a layout of non-zero size), which
        // dlmalloc's `malloc` takes as it is.
        unsafe { heap().malloc(layout.size(), layout.align()) }
    }

    // SAFETY: the caller keeps `GlobalAlloc`'s contract for this method (the impl's comment).
    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator (so by this dlmalloc) with `layout`,
        // per `GlobalAlloc::dealloc`'s contract.
        unsafe { heap().free(ptr, layout.size(), layout.align()) }
    }

    // SAFETY: the caller keeps `GlobalAlloc`'s contract for this method (the impl's comment).
    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`; dlmalloc's `calloc` zeroes what it hands out.
        unsafe { heap().calloc(layout.size(), layout.align()) }
    }

    // SAFETY: the caller keeps `GlobalAlloc`'s contract for this method (the impl's comment).
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was allocated by this dlmalloc with `layout`, and `new_size` is
        // non-zero and does not overflow when rounded to the alignment, per
        // `GlobalAlloc::realloc`'s contract.
        unsafe { heap().realloc(ptr, layout.size(), layout.align(), new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(unsafe_code)]
    fn allocates_zeroes_grows_and_frees_through_the_one_heap() {
        let a = Allocator;
        for align in [1, 8, 16, 64, 4096] {
            let small = Layout::from_size_align(24, align).unwrap();
            // SAFETY: layouts of non-zero size; each pointer is freed once, with the layout
            // (or the grown size) it was allocated with.
            unsafe {
                let p = a.alloc(small);
                assert!(!p.is_null() && (p as usize).is_multiple_of(align));
                p.write_bytes(0xa5, 24);
                let grown = a.realloc(p, small, 100_000);
                assert!(!grown.is_null() && (grown as usize).is_multiple_of(align));
                assert!(
                    std::slice::from_raw_parts(grown, 24)
                        .iter()
                        .all(|&b| b == 0xa5)
                );
                a.dealloc(grown, Layout::from_size_align(100_000, align).unwrap());
                let big = Layout::from_size_align(3 << 20, align).unwrap();
                let z = a.alloc_zeroed(big);
                assert!(!z.is_null() && (z as usize).is_multiple_of(align));
                assert!(
                    std::slice::from_raw_parts(z, 3 << 20)
                        .iter()
                        .all(|&b| b == 0)
                );
                a.dealloc(z, big);
            }
        }
    }
}
