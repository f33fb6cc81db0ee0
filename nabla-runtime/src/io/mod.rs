//! Checkpoints: trees of arrays saved to and loaded from
//! [safetensors](https://huggingface.co/docs/safetensors) files, the
//! format PyTorch, JAX and candle users share.
//!
//! Each array is stored under its name in the tree ([`named_leaves`]:
//! field names and indices joined by `.`, as PyTorch's state-dict names
//! are), so a model whose fields are named like a PyTorch module's loads
//! that module's weights. [`load`] fills an existing tree after checking
//! every name, shape and dtype, and reports every difference at once;
//! files and user data never panic, they give an [`Error`].
//!
//! ```
//! use nabla::{io, Array, DType};
//!
//! #[derive(Clone, nabla::Tree)]
//! struct Linear { weight: Array, bias: Array }
//!
//! let path = std::env::temp_dir().join("nabla_doc_io.safetensors");
//! let lin = Linear {
//!     weight: Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]),
//!     bias: Array::from_vec(vec![0.5f32, -0.5], &[2]),
//! };
//! io::save(&lin, &path)?;
//!
//! let mut fresh = Linear { weight: Array::zeros(&[2, 2], DType::F32), bias: Array::zeros(&[2], DType::F32) };
//! io::load(&mut fresh, &path)?;
//! assert_eq!(fresh.weight.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 4.0]);
//!
//! let all = io::load_file(&path)?; // name -> array, without a tree
//! assert_eq!(all["bias"].to_vec::<f32>(), vec![0.5, -0.5]);
//! # std::fs::remove_file(&path).unwrap();
//! # Ok::<(), nabla::io::Error>(())
//! ```
//!
//! [`named_leaves`]: crate::tree::named_leaves

mod error;
pub use error::{Error, Mismatch};

use crate::tree::{Tree, named_leaves};
use crate::{Array, DType};
use safetensors::{Dtype, SafeTensors, View};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

/// Saves `tree`'s arrays to `path` (created or replaced), each under its
/// name in the tree. Arrays on a GPU are copied to the host first.
///
/// ```
/// use nabla::{io, Array};
/// let path = std::env::temp_dir().join("nabla_doc_save.safetensors");
/// io::save(&(Array::scalar(1.0f64), Array::scalar(2i64)), &path).unwrap();
/// let back = io::load_file(&path).unwrap();
/// assert_eq!(back.keys().collect::<Vec<_>>(), ["0", "1"]);
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn save<T: Tree + ?Sized>(tree: &T, path: impl AsRef<Path>) -> Result<(), Error> {
    save_arrays(named_leaves(tree), path)
}

/// Saves named arrays to `path` (created or replaced). A name given twice
/// keeps its last array.
///
/// ```
/// use nabla::{io, Array};
/// let path = std::env::temp_dir().join("nabla_doc_save_arrays.safetensors");
/// io::save_arrays([("logits".to_string(), Array::from_vec(vec![1.0f32, 2.0], &[1, 2]))], &path).unwrap();
/// assert_eq!(io::load_file(&path).unwrap()["logits"].shape(), &[1, 2]);
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn save_arrays(
    arrays: impl IntoIterator<Item = (String, Array)>,
    path: impl AsRef<Path>,
) -> Result<(), Error> {
    save_arrays_with_metadata(arrays, BTreeMap::new(), path)
}

/// [`save_arrays`] with text `metadata` in the file's header (the
/// safetensors `__metadata__` map, which other readers keep and ignore).
///
/// ```
/// use nabla::{io, Array};
/// use std::collections::BTreeMap;
/// let path = std::env::temp_dir().join("nabla_doc_save_metadata.safetensors");
/// let meta = BTreeMap::from([("step".to_string(), "100".to_string())]);
/// io::save_arrays_with_metadata([("w".to_string(), Array::scalar(1.0f32))], meta, &path).unwrap();
/// let (arrays, meta) = io::load_file_with_metadata(&path).unwrap();
/// assert_eq!((arrays.len(), meta["step"].as_str()), (1, "100"));
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn save_arrays_with_metadata(
    arrays: impl IntoIterator<Item = (String, Array)>,
    metadata: BTreeMap<String, String>,
    path: impl AsRef<Path>,
) -> Result<(), Error> {
    let path = path.as_ref();
    let tensors: BTreeMap<String, Tensor> = arrays
        .into_iter()
        .map(|(name, a)| (name, Tensor::of(&a)))
        .collect();
    let metadata = (!metadata.is_empty()).then(|| metadata.into_iter().collect());
    safetensors::serialize_to_file(&tensors, metadata, path).map_err(|e| match e {
        safetensors::SafeTensorError::IoError(source) => Error::Io {
            path: path.to_owned(),
            source,
        },
        other => Error::Format {
            path: path.to_owned(),
            message: other.to_string(),
        },
    })
}

/// Every tensor of the safetensors file at `path`, by name, as host
/// arrays. `F32`, `F64`, `I64` and `BOOL` tensors load; any other dtype is
/// an [`Error::UnsupportedDType`].
///
/// ```
/// use nabla::io;
/// let err = io::load_file("/nonexistent/model.safetensors").unwrap_err();
/// assert!(matches!(err, io::Error::Io { .. }));
/// ```
pub fn load_file(path: impl AsRef<Path>) -> Result<BTreeMap<String, Array>, Error> {
    load_file_with_metadata(path).map(|(arrays, _)| arrays)
}

/// [`load_file`] and the file's text metadata (empty when it has none).
///
/// ```
/// use nabla::{io, Array};
/// let path = std::env::temp_dir().join("nabla_doc_load_metadata.safetensors");
/// io::save(&vec![Array::scalar(2.0f64)], &path).unwrap();
/// let (arrays, meta) = io::load_file_with_metadata(&path).unwrap();
/// assert_eq!((arrays["0"].item(), meta.len()), (2.0, 0));
/// # std::fs::remove_file(&path).unwrap();
/// ```
#[allow(clippy::type_complexity)]
pub fn load_file_with_metadata(
    path: impl AsRef<Path>,
) -> Result<(BTreeMap<String, Array>, BTreeMap<String, String>), Error> {
    let path = path.as_ref();
    let bytes = read(path)?;
    let (_, header) = SafeTensors::read_metadata(&bytes).map_err(|e| Error::Format {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let metadata = header
        .metadata()
        .as_ref()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let file = parse(path, &bytes)?;
    let arrays = file
        .iter()
        .map(|(name, view)| {
            let a = to_array(view.dtype(), view.shape(), view.data()).ok_or_else(|| {
                Error::UnsupportedDType {
                    path: path.to_owned(),
                    name: name.to_owned(),
                    dtype: format!("{:?}", view.dtype()),
                }
            })?;
            Ok((name.to_owned(), a))
        })
        .collect::<Result<_, Error>>()?;
    Ok((arrays, metadata))
}

/// Fills `tree`'s arrays from the safetensors file at `path`, matched by
/// name. Every array of the tree must be in the file with the same shape
/// and dtype, and the file must hold nothing else; otherwise the tree is
/// left unchanged and [`Error::Mismatch`] lists every difference. Loaded
/// arrays go to the device of the array they replace, and keep
/// `requires_grad` where it was set.
///
/// ```
/// use nabla::{io, Array, DType};
/// let path = std::env::temp_dir().join("nabla_doc_load.safetensors");
/// io::save(&vec![Array::ones(&[2], DType::F32)], &path).unwrap();
/// let mut params = vec![Array::zeros(&[2], DType::F32).requires_grad()];
/// io::load(&mut params, &path).unwrap();
/// assert_eq!(params[0].to_vec::<f32>(), vec![1.0, 1.0]);
/// assert!(params[0].is_leaf());
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn load<T: Tree + ?Sized>(tree: &mut T, path: impl AsRef<Path>) -> Result<(), Error> {
    let path = path.as_ref();
    let bytes = read(path)?;
    let file = parse(path, &bytes)?;
    let want = named_leaves(tree);
    let mut mismatches = Vec::new();
    for (name, a) in &want {
        match file.tensor(name) {
            Err(_) => mismatches.push(Mismatch::Missing { name: name.clone() }),
            Ok(view) => {
                if view.shape() != a.shape() {
                    mismatches.push(Mismatch::Shape {
                        name: name.clone(),
                        expected: a.shape().to_vec(),
                        found: view.shape().to_vec(),
                    });
                }
                if dtype_of(view.dtype()) != Some(a.dtype()) {
                    mismatches.push(Mismatch::DType {
                        name: name.clone(),
                        expected: a.dtype(),
                        found: format!("{:?}", view.dtype()),
                    });
                }
            }
        }
    }
    let in_tree: std::collections::HashSet<&str> = want.iter().map(|(n, _)| n.as_str()).collect();
    let mut extra: Vec<&str> = file
        .names()
        .into_iter()
        .filter(|n| !in_tree.contains(n))
        .collect();
    extra.sort_unstable();
    mismatches.extend(
        extra
            .into_iter()
            .map(|n| Mismatch::Unexpected { name: n.to_owned() }),
    );
    if !mismatches.is_empty() {
        return Err(Error::Mismatch {
            path: path.to_owned(),
            mismatches,
        });
    }
    let mut loaded = want.into_iter().map(|(name, old)| {
        let view = file.tensor(&name).expect("checked above");
        let a = to_array(view.dtype(), view.shape(), view.data())
            .expect("dtype checked above")
            .to_device(old.device());
        if old.is_leaf() { a.requires_grad() } else { a }
    });
    tree.for_each_leaf_mut(&mut |leaf| *leaf = loaded.next().expect("one array per leaf"));
    Ok(())
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })
}

fn parse<'a>(path: &Path, bytes: &'a [u8]) -> Result<SafeTensors<'a>, Error> {
    SafeTensors::deserialize(bytes).map_err(|e| Error::Format {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// The array dtype of a file dtype, if arrays have it.
fn dtype_of(d: Dtype) -> Option<DType> {
    match d {
        Dtype::F32 => Some(DType::F32),
        Dtype::F64 => Some(DType::F64),
        Dtype::I64 => Some(DType::I64),
        Dtype::BOOL => Some(DType::Bool),
        _ => None,
    }
}

/// A host array of `shape` from a file tensor's little-endian bytes.
fn to_array(d: Dtype, shape: &[usize], data: &[u8]) -> Option<Array> {
    fn le<const K: usize, T>(data: &[u8], f: impl Fn([u8; K]) -> T) -> Vec<T> {
        data.chunks_exact(K)
            .map(|c| f(c.try_into().expect("K bytes")))
            .collect()
    }
    Some(match dtype_of(d)? {
        DType::F32 => Array::from_vec(le(data, f32::from_le_bytes), shape),
        DType::F64 => Array::from_vec(le(data, f64::from_le_bytes), shape),
        DType::I64 => Array::from_vec(le(data, i64::from_le_bytes), shape),
        DType::Bool => Array::from_vec(data.iter().map(|&b| b != 0).collect::<Vec<bool>>(), shape),
    })
}

/// An array as the file stores it: dtype, shape, row-major little-endian
/// bytes.
struct Tensor {
    dtype: Dtype,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl Tensor {
    fn of(a: &Array) -> Tensor {
        let (dtype, bytes) = match a.dtype() {
            DType::F32 => (Dtype::F32, flat(a.to_vec::<f32>(), f32::to_le_bytes)),
            DType::F64 => (Dtype::F64, flat(a.to_vec::<f64>(), f64::to_le_bytes)),
            DType::I64 => (Dtype::I64, flat(a.to_vec::<i64>(), i64::to_le_bytes)),
            DType::Bool => (
                Dtype::BOOL,
                a.to_vec::<bool>().into_iter().map(u8::from).collect(),
            ),
        };
        Tensor {
            dtype,
            shape: a.shape().to_vec(),
            bytes,
        }
    }
}

fn flat<T, const K: usize>(v: Vec<T>, f: impl Fn(T) -> [u8; K]) -> Vec<u8> {
    v.into_iter().flat_map(f).collect()
}

impl View for &Tensor {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.bytes)
    }
    fn data_len(&self) -> usize {
        self.bytes.len()
    }
}
