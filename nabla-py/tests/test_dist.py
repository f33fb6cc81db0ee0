"""nabla.dist: without MPI the module says how to build it; with MPI
(built with --features mpi, mpirun on the PATH) tests/dist_worker.py runs
on 2 and 3 ranks and every rank reports its checks passed."""

import os
import shutil
import subprocess
import sys

import pytest

import nabla
import nabla.dist as dist

WORKER = os.path.join(os.path.dirname(__file__), "dist_worker.py")


@pytest.mark.skipif(dist.available, reason="this build has MPI")
def test_a_build_without_mpi_says_how_to_get_it():
    for call in (dist.init, dist.rank, lambda: dist.all_reduce(nabla.ones((2,)))):
        with pytest.raises(RuntimeError, match="--features mpi"):
            call()


@pytest.mark.skipif(not dist.available, reason="built without MPI")
def test_collectives_before_init_name_the_fix():
    # (this process never calls init: a second process does, below)
    with pytest.raises(RuntimeError, match="init"):
        dist.rank()


def mpirun(ranks, *args):
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_btl_vader_single_copy_mechanism="none",
        RAYON_NUM_THREADS="1",
    )
    cmd = ["mpirun", "-n", str(ranks), "--oversubscribe", sys.executable, WORKER, *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


needs_mpi = pytest.mark.skipif(not dist.available or shutil.which("mpirun") is None, reason="needs MPI")


@needs_mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_collectives_on_several_ranks(ranks):
    code, out = mpirun(ranks)
    assert code == 0, out
    for r in range(ranks):
        assert f"rank {r} ok" in out, out


@needs_mpi
def test_an_uncaught_exception_ends_every_rank():
    code, out = mpirun(2, "raise")
    assert code != 0, out
    assert "deliberate failure on rank 1" in out, out
    assert "never reached" not in out, out
