//! Shard files: [`save_shards`] writes each rank's blocks with the mesh,
//! the rank count and every tensor's global shape and spec in the file's
//! metadata; [`load_shards`] checks them and rebuilds the `DArray`s.

use super::super::comm::{Comm, with};
use super::super::darray::DArray;
use super::super::dtree::DTree;
use super::super::layout::{Layout, MeshShape, Spec};
use super::super::mesh::Mesh;
use super::{CheckpointError, agree, leaf_names, mesh_of, mismatches, tree_of};
use crate::io;
use crate::tree::{Tree, named_leaves};
use crate::{Array, Shape};
use mpi::traits::{Communicator, CommunicatorCollectives};
use serde_json::{Value, json};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
/// let err = dist::load_shards(&dir, &other, &mesh).err().unwrap();
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
