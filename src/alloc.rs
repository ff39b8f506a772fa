//! Tuning of the global allocator for a process that renders many charts and kustomizations
//! one after another (`lint` over a repo, the render benchmarks).
//!
//! mimalloc v3 hands pages that stay free for a second back to the kernel; the next render
//! then faults them in again and the kernel zeroes each one. Rendering the Helm corpus in one
//! process spent ~7% of its CPU in that page clearing (`clear_page_erms`), ~1% with purging
//! off. Peak memory is unchanged: the pages kept are the ones the largest render needed.

/// Index of `mi_option_purge_delay` in mimalloc v3's `mi_option_e` (mimalloc.h); the Rust
/// binding names only the options that mimalloc v2 had at the same places.
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keep freed pages mapped for reuse, and in small pages. Call at start-up, before rendering.
///
/// mimalloc asks for transparent huge pages on its arenas (`madvise(MADV_HUGEPAGE)`); where
/// the kernel compacts memory on such a fault (the default `defrag` setting, `madvise`), a
/// lint of a 6,000-object repo took 0.9 to 2.6 s from one run to the next, up to 2 s of it in
/// the kernel zeroing and compacting 2 MiB pages. With small pages it took 0.9–1.0 s every
/// time. The flag is the process's, checked at each page fault, so setting it after the
/// allocator started still holds for every page touched from here on.
pub fn keep_freed_pages() {
    #[cfg(target_os = "linux")]
    // Refused only by kernels older than 3.15; the lint is then just slower.
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    #[cfg(feature = "mimalloc")]
    // SAFETY: `mi_option_set` only stores an integer in mimalloc's option table (an atomic
    // write); it has no pointer arguments and no preconditions.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
}

#[cfg(all(test, feature = "mimalloc"))]
mod tests {
    use super::*;

    #[test]
    fn the_option_index_is_the_purge_delay() {
        // SAFETY: reads an integer from mimalloc's option table.
        #[allow(unsafe_code)]
        let before = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        // 1000 ms is v3's default purge delay; -1 if a test already called keep_freed_pages.
        // Any other option at this index (a wrong index) has a different value.
        assert!(before == 1000 || before == -1, "option 15 is {before}");
        keep_freed_pages();
        #[allow(unsafe_code)]
        let after = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(after, -1);
    }
}
