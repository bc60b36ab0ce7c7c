//! What the process's allocator may ask of the kernel. Each binary sets mimalloc as its
//! allocator in its `main` (`src/main.rs`, `benches/src/main.rs`) and calls
//! [`without_huge_pages`] first.

/// Turns transparent huge pages off for this process and the processes it starts.
///
/// mimalloc asks for huge pages on the memory it maps (`madvise(MADV_HUGEPAGE)`), which
/// the kernel grants where its setting is `madvise` (Debian's) or `always`: the first
/// touch of each 2 MiB then faults and has the kernel zero the whole of it. The fold
/// allocates a batch's records on its thread and frees them on the writer's, so that
/// mimalloc keeps mapping fresh memory and the kernel kept zeroing it: in a perf sample of
/// the service applying amendments, a fifth of the projector's thread was the kernel
/// clearing huge pages. What the fold and the replay gain with them off: BENCHMARKS.md's
/// "What was tried".
///
/// The setting is inherited by the processes this one starts (the local `nats-server` of
/// a `racing serve` without a NATS address, the bench's servers): Go's runtime and glibc's
/// malloc do not ask for huge pages, so under `madvise` they are not changed. Where the
/// kernel refuses (not Linux, or a sandbox's filter), nothing changes.
pub fn without_huge_pages() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}
