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
use super::layout::{Layout, MeshShape, Spec};
use super::mesh::Mesh;
use crate::compose::TreeVal;
use crate::io::{self, Mismatch};
use crate::tree::{Tree, named_leaves};
use crate::{Array, DType, Shape};
use mpi::traits::{Communicator, CommunicatorCollectives, Root};
use serde_json::{Value, json};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A distributed checkpoint that could not be written or read. When any
/// rank fails, every rank returns one: the failing rank its own error,
/// the others [`CheckpointError::OtherRank`] with its message.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, CheckpointError, Mesh}};
/// let _mpi = dist::init();
/// let mesh = Mesh::new(&[("d", dist::world_size())]);
/// let like = vec![Array::zeros(&[2], DType::F32)];
/// let err = dist::load_shards("/nonexistent/ckpt", &like, &mesh).unwrap_err();
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

/// The file of rank `rank` of `ranks` in a shard directory.
fn shard_path(dir: &Path, rank: usize, ranks: usize) -> PathBuf {
    dir.join(format!("rank-{rank}-of-{ranks}.safetensors"))
}

const FORMAT: &str = "nabla.dist.format";
const MESH: &str = "nabla.dist.mesh";
const RANK: &str = "nabla.dist.rank";
const RANKS: &str = "nabla.dist.ranks";
const TENSORS: &str = "nabla.dist.tensors";

fn mesh_json(mesh: &MeshShape) -> String {
    let axes: Vec<Value> = mesh.axes().map(|(n, s)| json!([n, s])).collect();
    Value::from(axes).to_string()
}

fn spec_json(spec: &Spec) -> Value {
    json!({
        "dims": (0..spec.ndim()).map(|k| spec.dim(k).to_vec()).collect::<Vec<_>>(),
        "partial": spec.partial(),
    })
}

/// Writes this rank's blocks of `tree` to `dir/rank-R-of-N.safetensors`
/// (the directory is created if missing), one file per rank of the
/// tree's mesh. Each file's metadata records the mesh, the rank and the
/// rank count, and for every tensor its global shape and spec, so
/// [`load_shards`] rebuilds the same `DArray`s on the same mesh without
/// communication. Every rank calls it; it returns once every file is
/// written (or with an error on every rank).
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh, Spec}};
/// let _mpi = dist::init();
/// let n = dist::world_size();
/// let mesh = Mesh::new(&[("d", n)]);
/// let w = (Array::ones(&[2 * n, 3], DType::F64), Array::zeros(&[3], DType::F32));
/// let d = dist::distribute_tree(&w, &mesh, |name, s| {
///     if name == "0" { Spec::new(&[Some("d"), None]) } else { Spec::replicated(s.len()) }
/// });
/// let dir = std::env::temp_dir().join("nabla_doc_dist_shards");
/// dist::save_shards(&d, &dir).unwrap();
/// let back = dist::load_shards(&dir, &w, &mesh).unwrap();
/// assert_eq!(back.specs(), d.specs());
/// assert_eq!(back.leaves()[0].local().to_vec::<f64>(), d.leaves()[0].local().to_vec::<f64>());
/// ```
pub fn save_shards<T: Tree + ?Sized>(
    tree: &DTree<T>,
    dir: impl AsRef<Path>,
) -> Result<(), CheckpointError>
where
    T::Grad: Borrow<T>,
{
    let dir = dir.as_ref();
    let mesh = mesh_of(tree, "save_shards");
    let comm = mesh.map_or(Comm::world(), Mesh::comm);
    let (rank, ranks) = (comm.rank(), comm.size());
    let names = leaf_names(tree);
    let mut tensors = serde_json::Map::new();
    for (name, d) in names.iter().zip(tree.leaves()) {
        tensors.insert(
            name.clone(),
            json!({"shape": d.shape(), "spec": spec_json(&d.spec())}),
        );
    }
    let metadata = BTreeMap::from([
        (FORMAT.to_string(), "shards-1".to_string()),
        (
            MESH.to_string(),
            mesh.map_or("[]".to_string(), |m| mesh_json(&m.shape())),
        ),
        (RANK.to_string(), rank.to_string()),
        (RANKS.to_string(), ranks.to_string()),
        (TENSORS.to_string(), Value::from(tensors).to_string()),
    ]);
    let blocks = names
        .into_iter()
        .zip(tree.leaves().iter().map(|d| d.local.clone()));
    let mine = std::fs::create_dir_all(dir)
        .map_err(|source| {
            CheckpointError::File(io::Error::Io {
                path: dir.to_owned(),
                source,
            })
        })
        .and_then(|()| {
            io::save_arrays_with_metadata(blocks, metadata, shard_path(dir, rank, ranks))
                .map_err(Into::into)
        });
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

/// Why this rank has no shard file: the directory's shard files, if any,
/// say how many ranks wrote them.
fn missing_shard(dir: &Path, path: &Path, rank: usize, ranks: usize) -> CheckpointError {
    let mut written: Vec<usize> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let n = name.strip_prefix("rank-")?.strip_suffix(".safetensors")?;
            n.split_once("-of-")?.1.parse().ok()
        })
        .collect();
    written.sort_unstable();
    written.dedup();
    let message = if written.is_empty() {
        format!(
            "no shard file for rank {rank} of {ranks}, and no shard files in {}; write them with dist::save_shards",
            dir.display()
        )
    } else {
        let counts: Vec<String> = written.iter().map(usize::to_string).collect();
        let plural = if written == [1] { "" } else { "s" };
        format!(
            "no shard file for rank {rank} of {ranks}: the directory holds the shards of {} rank{plural}; load them on a mesh of that many ranks (mpirun -n {}), or save a global checkpoint with dist::save and read it with dist::load",
            counts.join(" and "),
            counts[0]
        )
    };
    CheckpointError::Shards {
        path: path.to_owned(),
        message,
    }
}

/// The layout a shard file records for a tensor, checked against `mesh`.
fn layout_from(v: &Value, shape: &[usize], mesh: &MeshShape) -> Result<Layout, String> {
    let names = |v: Option<&Value>| -> Option<Vec<String>> {
        v?.as_array()?
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect()
    };
    let dims: Vec<Vec<String>> = v
        .get("dims")
        .and_then(Value::as_array)
        .and_then(|d| d.iter().map(|x| names(Some(x))).collect())
        .ok_or("its spec has no list of split axes")?;
    let partial = names(v.get("partial")).ok_or("its spec has no list of pending axes")?;
    if dims.len() != shape.len() {
        return Err(format!(
            "its spec has {} axes but its shape {shape:?} has {}",
            dims.len(),
            shape.len()
        ));
    }
    let mut used = 0u16;
    let mut axis = |n: &str| -> Result<u8, String> {
        let i = mesh
            .axis(n)
            .ok_or_else(|| format!("its spec names the mesh axis {n:?}, which {mesh} lacks"))?;
        if used & (1 << i) != 0 {
            return Err(format!("its spec uses the mesh axis {n:?} twice"));
        }
        used |= 1 << i;
        Ok(i as u8)
    };
    let mut layout = Layout::replicated(shape.len());
    for (k, names) in dims.iter().enumerate() {
        for n in names {
            layout.dims[k].push(axis(n)?);
        }
        if !shape[k].is_multiple_of(layout.parts(k, mesh)) {
            return Err(format!("its axis {k} does not split evenly"));
        }
    }
    for n in &partial {
        layout.partial |= 1 << axis(n)?;
    }
    Ok(layout)
}

/// This rank's shard file read into `DArray`s, with a fingerprint of what
/// it records for every rank (names, global shapes, specs).
fn read_shard(
    dir: &Path,
    want: &[(String, Array)],
    mesh: &Mesh,
) -> Result<(Vec<DArray>, u64), CheckpointError> {
    let comm = mesh.comm();
    let (rank, ranks) = (comm.rank(), comm.size());
    let path = shard_path(dir, rank, ranks);
    let (file, meta) = match io::load_file_with_metadata(&path) {
        Err(io::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Err(missing_shard(dir, &path, rank, ranks));
        }
        other => other?,
    };
    let shards = |message: String| CheckpointError::Shards {
        path: path.clone(),
        message,
    };
    if meta.get(FORMAT).map(String::as_str) != Some("shards-1") {
        return Err(shards(
            "its metadata has no `nabla.dist.format: shards-1`: it is not a shard file written by dist::save_shards (a global checkpoint loads with dist::load)".into(),
        ));
    }
    let field = |k: &str| {
        meta.get(k)
            .ok_or_else(|| shards(format!("its metadata lacks `{k}`")))
    };
    let (r, n) = (field(RANK)?, field(RANKS)?);
    if (r.as_str(), n.as_str()) != (rank.to_string().as_str(), ranks.to_string().as_str()) {
        return Err(shards(format!(
            "it was written by rank {r} of {n}, but is read by rank {rank} of {ranks}; load shards with the ranks that wrote them"
        )));
    }
    let ms = mesh.shape();
    let recorded = field(MESH)?;
    let tensors: serde_json::Map<String, Value> =
        serde_json::from_str(field(TENSORS)?).map_err(|e| {
            shards(format!(
                "its `{TENSORS}` metadata is not a JSON object ({e})"
            ))
        })?;
    if !tensors.is_empty() && *recorded != mesh_json(&ms) {
        return Err(shards(format!(
            "it was written for the mesh {recorded} (names and sizes), but is read on {ms}; load shards on the mesh that wrote them, or save with dist::save and load with dist::load to change layouts"
        )));
    }
    let mut layouts = BTreeMap::new();
    for (name, t) in &tensors {
        let shape: Option<Vec<usize>> = t
            .get("shape")
            .and_then(Value::as_array)
            .and_then(|s| s.iter().map(|x| x.as_u64().map(|x| x as usize)).collect());
        let shape = shape.ok_or_else(|| shards(format!("tensor `{name}` has no global shape")))?;
        let layout = layout_from(t.get("spec").unwrap_or(&Value::Null), &shape, &ms)
            .map_err(|e| shards(format!("tensor `{name}`: {e}")))?;
        layouts.insert(name.clone(), (shape, layout));
    }
    if let Some(name) = file.keys().find(|n| !layouts.contains_key(*n)) {
        return Err(shards(format!(
            "tensor `{name}` has no global shape and spec in the metadata"
        )));
    }
    let bad = mismatches(want, &file, |name, _| layouts[name].0.clone());
    if !bad.is_empty() {
        return Err(io::Error::Mismatch {
            path: path.clone(),
            mismatches: bad,
        }
        .into());
    }
    let mut print = String::new();
    let mut leaves = Vec::with_capacity(want.len());
    for (name, like) in want {
        let (shape, layout) = &layouts[name];
        let block = &file[name];
        let expect = layout.local_shape(shape, &ms);
        if block.shape() != expect.as_slice() {
            return Err(shards(format!(
                "tensor `{name}`: its block has shape {:?}, but {} of {shape:?} gives blocks of {expect:?}",
                block.shape(),
                layout.spec(&ms)
            )));
        }
        print.push_str(&format!("{name}:{shape:?}:{layout:?};"));
        leaves.push(DArray {
            local: block.to_device(like.device()),
            shape: Shape::from_slice(shape),
            layout: layout.clone(),
            mesh: *mesh,
        });
    }
    Ok((leaves, fnv(print.as_bytes())))
}

/// FNV-1a: the same 64 bits for the same bytes in every process.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Reads the shard files [`save_shards`] wrote in `dir` back into
/// `DArray`s on `mesh`, each leaf with the global shape and spec its file
/// records. The mesh (axis names and sizes) and the rank count must be
/// those that wrote them, and the names, global shapes and dtypes those of
/// `tree_like`'s leaves (only its structure, shapes, dtypes and devices are
/// read). Errors, on every rank, for a missing, corrupt or mismatched file,
/// and when the ranks' files record different tensors or layouts.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, CheckpointError, Mesh, Spec}};
/// let _mpi = dist::init();
/// let n = dist::world_size();
/// let mesh = Mesh::new(&[("d", n)]);
/// let w = vec![Array::ones(&[2 * n], DType::F32)];
/// let d = dist::distribute_tree(&w, &mesh, |_, _| Spec::new(&[Some("d")]));
/// let dir = std::env::temp_dir().join("nabla_doc_dist_load_shards");
/// dist::save_shards(&d, &dir).unwrap();
/// // A tree of other shapes does not fit the checkpoint.
/// let other = vec![Array::ones(&[4 * n], DType::F32)];
/// let err = dist::load_shards(&dir, &other, &mesh).unwrap_err();
/// assert!(matches!(err, CheckpointError::File(nabla::io::Error::Mismatch { .. })));
/// ```
pub fn load_shards<T: Tree + ?Sized>(
    dir: impl AsRef<Path>,
    tree_like: &T,
    mesh: &Mesh,
) -> Result<DTree<T>, CheckpointError> {
    let dir = dir.as_ref();
    let comm = mesh.comm();
    let want = named_leaves(tree_like);
    let (leaves, print) = agree(read_shard(dir, &want, mesh), comm)?;
    let prints = with(comm, |c| {
        let mut all = vec![0u64; c.size() as usize];
        c.all_gather_into(&[print][..], &mut all[..]);
        all
    });
    if let Some(q) = prints.iter().position(|&p| p != prints[0]) {
        return Err(CheckpointError::Shards {
            path: shard_path(dir, comm.rank(), comm.size()),
            message: format!(
                "the shard files of ranks 0 and {q} record different tensors, shapes or specs; they come from different checkpoints"
            ),
        });
    }
    Ok(tree_of(tree_like, leaves))
}
