//! `nabla::io::load` and `load_file` on truncated and corrupted
//! safetensors files (a bounded proptest run): every file gives `Ok` or an
//! error value, never a panic.
//!
//! The files start as valid ones, written by `nabla::io` and by the
//! `safetensors` crate itself (with dtypes Nabla does not load, and
//! metadata), then are cut short, get bytes flipped, a rewritten header
//! length (up to `u64::MAX`), a number in the header JSON (offsets,
//! shapes) replaced by another (0, off by one, huge), or junk appended.

use super::panic_message;
use nabla::{Array, DType};
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The tree `nabla::io` saves and loads back.
fn tree() -> Vec<Array> {
    vec![
        Array::from_vec(vec![1.0f32, -2.0, 3.5, f32::NAN, 0.0, 6.0], &[2, 3]),
        Array::zeros(&[0, 4], DType::F64),
        Array::scalar(7i64),
        Array::from_vec(vec![true, false, true], &[3]),
        Array::from_vec(vec![0.25f64; 8], &[2, 2, 2]),
    ]
}

/// Valid files: by `nabla::io`, and by the `safetensors` crate (u8 and
/// f16 tensors, which Nabla does not load, a f64 one, and metadata).
fn originals() -> Vec<Vec<u8>> {
    let path = temp_path("original");
    nabla::io::save(&tree(), &path).unwrap();
    let ours = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    use safetensors::Dtype;
    use safetensors::tensor::TensorView;
    let f64s: Vec<u8> = [1.5f64, -0.5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let tensors = vec![
        (
            "bytes",
            TensorView::new(Dtype::U8, vec![2, 2], &[1, 2, 3, 4]).unwrap(),
        ),
        (
            "halves",
            TensorView::new(Dtype::F16, vec![2], &[0, 60, 0, 188]).unwrap(),
        ),
        (
            "wide",
            TensorView::new(Dtype::F64, vec![2, 1], &f64s).unwrap(),
        ),
    ];
    let meta = HashMap::from([("format".to_string(), "pt".to_string())]);
    let theirs = safetensors::serialize(tensors, Some(meta)).unwrap();
    vec![ours, theirs]
}

/// A fresh temp file name per case (tests run in parallel).
fn temp_path(tag: &str) -> std::path::PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "nabla_io_fuzz_{}_{tag}_{n}.safetensors",
        std::process::id()
    ))
}

/// One corruption of a file.
#[derive(Clone, Debug)]
enum Corruption {
    /// Keep the first `at` bytes (modulo the length).
    Truncate(usize),
    /// XOR the byte at `at` (modulo the length) with `with` (non-zero).
    Flip { at: usize, with: u8 },
    /// Replace the 8-byte little-endian header length.
    HeaderLen(u64),
    /// Replace the `nth` number in the header JSON (modulo their count).
    Number { nth: usize, value: u64 },
    /// Append bytes.
    Append(Vec<u8>),
}

fn corruption() -> impl Strategy<Value = Corruption> {
    let edge = prop_oneof![
        Just(0u64),
        Just(1),
        Just(8),
        Just(u32::MAX as u64),
        Just(u64::MAX / 2),
        Just(u64::MAX),
        0u64..512,
    ];
    prop_oneof![
        any::<usize>().prop_map(Corruption::Truncate),
        (any::<usize>(), 1u8..=255).prop_map(|(at, with)| Corruption::Flip { at, with }),
        edge.clone().prop_map(Corruption::HeaderLen),
        (any::<usize>(), edge).prop_map(|(nth, value)| Corruption::Number { nth, value }),
        proptest::collection::vec(any::<u8>(), 1..16).prop_map(Corruption::Append),
    ]
}

fn apply(c: &Corruption, bytes: &mut Vec<u8>) {
    let len = bytes.len();
    match c {
        Corruption::Truncate(at) => bytes.truncate(at % len),
        Corruption::Flip { at, with } => bytes[at % len] ^= with,
        Corruption::HeaderLen(v) => bytes[..8].copy_from_slice(&v.to_le_bytes()),
        Corruption::Number { nth, value } => {
            let n = u64::from_le_bytes(bytes[..8].try_into().unwrap());
            let header_end = n.saturating_add(8).min(len as u64) as usize;
            let text = &bytes[8..header_end];
            // The digit runs of the header.
            let mut runs = Vec::new();
            let mut i = 0;
            while i < text.len() {
                if text[i].is_ascii_digit() {
                    let start = i;
                    while i < text.len() && text[i].is_ascii_digit() {
                        i += 1;
                    }
                    runs.push((8 + start, 8 + i));
                } else {
                    i += 1;
                }
            }
            if let Some(&(s, e)) = runs.get(nth % runs.len().max(1)) {
                bytes.splice(s..e, value.to_string().into_bytes());
            }
        }
        Corruption::Append(junk) => bytes.extend_from_slice(junk),
    }
}

/// Loads the corrupted file both ways; a panic fails the case.
fn load_both(bytes: &[u8]) -> Result<(), String> {
    let path = temp_path("case");
    std::fs::write(&path, bytes).unwrap();
    let p = path.clone();
    let r = std::panic::catch_unwind(move || {
        let _ = nabla::io::load_file(&p);
        let mut t = tree();
        let _ = nabla::io::load(&mut t, &p);
    });
    std::fs::remove_file(&path).unwrap();
    r.map_err(|e| panic_message(&*e))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_safetensors_files_give_errors_not_panics(
        which in 0usize..2,
        cs in proptest::collection::vec(corruption(), 1..4),
    ) {
        let mut bytes = originals().swap_remove(which);
        for c in &cs {
            if !bytes.is_empty() && (bytes.len() >= 8 || !matches!(c, Corruption::HeaderLen(_) | Corruption::Number { .. })) {
                apply(c, &mut bytes);
            }
        }
        if let Err(m) = load_both(&bytes) {
            prop_assert!(false, "{cs:?}: a panic: {m}");
        }
    }
}

/// The originals load (so the corruptions start from valid files), and
/// some corruptions are errors of the right kind.
#[test]
fn originals_load_and_cut_files_are_format_errors() {
    let [ours, theirs]: [Vec<u8>; 2] = originals().try_into().unwrap();
    let path = temp_path("valid");
    std::fs::write(&path, &ours).unwrap();
    let mut t: Vec<Array> = tree().iter().map(|a| a.zeros_like()).collect();
    nabla::io::load(&mut t, &path).unwrap();
    assert_eq!(t[0].to_vec::<f32>()[..3], [1.0, -2.0, 3.5]);
    assert_eq!(t[1].shape(), &[0, 4]);
    std::fs::write(&path, &theirs).unwrap();
    // u8 and f16 are not Nabla dtypes: an error value.
    let err = nabla::io::load_file(&path).unwrap_err();
    assert!(
        matches!(err, nabla::io::Error::UnsupportedDType { .. }),
        "{err}"
    );
    for cut in [0, 7, 8, 20, ours.len() - 1] {
        std::fs::write(&path, &ours[..cut]).unwrap();
        let err = nabla::io::load_file(&path).unwrap_err();
        assert!(
            matches!(err, nabla::io::Error::Format { .. }),
            "cut at {cut}: {err}"
        );
    }
    std::fs::remove_file(&path).unwrap();
}

/// A file by hand: an 8-byte header length, the header, the data.
fn file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut b = (header.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(header.as_bytes());
    b.extend_from_slice(data);
    b
}

/// Shapes whose element count overflows `usize` (with and without a zero
/// length), offsets past the end or reversed, and a header length past
/// the file: error values.
#[test]
fn hand_made_bad_headers_are_errors() {
    let big = 1u64 << 32;
    let headers = [
        format!(r#"{{"a":{{"dtype":"F32","shape":[{big},{big},0],"data_offsets":[0,0]}}}}"#),
        format!(r#"{{"a":{{"dtype":"F32","shape":[0,{big},{big}],"data_offsets":[0,0]}}}}"#),
        format!(r#"{{"a":{{"dtype":"F64","shape":[{big},{big}],"data_offsets":[0,8]}}}}"#),
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}}"#.to_string(),
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}"#.to_string(),
        r#"{"a":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]},"b":{"dtype":"BOOL","shape":[3],"data_offsets":[1,4]}}"#.to_string(),
        r#"{"a":{"dtype":"I64","shape":[],"data_offsets":[0,8]}"#.to_string(),
    ];
    for h in &headers {
        let r = load_both(&file(h, &[0; 8]));
        assert!(r.is_ok(), "{h}: {r:?}");
        let path = temp_path("hand");
        std::fs::write(&path, file(h, &[0; 8])).unwrap();
        assert!(nabla::io::load_file(&path).is_err(), "{h}: accepted");
        std::fs::remove_file(&path).unwrap();
    }
}
