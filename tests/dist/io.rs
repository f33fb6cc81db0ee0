//! Checkpoints of trees of `DArray`s: a gathered file that `nabla::io`
//! reads on one process, shard files that rebuild the same blocks, a
//! global file read into new layouts; and bad files (corrupt, of another
//! mesh or rank count, of another tree, mixed checkpoints, unwritable)
//! giving errors on every rank, with no rank left waiting.

use super::spmd::data;
use nabla::dist::{self, CheckpointError, Comm, DArray, DTree, Mesh, Spec};
use nabla::prelude::*;
use std::path::PathBuf;

#[derive(Clone, nabla::Tree)]
struct Params {
    w1: Array,
    w2: Array,
    b: Array,
    steps: Array,
}

fn params(n: usize) -> Params {
    Params {
        w1: data(&[6, 4 * n], 0.2),
        w2: data(&[4 * n, 3], 0.5),
        b: data(&[4 * n], 0.9).cast(DType::F32),
        steps: Array::scalar(7i64),
    }
}

/// The same tree of zeros: shapes, dtypes and names only.
fn zeros_like(p: &Params) -> Params {
    let z = |a: &Array| Array::zeros(a.shape(), a.dtype());
    Params {
        w1: z(&p.w1),
        w2: z(&p.w2),
        b: z(&p.b),
        steps: z(&p.steps),
    }
}

/// A directory for this job (named by rank 0's process id), empty.
fn job_dir(tag: &str) -> PathBuf {
    let pid = Array::from_vec(vec![std::process::id() as f64], &[1]);
    let pid = dist::broadcast(&pid, 0, Comm::world()).item() as u64;
    let dir = std::env::temp_dir().join(format!("nabla-dist-io-{pid}-{tag}"));
    if dist::rank() == 0 {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
    }
    Comm::world().barrier();
    dir
}

fn same(a: &Array, b: &Array, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}: shape");
    assert_eq!(a.dtype(), b.dtype(), "{what}: dtype");
    let v = |x: &Array| x.cast(DType::F64).to_vec::<f64>();
    assert_eq!(v(a), v(b), "{what} on rank {}", dist::rank());
}

fn same_tree(a: &Params, b: &Params, what: &str) {
    for ((name, x), (_, y)) in nabla::tree::named_leaves(a)
        .iter()
        .zip(nabla::tree::named_leaves(b))
    {
        same(x, &y, &format!("{what}: {name}"));
    }
}

/// Specs on the mesh `(x: n)` and, on four ranks, `(a: 2, b: 2)`.
type Specs = fn(&str, &[usize]) -> Spec;

fn layouts() -> Vec<(Mesh, Specs, Specs)> {
    let n = dist::world_size();
    let mut out: Vec<(Mesh, Specs, Specs)> = vec![(
        Mesh::new(&[("x", n)]),
        |name, s| match name {
            "w1" => Spec::new(&[None, Some("x")]),
            "w2" => Spec::new(&[Some("x"), None]),
            _ => Spec::replicated(s.len()),
        },
        |name, s| match name {
            "b" => Spec::new(&[Some("x")]),
            _ => Spec::replicated(s.len()),
        },
    )];
    if n == 4 {
        out.push((
            Mesh::new(&[("a", 2), ("b", 2)]),
            |name, s| match name {
                "w1" => Spec::new(&[Some("a"), Some("b")]),
                "w2" => Spec::split(&[&["a", "b"], &[]]),
                "b" => Spec::new(&[Some("b")]),
                _ => Spec::replicated(s.len()),
            },
            |name, s| match name {
                "w1" => Spec::new(&[Some("b"), Some("a")]),
                "w2" => Spec::new(&[Some("b"), None]),
                "b" => Spec::split(&[&["a", "b"]]),
                _ => Spec::replicated(s.len()),
            },
        ));
    }
    out
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn checkpoints() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let p = params(n);
    let like = zeros_like(&p);
    for (k, (mesh, first, second)) in layouts().into_iter().enumerate() {
        let dir = job_dir(&format!("ok{k}"));
        let d = dist::distribute_tree(&p, &mesh, first);

        // Gathered: the file of the global tree, read on one process.
        let global = dir.join("global.safetensors");
        dist::save(&d, &global).unwrap();
        let mut fresh = zeros_like(&p);
        nabla::io::load(&mut fresh, &global).unwrap();
        same_tree(&fresh, &p, "io::load of dist::save");

        // Read back into other layouts.
        let e = dist::load(&global, &like, &mesh, second).unwrap();
        for ((name, spec), (dl, (_, whole))) in e
            .specs()
            .iter()
            .zip(e.leaves().iter().zip(nabla::tree::named_leaves(&p)))
        {
            assert_eq!(spec, &second(name, whole.shape()), "{name}");
            let want = dist::distribute(&whole, &mesh, spec);
            same(
                dl.local(),
                want.local(),
                &format!("dist::load block of {name}"),
            );
        }
        same_tree(&e.to_global(), &p, "dist::load");

        // Sharded: each rank's blocks with their layouts.
        let shards = dir.join("shards");
        dist::save_shards(&d, &shards).unwrap();
        let mine = shards.join(format!("rank-{}-of-{n}.safetensors", dist::rank()));
        let (blocks, meta) = nabla::io::load_file_with_metadata(&mine).unwrap();
        assert_eq!(blocks["w1"].shape(), d.leaves()[0].local().shape());
        let axes: Vec<String> = mesh
            .shape()
            .axes()
            .map(|(a, s)| format!("[\"{a}\",{s}]"))
            .collect();
        assert_eq!(meta["nabla.dist.mesh"], format!("[{}]", axes.join(",")));
        assert_eq!(meta["nabla.dist.ranks"], n.to_string());
        let back = dist::load_shards(&shards, &like, &mesh).unwrap();
        assert_eq!(back.specs(), d.specs());
        for (x, y) in back.leaves().iter().zip(d.leaves()) {
            assert_eq!(x.shape(), y.shape());
            same(x.local(), y.local(), "load_shards block");
        }
        same_tree(&back.to_global(), &p, "load_shards");

        // A pending sum keeps its state through shards, and is completed
        // by the gathered save.
        let x = data(&[2, 2 * n], 0.4);
        let ms = mesh.shape();
        let (axis, size) = ms.axes().last().map(|(a, s)| (a.to_string(), s)).unwrap();
        let c = mesh.coord(ms.len() - 1) as f64 + 1.0;
        let spec = Spec::replicated(2).partial_over(&[&axis]);
        let share = &x * (c / (size * (size + 1) / 2) as f64);
        let pending = DArray::from_local(share.clone(), x.shape(), &mesh, &spec);
        let t = dist::distribute_tree(&vec![x.clone()], &mesh, |_, s| Spec::replicated(s.len()));
        let mut t: DTree<Vec<Array>> = t;
        t.leaves_mut()[0] = pending;
        let psh = dir.join("pending");
        dist::save_shards(&t, &psh).unwrap();
        let back = dist::load_shards(&psh, &vec![x.clone()], &mesh).unwrap();
        assert_eq!(back.leaves()[0].spec(), spec);
        same(back.leaves()[0].local(), &share, "pending block");
        let gp = dir.join("pending.safetensors");
        dist::save(&t, &gp).unwrap();
        let whole = nabla::io::load_file(&gp).unwrap();
        let diff = (&whole["0"] - &x).abs().max().item();
        assert!(diff < 1e-12, "the gathered pending sum differs by {diff}");

        Comm::world().barrier();
        if dist::rank() == 0 {
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

/// `result` is an error on every rank: this rank's own where `own`,
/// else another rank's naming `from`.
#[track_caller]
fn fails<R>(result: Result<R, CheckpointError>, own: bool, from: usize, what: &str) -> String {
    let Err(e) = result else {
        panic!("{what}: loaded on rank {}", dist::rank())
    };
    let other = matches!(e, CheckpointError::OtherRank { rank, .. } if rank == from);
    assert_eq!(!other, own, "{what} on rank {}: {e}", dist::rank());
    e.to_string()
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn bad_checkpoints() {
    let _mpi = dist::init();
    let (n, r) = (dist::world_size(), dist::rank());
    let last = n - 1;
    let p = params(n);
    let like = zeros_like(&p);
    let (mesh, first, second) = layouts().swap_remove(0);
    let dir = job_dir("bad");
    let d = dist::distribute_tree(&p, &mesh, first);
    let good = dir.join("good");
    dist::save_shards(&d, &good).unwrap();
    let file = |dir: &PathBuf, r: usize| dir.join(format!("rank-{r}-of-{n}.safetensors"));

    // A corrupt file on the last rank.
    let bad = dir.join("corrupt");
    dist::save_shards(&d, &bad).unwrap();
    if r == last {
        std::fs::write(file(&bad, r), b"not a safetensors file").unwrap();
    }
    Comm::world().barrier();
    let e = fails(
        dist::load_shards(&bad, &like, &mesh),
        r == last,
        last,
        "corrupt",
    );
    if r == last {
        assert!(e.contains("not a valid safetensors file"), "{e}");
    } else {
        assert!(e.starts_with(&format!("rank {last} failed")), "{e}");
    }

    // Another mesh: other axis names.
    let other = Mesh::new(&[("y", n)]);
    let e = fails(dist::load_shards(&good, &like, &other), true, 0, "mesh");
    assert!(e.contains("was written for the mesh"), "{e}");

    // Fewer ranks wrote them: half the world saves on its own mesh.
    let half = Comm::world().split(usize::from(r >= n / 2), r);
    let small = Mesh::on(half, &[("x", n / 2)]);
    let fewer = dir.join("fewer");
    if r < n / 2 {
        let ps = params(n / 2);
        dist::save_shards(&dist::distribute_tree(&ps, &small, first), &fewer).unwrap();
    }
    Comm::world().barrier();
    let e = fails(dist::load_shards(&fewer, &like, &mesh), true, 0, "ranks");
    assert!(
        e.contains(&format!("holds the shards of {} rank", n / 2)),
        "{e}"
    );

    // Another tree: a wrong shape and a missing leaf.
    let mut wrong = zeros_like(&p);
    wrong.w2 = Array::zeros(&[4 * n, 5], DType::F64);
    let e = fails(dist::load_shards(&good, &wrong, &mesh), true, 0, "tree");
    let want = format!(
        "`w2`: shape [{0}, 5] in the tree, [{0}, 3] in the file",
        4 * n
    );
    assert!(e.contains(&want), "{e}");
    let e = fails(
        dist::load_shards(&good, &vec![p.w1.clone()], &mesh),
        true,
        0,
        "tree",
    );
    assert!(e.contains("`0`: in the tree, not in the file"), "{e}");

    // A global file where a shard file should be.
    let global = dir.join("global.safetensors");
    dist::save(&d, &global).unwrap();
    let plain = dir.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::copy(&global, file(&plain, r)).unwrap();
    Comm::world().barrier();
    let e = fails(dist::load_shards(&plain, &like, &mesh), true, 0, "global");
    assert!(e.contains("not a shard file"), "{e}");

    // Files of two checkpoints: rank 0's from other layouts.
    let mixed = dir.join("mixed");
    dist::save_shards(&d, &mixed).unwrap();
    let other_layout = dir.join("other");
    dist::save_shards(&dist::distribute_tree(&p, &mesh, second), &other_layout).unwrap();
    if r == 0 {
        std::fs::copy(file(&other_layout, 0), file(&mixed, 0)).unwrap();
    }
    Comm::world().barrier();
    let e = fails(dist::load_shards(&mixed, &like, &mesh), true, 0, "mixed");
    assert!(e.contains("different checkpoints"), "{e}");

    // One rank cannot read the global file, or cannot write its shard.
    let missing = dir.join(if r == last {
        "missing.safetensors"
    } else {
        "global.safetensors"
    });
    let e = fails(
        dist::load(&missing, &like, &mesh, first),
        r == last,
        last,
        "load",
    );
    assert!(r != last || e.contains("missing.safetensors"), "{e}");
    let blocked = if r == last {
        global.join("sub")
    } else {
        dir.join("fine")
    };
    fails(
        dist::save_shards(&d, &blocked),
        r == last,
        last,
        "save_shards",
    );
    let target = if r == 0 {
        global.join("x.safetensors")
    } else {
        global.clone()
    };
    fails(dist::save(&d, &target), r == 0, 0, "save");

    // Every rank is here: nobody waits.
    Comm::world().barrier();
    if r == 0 {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
