//! Checkpoints of trees of [`DArray`]s: [`save`] (gathered, one global
//! safetensors file that `nabla::io::load` reads on one process),
//! [`save_shards`] (one file per rank, each block with its global shape,
//! spec and mesh in the file's metadata), [`load`] and [`load_shards`].
//!
//! Every rank calls them together. Files and user data never panic: each
//! rank's result is shared with the others before any returns, so when one
//! rank fails every rank returns an error ([`CheckpointError`]) and none
//! waits in a later collective.

use super::comm::{Comm, with};
use super::darray::DArray;
use super::dtree::DTree;
use super::layout::Spec;
use super::mesh::Mesh;
use crate::compose::TreeVal;
use crate::io::{self, Mismatch};
use crate::tree::{Tree, named_leaves};
use crate::{Array, DType, Shape};
use mpi::traits::{Communicator, CommunicatorCollectives, Root};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod shards;
pub use shards::{load_shards, save_shards};

/// A distributed checkpoint that could not be written or read. When any
/// rank fails, every rank returns one: the failing rank its own error,
/// the others [`CheckpointError::OtherRank`] with its message.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, CheckpointError, Mesh}};
/// let _mpi = dist::init();
/// let mesh = Mesh::new(&[("d", dist::world_size())]);
/// let like = vec![Array::zeros(&[2], DType::F32)];
/// let err = dist::load_shards("/nonexistent/ckpt", &like, &mesh).err().unwrap();
/// assert!(matches!(err, CheckpointError::Shards { .. }));
/// assert!(err.to_string().contains("no shard file for rank"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum CheckpointError {
    /// This rank's file could not be written or read, is not a
    /// safetensors file, or does not fit the tree (names, shapes, dtypes).
    File(io::Error),
    /// This rank's shard file was not written by [`save_shards`] for this
    /// mesh and rank count, or the ranks' files disagree.
    Shards {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// Another rank failed; this rank's part was fine.
    OtherRank {
        /// The first rank (of the mesh's communicator) that failed.
        rank: usize,
        /// Its error, as text.
        message: String,
    },
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::File(e) => write!(f, "{e}"),
            CheckpointError::Shards { path, message } => {
                write!(f, "{}: {message}", path.display())
            }
            CheckpointError::OtherRank { rank, message } => {
                write!(f, "rank {rank} failed: {message}")
            }
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckpointError::File(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for CheckpointError {
    fn from(e: io::Error) -> Self {
        CheckpointError::File(e)
    }
}

/// Every rank's outcome, shared: `mine` when every rank succeeded, else an
/// error on every rank (the first failing rank's message on the others).
fn agree<R>(mine: Result<R, CheckpointError>, comm: Comm) -> Result<R, CheckpointError> {
    let flag = [i32::from(mine.is_err())];
    let all = with(comm, |c| {
        let mut all = vec![0i32; c.size() as usize];
        c.all_gather_into(&flag[..], &mut all[..]);
        all
    });
    let Some(first) = all.iter().position(|&f| f != 0) else {
        return mine;
    };
    let mut text = match &mine {
        Err(e) if comm.rank() == first => e.to_string().into_bytes(),
        _ => Vec::new(),
    };
    let mut len = text.len() as u64;
    with(comm, |c| {
        c.process_at_rank(first as i32).broadcast_into(&mut len)
    });
    text.resize(len as usize, 0);
    with(comm, |c| {
        c.process_at_rank(first as i32)
            .broadcast_into(&mut text[..])
    });
    match mine {
        Err(e) => Err(e),
        Ok(_) => Err(CheckpointError::OtherRank {
            rank: first,
            message: String::from_utf8_lossy(&text).into_owned(),
        }),
    }
}

/// The mesh of a tree's leaves (`None` without leaves). Panics when the
/// leaves lie on different meshes.
#[track_caller]
fn mesh_of<T: Tree + ?Sized>(tree: &DTree<T>, op: &str) -> Option<Mesh> {
    let mesh = tree.leaves().first()?.mesh;
    if let Some(d) = tree.leaves().iter().find(|d| d.mesh != mesh) {
        panic!(
            "nabla::dist::{op}: the tree's leaves lie on different meshes ({} and {}); a checkpoint records one mesh, so reshard the leaves onto one",
            mesh.shape(),
            d.mesh.shape()
        );
    }
    Some(mesh)
}

fn leaf_names<T: Tree + ?Sized>(tree: &DTree<T>) -> Vec<String>
where
    T::Grad: Borrow<T>,
{
    named_leaves((*tree.0.skeleton).borrow())
        .into_iter()
        .map(|(n, _)| n)
        .collect()
}

/// Gathers `tree` and writes it, from rank 0 of its mesh, as one
/// safetensors file at `path`: the file [`nabla::io::save`](crate::io::save)
/// writes for the global tree, so `nabla::io::load` reads it on one
/// process. Every rank calls it; it returns once the file is written (or
/// with an error on every rank). Each rank holds the whole tree while it
/// runs. Leaves are gathered by the collectives, so split or pending
/// leaves must be f32 or f64.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh, Spec}};
/// let _mpi = dist::init();
/// let n = dist::world_size();
/// let mesh = Mesh::new(&[("d", n)]);
/// let w = vec![Array::linspace(0.0, 1.0, 4 * n, DType::F32)];
/// let d = dist::distribute_tree(&w, &mesh, |_, _| Spec::new(&[Some("d")]));
/// let path = std::env::temp_dir().join("nabla_doc_dist_save.safetensors");
/// dist::save(&d, &path).unwrap();
/// let back = nabla::io::load_file(&path).unwrap();
/// assert_eq!(back["0"].to_vec::<f32>(), w[0].to_vec::<f32>());
/// ```
pub fn save<T: Tree + ?Sized>(
    tree: &DTree<T>,
    path: impl AsRef<Path>,
) -> Result<(), CheckpointError>
where
    T::Grad: Borrow<T>,
{
    let comm = mesh_of(tree, "save").map_or(Comm::world(), Mesh::comm);
    let global: Vec<Array> = tree.leaves().iter().map(DArray::to_global).collect();
    let mine = if comm.rank() == 0 {
        io::save_arrays(leaf_names(tree).into_iter().zip(global), path).map_err(Into::into)
    } else {
        Ok(())
    };
    agree(mine, comm)
}

/// Every difference between the tree's leaves and the file's tensors
/// (`shape_of` gives the global shape a file tensor stands for).
fn mismatches(
    want: &[(String, Array)],
    file: &BTreeMap<String, Array>,
    shape_of: impl Fn(&str, &Array) -> Vec<usize>,
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for (name, a) in want {
        let Some(f) = file.get(name) else {
            out.push(Mismatch::Missing { name: name.clone() });
            continue;
        };
        let found = shape_of(name, f);
        if found != a.shape() {
            out.push(Mismatch::Shape {
                name: name.clone(),
                expected: a.shape().to_vec(),
                found,
            });
        }
        if f.dtype() != a.dtype() {
            out.push(Mismatch::DType {
                name: name.clone(),
                expected: a.dtype(),
                found: format!("{:?}", f.dtype()),
            });
        }
    }
    let names: std::collections::HashSet<&str> = want.iter().map(|(n, _)| n.as_str()).collect();
    out.extend(
        file.keys()
            .filter(|n| !names.contains(n.as_str()))
            .map(|n| Mismatch::Unexpected { name: n.clone() }),
    );
    out
}

/// An array that owns exactly its elements (a block cut from a whole
/// array would otherwise keep the whole array alive).
fn compact(a: &Array) -> Array {
    match a.dtype() {
        DType::F32 => Array::from_vec(a.to_vec::<f32>(), a.shape()),
        DType::F64 => Array::from_vec(a.to_vec::<f64>(), a.shape()),
        DType::I64 => Array::from_vec(a.to_vec::<i64>(), a.shape()),
        DType::Bool => Array::from_vec(a.to_vec::<bool>(), a.shape()),
    }
}

fn tree_of<T: Tree + ?Sized>(tree_like: &T, leaves: Vec<DArray>) -> DTree<T> {
    DTree(TreeVal {
        skeleton: Arc::new(tree_like.rebuild(&mut crate::tree::leaves(tree_like).into_iter())),
        leaves,
    })
}

/// Reads the global checkpoint at `path` (written by
/// [`nabla::io::save`](crate::io::save) or [`save`]) into a tree shaped
/// like `tree_like` (names, shapes and dtypes are checked as `nabla::io::load`
/// checks them), laid out over `mesh` by the spec `spec(name, shape)` gives
/// each leaf, as [`distribute_tree`](super::distribute_tree) lays it out.
/// Every rank reads the file (a shared file system) and keeps its blocks;
/// arrays go to the device of `tree_like`'s leaf. Every rank calls it;
/// when any rank cannot read the file, every rank returns an error.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh, Spec}};
/// let _mpi = dist::init();
/// let n = dist::world_size();
/// let w = vec![Array::linspace(0.0, 1.0, 2 * n, DType::F64)];
/// let path = std::env::temp_dir().join("nabla_doc_dist_load.safetensors");
/// if dist::rank() == 0 { nabla::io::save(&w, &path).unwrap(); }
/// nabla::dist::Comm::world().barrier();
/// let mesh = Mesh::new(&[("d", n)]);
/// let d = dist::load(&path, &w, &mesh, |_, _| Spec::new(&[Some("d")])).unwrap();
/// assert_eq!(d.leaves()[0].local().shape(), &[2]);
/// assert_eq!(d.to_global()[0].to_vec::<f64>(), w[0].to_vec::<f64>());
/// ```
#[track_caller]
pub fn load<T: Tree + ?Sized>(
    path: impl AsRef<Path>,
    tree_like: &T,
    mesh: &Mesh,
    mut spec: impl FnMut(&str, &[usize]) -> Spec,
) -> Result<DTree<T>, CheckpointError> {
    let path = path.as_ref();
    let want = named_leaves(tree_like);
    let mine = io::load_file(path)
        .map_err(CheckpointError::from)
        .and_then(|file| {
            let bad = mismatches(&want, &file, |_, f| f.shape().to_vec());
            if bad.is_empty() {
                Ok(file)
            } else {
                Err(CheckpointError::File(io::Error::Mismatch {
                    path: path.to_owned(),
                    mismatches: bad,
                }))
            }
        });
    let file = agree(mine, mesh.comm())?;
    let leaves = want
        .iter()
        .map(|(name, like)| {
            let whole = &file[name];
            let layout = spec(name, whole.shape()).resolve(whole.shape(), &mesh.shape(), "load");
            if layout.partial != 0 {
                panic!(
                    "nabla::dist::load: the spec of `{name}` is a pending sum; load whole values (a spec without partial_over) and reshard afterwards"
                );
            }
            let block = mesh.block(whole, &layout);
            let block = if block.shape() == whole.shape() {
                block
            } else {
                compact(&block)
            };
            DArray {
                local: block.to_device(like.device()),
                shape: Shape::from_slice(whole.shape()),
                layout,
                mesh: *mesh,
            }
        })
        .collect();
    Ok(tree_of(tree_like, leaves))
}
