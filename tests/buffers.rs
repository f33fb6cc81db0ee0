//! The kept-buffer pool on the CPU: freed buffers stay with the process
//! (no page faults when the next step makes the same arrays), up to the cap
//! set by `nabla::set_buffer_cap`, and `nabla::release_buffers` hands them
//! back. Its own binary without the test harness, so that it runs on the
//! main thread, whose heap the settings govern, and reads the process's
//! resident memory undisturbed.

use nabla::{Array, DType};

/// Resident memory of this process in MiB (Linux's /proc/self/statm).
fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc");
    let pages: f64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096.0 / (1 << 20) as f64
}

/// Makes and drops 64 MiB of arrays (every page written), keeping a
/// small array made after each one alive, so that the freed buffers are
/// not at the top of the heap (where glibc trims them by itself).
fn peak() -> Vec<Array> {
    let small = || Array::ones(&[32 << 10], DType::F64);
    let a = Array::ones(&[4 << 20], DType::F64);
    let s1 = small();
    let b = &a * 2.0;
    let s2 = small();
    assert_eq!(b.sum().item(), (8 << 20) as f64);
    vec![s1, s2]
}

fn main() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        println!("buffers: skipped (the pool is glibc's heap)");
        return;
    }
    if std::env::var_os("NABLA_MALLOC_DEFAULTS").is_some() {
        println!("buffers: skipped (NABLA_MALLOC_DEFAULTS is set)");
        return;
    }
    // Applied on the first array; a buffer made before then comes from
    // glibc's defaults.
    nabla::keep_freed_buffers();
    let base = rss_mib();
    let _live1 = peak();
    let kept = rss_mib();
    println!("buffers: {base:.1} MiB before a 64 MiB peak, {kept:.1} MiB after it");
    assert!(
        kept - base > 48.0,
        "freed buffers are kept for reuse: RSS {base:.1} -> {kept:.1} MiB"
    );
    nabla::release_buffers();
    let released = rss_mib();
    println!("buffers: {released:.1} MiB after release_buffers()");
    assert!(
        kept - released > 48.0,
        "release_buffers hands them back: {kept:.1} -> {released:.1} MiB"
    );

    // Under a 16 MiB cap, a 64 MiB peak is handed back as it is freed.
    nabla::set_buffer_cap(16 << 20);
    assert_eq!(nabla::buffer_cap(), 16 << 20);
    let before = rss_mib();
    let _live3 = peak();
    let capped = rss_mib();
    println!("buffers: with a 16 MiB cap, {before:.1} -> {capped:.1} MiB over a 64 MiB peak");
    assert!(
        capped - before < 24.0,
        "the cap bounds what is kept: {before:.1} -> {capped:.1} MiB"
    );
    println!("buffers: ok");
}
