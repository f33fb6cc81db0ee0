//! Starting `mpirun` on this test binary and judging the job.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every file under `dir`, in path order, appended to `text` (the ranks'
/// outputs, one file each, so their lines never interleave).
fn read_tree(dir: &std::path::Path, text: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            read_tree(&p, text);
        } else if let Ok(t) = std::fs::read_to_string(&p) {
            text.push_str(&t);
        }
    }
}

/// Runs the ignored test `worker` on `n` ranks; its exit success and
/// output (mpirun's, then each rank's stdout and stderr), or a failure
/// after `limit`.
fn mpirun(n: usize, worker: &str, limit: Duration) -> (bool, String) {
    let exe = std::env::current_exe().expect("the test binary");
    // No `:` in the paths: mpirun reads options after one in
    // `--output-filename` (`nocopy`: the ranks' output only in their files).
    let name = format!(
        "nabla-dist-{}-{n}-{}",
        worker.replace("::", "."),
        std::process::id()
    );
    let out = std::env::temp_dir().join(format!("{name}.log"));
    let ranks = std::env::temp_dir().join(format!("{name}.ranks"));
    let _ = std::fs::remove_dir_all(&ranks);
    let log = std::fs::File::create(&out).expect("a log file");
    let mut child = Command::new("mpirun")
        .args(["-n", &n.to_string(), "--oversubscribe", "--output-filename"])
        .arg(format!("{}:nocopy", ranks.display()))
        .arg(&exe)
        .args([
            "--ignored",
            "--exact",
            worker,
            "--nocapture",
            "--test-threads",
            "1",
        ])
        // As root (containers, CI), and without the cross-memory attach
        // that containers forbid.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("RAYON_NUM_THREADS", "1")
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .expect("mpirun on the PATH (apt-get install openmpi-bin)");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut text = std::fs::read_to_string(&out).unwrap_or_default();
    read_tree(&ranks, &mut text);
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_dir_all(&ranks);
    match status {
        Some(s) => (s.success(), text),
        None => panic!("{worker} on {n} ranks did not end within {limit:?}:\n{text}"),
    }
}

#[test]
fn collectives_and_their_gradients_on_two_and_three_ranks() {
    for n in [2, 3] {
        let (ok, text) = mpirun(n, "worker::collectives", Duration::from_secs(120));
        assert!(ok, "collectives on {n} ranks failed:\n{text}");
        // Every rank ran the whole worker.
        assert_eq!(
            text.matches("test result: ok. 1 passed").count(),
            n,
            "{text}"
        );
    }
}

#[test]
fn a_rank_that_panics_ends_the_job_within_thirty_seconds() {
    let start = Instant::now();
    let (ok, text) = mpirun(3, "worker::one_rank_panics", Duration::from_secs(30));
    assert!(!ok, "the job should fail:\n{text}");
    assert!(
        text.contains("rank 1 gives up here"),
        "the panic's message:\n{text}"
    );
    assert!(text.contains("aborting every rank"), "{text}");
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn shapes_that_differ_across_ranks_are_an_error_on_every_rank() {
    let (ok, text) = mpirun(2, "worker::shapes_differ", Duration::from_secs(30));
    assert!(!ok, "the job should fail:\n{text}");
    assert!(
        text.contains("the ranks passed arrays of different dtypes, shapes or devices"),
        "{text}"
    );
}

#[test]
fn a_rank_that_exits_early_ends_the_job_within_thirty_seconds() {
    let (ok, text) = mpirun(2, "worker::one_rank_exits", Duration::from_secs(30));
    assert!(!ok, "the job should fail:\n{text}");
    // mpirun names the rank and its exit code.
    assert!(text.contains("Exit code:    3"), "{text}");
}

#[test]
fn dtypes_that_differ_across_ranks_are_an_error_on_every_rank() {
    let (ok, text) = mpirun(2, "worker::dtypes_differ", Duration::from_secs(30));
    assert!(!ok, "the job should fail:\n{text}");
    assert!(
        text.contains("rank 0: F32 [3] on cpu, rank 1: F64 [3] on cpu"),
        "{text}"
    );
}

/// GPU arrays through NCCL on one rank (features `mpi` and `cuda`); the
/// worker prints why it skips where there is no GPU.
#[cfg(feature = "cuda")]
#[test]
fn gpu_collectives_agree_with_the_host() {
    let (ok, text) = mpirun(1, "gpu::gpu_collectives", Duration::from_secs(300));
    assert!(ok, "GPU collectives failed:\n{text}");
    println!("{text}");
}

/// `DArray`s, resharding, every registry primitive and an MLP's gradients
/// under `spmd`, on meshes (2), (4) and (2, 2).
#[test]
fn spmd_on_two_and_four_ranks() {
    for n in [2, 4] {
        for worker in [
            "spmd::layouts",
            "spmd::registry_primitives",
            "spmd::mlp_gradients",
            "spmd_models::gpt_gradients",
            "spmd_training::tape_and_adamw",
            "auto::mlp_under_auto",
            "auto::gpt_adamw_under_auto",
            "auto_sharded::mlp_on_sharded_arguments",
            "auto_sharded::adamw_on_sharded_parameters",
            "pipeline::gpt_in_stages",
            "pipeline::wide_messages",
        ] {
            let (ok, text) = mpirun(n, worker, Duration::from_secs(300));
            assert!(ok, "{worker} on {n} ranks failed:\n{text}");
            assert_eq!(
                text.matches("test result: ok. 1 passed").count(),
                n,
                "{text}"
            );
        }
    }
}

/// Layout mistakes end the job on every rank with a message naming the
/// mistake and the fix.
#[test]
fn layout_mistakes_end_the_job_with_a_clear_message() {
    for (worker, says) in [
        (
            "bad_input::missing_mesh_axis",
            "names the mesh axis \"model\", which mesh(data: 2) does not have",
        ),
        (
            "bad_input::axis_split_twice",
            "uses the mesh axis \"data\" twice",
        ),
        (
            "bad_input::uneven_split",
            "axis 0 of shape [5, 2] has length 5, which does not split evenly over data",
        ),
        (
            "bad_input::two_meshes_in_one_op",
            "got DArrays on two meshes (mesh(data: 2) and mesh(model: 2))",
        ),
        (
            "bad_input::mesh_not_the_world",
            "hold 3 ranks but the communicator has 2",
        ),
        (
            "bad_input::ranks_that_plan_differently",
            "the ranks made different plans",
        ),
    ] {
        let start = Instant::now();
        let (ok, text) = mpirun(2, worker, Duration::from_secs(30));
        assert!(!ok, "{worker} should fail:\n{text}");
        assert!(text.contains(says), "{worker} should say {says:?}:\n{text}");
        assert!(text.contains("aborting every rank"), "{text}");
        assert!(start.elapsed() < Duration::from_secs(30));
    }
}

/// Every other primitive of the registry (reductions, shape ops,
/// products, indexing, constants), the row and `linalg` custom ops, and
/// `vmap`, `jacfwd`, `jacrev`, `hessian` and `jvp(grad)` of `spmd` and
/// `auto`, on meshes (2), (4) and (2, 2).
#[test]
fn other_primitives_and_transforms_on_two_and_four_ranks() {
    for n in [2, 4] {
        for worker in [
            "spmd_other::other_primitives",
            "spmd_transforms::transforms_of_spmd",
            "spmd_transforms::transforms_of_auto",
        ] {
            let (ok, text) = mpirun(n, worker, Duration::from_secs(300));
            assert!(ok, "{worker} on {n} ranks failed:\n{text}");
            assert_eq!(
                text.matches("test result: ok. 1 passed").count(),
                n,
                "{text}"
            );
        }
    }
}

/// Checkpoints of `DArray`s (good and bad files), plans given to
/// `spmd_with`, and `calibrate`, on meshes (2), (4) and (2, 2).
#[test]
fn checkpoints_given_plans_and_calibration_on_two_and_four_ranks() {
    for n in [2, 4] {
        for worker in [
            "io::checkpoints",
            "io::bad_checkpoints",
            "plans::given_plans",
            "plans::calibration",
        ] {
            let (ok, text) = mpirun(n, worker, Duration::from_secs(300));
            assert!(ok, "{worker} on {n} ranks failed:\n{text}");
            assert_eq!(
                text.matches("test result: ok. 1 passed").count(),
                n,
                "{text}"
            );
        }
    }
}

#[test]
fn a_plan_for_another_program_panics_on_every_rank() {
    let (ok, text) = mpirun(
        2,
        "plans::plan_for_another_program",
        Duration::from_secs(60),
    );
    assert!(!ok, "the job should fail:\n{text}");
    // The forward ops match; the plan's backward ops are left over.
    assert!(
        text.contains("nabla::dist::spmd_with: the program records")
            && text.contains("nodes but the plan holds"),
        "{text}"
    );
}
