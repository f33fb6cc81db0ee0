//! Compiled kernels cached on disk. NVRTC takes several seconds to compile
//! `kernels.cu` for one architecture, which every process would otherwise
//! pay on its first GPU operation; like XLA's compilation cache, the CUBIN
//! is kept in a file named after the source, the architecture and this
//! crate's version, so only the first use on a machine compiles.
//!
//! Where: `$NABLA_CACHE_DIR`, else `$XDG_CACHE_HOME/nabla`, else
//! `$HOME/.cache/nabla`; `NABLA_CACHE_DIR=""` turns the cache off. Every
//! failure (no directory, unreadable or foreign file, full disk) falls back
//! to compiling; writes go through a temporary file and a rename, so a
//! reader never sees half a file.

use super::device::{GpuError, compile_source};
use std::path::{Path, PathBuf};

/// The cache directory, or `None` when caching is off or no home is known.
fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("NABLA_CACHE_DIR") {
        return (!d.is_empty()).then(|| PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("nabla"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|h| PathBuf::from(h).join(".cache").join("nabla"))
}

/// FNV-1a, 64 bits: stable across Rust versions (the standard hasher is not
/// promised to be), which a file name on disk needs.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The file name for `source` compiled for `sm_<arch>`.
fn file_name(source: &str, arch: u32) -> String {
    let key = fnv1a(&[
        env!("CARGO_PKG_VERSION").as_bytes(),
        &arch.to_le_bytes(),
        source.as_bytes(),
    ]);
    format!("sm{arch}-{key:016x}.cubin")
}

/// The CUBIN of `source` (named `file` in NVRTC's messages) for
/// `sm_<arch>`: from the cache when it holds one, else compiled and stored.
pub(crate) fn cached_cubin(source: &str, file: &str, arch: u32) -> Result<Vec<u8>, GpuError> {
    cached_cubin_in(cache_dir().as_deref(), source, file, arch)
}

/// [`cached_cubin`] with an explicit directory (`None`: no cache).
fn cached_cubin_in(
    dir: Option<&Path>,
    source: &str,
    file: &str,
    arch: u32,
) -> Result<Vec<u8>, GpuError> {
    let Some(dir) = dir else {
        return compile_source(source, file, arch);
    };
    let path = dir.join(file_name(source, arch));
    if let Ok(bytes) = std::fs::read(&path) {
        // A CUBIN is an ELF image; anything else is ignored and replaced.
        if bytes.starts_with(b"\x7fELF") {
            return Ok(bytes);
        }
    }
    let image = compile_source(source, file, arch)?;
    let _ = store(dir, &path, &image);
    Ok(image)
}

/// Writes `image` to `path` atomically (temporary file, then rename).
fn store(dir: &Path, path: &Path, image: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, image)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"extern "C" __global__ void twice(float* y, long long n) {
        long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
        if (i < n) y[i] *= 2.0f;
    }"#;

    /// The first call compiles and stores; later calls read the file (shown
    /// by planting a different ELF image there); a foreign file is replaced
    /// by a fresh compile; no directory means no cache. Needs libnvrtc only.
    #[test]
    fn compiled_kernels_are_cached_on_disk() {
        let dir = std::env::temp_dir().join(format!("nabla-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = match cached_cubin_in(Some(&dir), SOURCE, "twice.cu", 90) {
            Ok(image) => image,
            Err(e) if e.0.starts_with("NVRTC (libnvrtc.so) not found") => {
                eprintln!("skipped: {e}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let path = dir.join(file_name(SOURCE, 90));
        assert_eq!(
            std::fs::read(&path).unwrap(),
            first,
            "stored after compiling"
        );
        let planted = b"\x7fELF planted".to_vec();
        std::fs::write(&path, &planted).unwrap();
        assert_eq!(
            cached_cubin_in(Some(&dir), SOURCE, "twice.cu", 90).unwrap(),
            planted,
            "read from the cache"
        );
        std::fs::write(&path, b"not a cubin").unwrap();
        assert_eq!(
            cached_cubin_in(Some(&dir), SOURCE, "twice.cu", 90).unwrap(),
            first,
            "a foreign file is recompiled"
        );
        assert_eq!(std::fs::read(&path).unwrap(), first, "and replaced");
        assert_ne!(
            file_name(SOURCE, 90),
            file_name(SOURCE, 86),
            "per architecture"
        );
        assert_ne!(
            file_name(SOURCE, 90),
            file_name("// other", 90),
            "per source"
        );
        assert_eq!(
            cached_cubin_in(None, SOURCE, "twice.cu", 90).unwrap(),
            first
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
