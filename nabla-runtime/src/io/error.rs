//! What can go wrong reading or writing a checkpoint: [`Error`], and the
//! per-array [`Mismatch`]es of a file against a tree.

use crate::DType;
use std::fmt;
use std::path::PathBuf;

/// A checkpoint that could not be written or read. [`Error::Mismatch`]
/// lists every difference between the file and the tree at once.
///
/// ```
/// use nabla::{io, Array, DType};
/// let path = std::env::temp_dir().join("nabla_doc_error.safetensors");
/// io::save(&vec![Array::zeros(&[2], DType::F32)], &path).unwrap();
/// let mut wrong = vec![Array::zeros(&[3], DType::F32)];
/// let err = io::load(&mut wrong, &path).unwrap_err();
/// assert!(err.to_string().contains("`0`: shape [3] in the tree, [2] in the file"));
/// # std::fs::remove_file(&path).unwrap();
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing the file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file is not a valid safetensors file.
    Format {
        /// The file.
        path: PathBuf,
        /// What the safetensors reader found wrong.
        message: String,
    },
    /// A tensor of the file has an element type arrays do not have
    /// (`F16`, `BF16`, `I32`, ..).
    UnsupportedDType {
        /// The file.
        path: PathBuf,
        /// The tensor's name.
        name: String,
        /// Its dtype as the file names it.
        dtype: String,
    },
    /// The file's tensors do not fit the tree: every difference, by name.
    /// The tree is left unchanged.
    Mismatch {
        /// The file.
        path: PathBuf,
        /// Each difference, in the tree's order, then the file's extras.
        mismatches: Vec<Mismatch>,
    },
}

/// One difference between a checkpoint file and the tree it is loaded
/// into.
///
/// ```
/// use nabla::{io::Mismatch, DType};
/// let m = Mismatch::DType { name: "w".into(), expected: DType::F32, found: "F64".into() };
/// assert_eq!(m.to_string(), "`w`: dtype f32 in the tree, F64 in the file");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// An array of the tree that the file does not have.
    Missing {
        /// Its name in the tree.
        name: String,
    },
    /// A tensor of the file that the tree does not have.
    Unexpected {
        /// Its name in the file.
        name: String,
    },
    /// The same name with different shapes.
    Shape {
        /// The name.
        name: String,
        /// The shape in the tree.
        expected: Vec<usize>,
        /// The shape in the file.
        found: Vec<usize>,
    },
    /// The same name with different element types.
    DType {
        /// The name.
        name: String,
        /// The dtype in the tree.
        expected: DType,
        /// The dtype as the file names it (`F32`, `BF16`, ..).
        found: String,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Missing { name } => write!(f, "`{name}`: in the tree, not in the file"),
            Mismatch::Unexpected { name } => write!(f, "`{name}`: in the file, not in the tree"),
            Mismatch::Shape {
                name,
                expected,
                found,
            } => write!(
                f,
                "`{name}`: shape {expected:?} in the tree, {found:?} in the file"
            ),
            Mismatch::DType {
                name,
                expected,
                found,
            } => write!(
                f,
                "`{name}`: dtype {expected} in the tree, {found} in the file"
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Format { path, message } => write!(
                f,
                "{}: not a valid safetensors file ({message})",
                path.display()
            ),
            Error::UnsupportedDType { path, name, dtype } => write!(
                f,
                "{}: tensor `{name}` has dtype {dtype}, which arrays do not have (f32, f64, i64, bool); convert it when saving (e.g. `tensor.float()` in PyTorch)",
                path.display()
            ),
            Error::Mismatch { path, mismatches } => {
                write!(
                    f,
                    "{}: the checkpoint does not fit the tree ({} difference{}):",
                    path.display(),
                    mismatches.len(),
                    if mismatches.len() == 1 { "" } else { "s" }
                )?;
                for m in mismatches {
                    write!(f, "\n  {m}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
