"""The deployers of docs/cluster.md, as far as this machine goes: the worker command that
dask-jobqueue (SLURM) renders and the worker pod that the dask-kubernetes operator
builds, each made with the deployer's own API and run as it would run, against a real
scheduler; and a worker that outlives its scheduler."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from ..conftest import SAMPLES
from .test_cluster import (
    ARENA,
    WAIT_FOR_WORKERS,
    Workers,
    ask,
    free_port,
    make_certificates,
    nodes_of,
    run_arena,
    stop,
    wait_listening,
)


def start_scheduler(port: int, *tls: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [ARENA, "scheduler", "--port", str(port), *tls],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_listening(port)
    return proc


def start_worker(argv: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, start_new_session=True
        )


JOB_SCRIPT = """
import sys
from dask_jobqueue import SLURMCluster
from distributed.security import Security
ca, cert, key = sys.argv[2:5]
security = Security(
    tls_ca_file=ca, tls_worker_cert=cert, tls_worker_key=key, tls_scheduler_cert=cert, tls_scheduler_key=key,
    tls_client_cert=cert, tls_client_key=key, require_encryption=True,
)
with SLURMCluster(
    cores=2, memory="2GB", processes=1, python=sys.executable, worker_command=sys.argv[1],
    security=security, protocol="tls://", scheduler_options={"host": "127.0.0.1"},
) as cluster:
    print(cluster.job_script())
"""


def test_the_slurm_recipe_runs_as_dask_jobqueue_renders_it(tmp_path: Path) -> None:
    """docs/cluster.md's SLURMCluster, with TLS: the job script's worker line, as
    dask-jobqueue writes it (``python -m arena worker ADDRESS --name ... --nthreads 2
    --memory-limit ... --death-timeout 60 --protocol tls:// --tls-...``), joins a real
    TLS scheduler with its name, its cores as slots and its memory limit, and plays."""
    certs = make_certificates(tmp_path / "certs")
    rendered = subprocess.run(
        [sys.executable, "-c", JOB_SCRIPT, "arena worker --sandbox local", *certs["worker"][1::2]],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rendered.returncode == 0, rendered.stderr
    line = next(line for line in rendered.stdout.splitlines() if " -m arena worker " in line)
    assert line.startswith(f"{sys.executable} -m arena worker --sandbox local tls://")
    assert "--nthreads 2" in line and "--memory-limit" in line and "--death-timeout 60" in line
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    line = re.sub(r"tls://[^ ]+", address, line, count=1)  # the job's scheduler is the one we started
    line = line.replace("--name dummy-name", "--name slurm-node-1")
    scheduler = start_scheduler(port, *certs["scheduler"])
    worker = start_worker(["bash", "-c", line], tmp_path / "worker.log")
    try:
        seen = json.loads(ask(address, WAIT_FOR_WORKERS, "1", *certs["coordinator"]))
        db = tmp_path / "a.db"
        bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
        played = run_arena("tournament", "run", *bots, "--db", str(db), "--deals", "1", "--cluster", address,
                           *certs["coordinator"])  # fmt: skip
    finally:
        stop(worker)
        stop(scheduler)
    assert played.returncode == 0, played.stderr
    assert [(w["name"], w["nthreads"], w["resources"]) for w in seen] == [("slurm-node-1", 2, {"slots": 2.0})]
    assert 1.7e9 < seen[0]["memory"] < 2.1e9, "dask-jobqueue's memory limit reached Dask's worker"
    assert set(nodes_of(db)) == {"slurm-node-1"}


POD = """
import json, sys
from dask_kubernetes.operator import make_worker_spec
spec = make_worker_spec(image="sixarena", n_workers=1, worker_command=sys.argv[1])
print(json.dumps(spec["spec"]["containers"][0]))
"""


def test_the_kubernetes_recipe_runs_as_the_operator_builds_its_pod(tmp_path: Path) -> None:
    """docs/cluster.md's worker group for the dask-kubernetes operator: the pod's
    command, as the operator's own API builds it (``arena worker --name
    $(DASK_WORKER_NAME) --dashboard --dashboard-address 8788``) with the environment the
    operator gives a pod (its scheduler's address and the worker's name), joins a real
    scheduler under the name the operator chose (it retires workers by that name),
    serves its dashboard on loopback only, and plays."""
    built = subprocess.run(
        [sys.executable, "-c", POD, "arena worker --sandbox local"], capture_output=True, text=True, timeout=120
    )
    assert built.returncode == 0, built.stderr
    container = json.loads(built.stdout)
    port, dashboard = free_port(), free_port()
    env = {"DASK_SCHEDULER_ADDRESS": f"tcp://127.0.0.1:{port}", "DASK_WORKER_NAME": "league-default-worker-7f3a"}
    args = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], arg) for arg in container["args"]]
    assert args[:2] == ["arena", "worker"] and "--dashboard" in args
    args = [ARENA, *args[1:]]
    args[args.index("--dashboard-address") + 1] = str(dashboard)  # 8788 in the pod; any free port here
    scheduler = start_scheduler(port)
    worker = start_worker(args, tmp_path / "worker.log", env)
    try:
        seen = json.loads(ask(env["DASK_SCHEDULER_ADDRESS"], WAIT_FOR_WORKERS, "1"))
        listening = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout
        db = tmp_path / "a.db"
        bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
        played = run_arena(
            "tournament", "run", *bots, "--db", str(db), "--deals", "1", "--cluster", env["DASK_SCHEDULER_ADDRESS"]
        )
    finally:
        stop(worker)
        stop(scheduler)
    assert played.returncode == 0, played.stderr
    assert [w["name"] for w in seen] == ["league-default-worker-7f3a"]
    assert f"127.0.0.1:{dashboard} " in listening, "the dashboard the pod asks for, on loopback"
    assert f"0.0.0.0:{dashboard} " not in listening and f"*:{dashboard} " not in listening
    assert set(nodes_of(db)) == {"league-default-worker-7f3a"}


def test_python_dash_m_arena_is_the_arena_command() -> None:
    done = subprocess.run([sys.executable, "-m", "arena", "worker", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--nthreads" in done.stdout and "--wait-scheduler" in done.stdout


def test_a_worker_waits_for_its_scheduler_and_joins_it_again(tmp_path: Path) -> None:
    """The scheduler is killed: the worker says it waits (Dask's own worker would exit,
    leaving every machine to be visited), and joins the new scheduler on that address,
    which a tournament then plays on."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = start_scheduler(port)
    workers = Workers(address, tmp_path)
    try:
        workers.start("w1", 1, "local", "--wait-scheduler", "120")
        workers.wait_for(1)
        stop(scheduler)
        deadline = time.monotonic() + 60
        while "is gone: waiting up to 120 s" not in workers.log("w1"):
            assert time.monotonic() < deadline, workers.log("w1")
            time.sleep(0.2)
        assert workers.procs["w1"].poll() is None, "the worker waits"
        scheduler = start_scheduler(port)
        workers.wait_for(1)
        db = tmp_path / "a.db"
        bots = [str(SAMPLES / "lowest"), str(SAMPLES / "heuristic")]
        played = run_arena("tournament", "run", *bots, "--db", str(db), "--deals", "1", "--cluster", address)
    finally:
        workers.stop_all()
        stop(scheduler)
    assert played.returncode == 0, played.stderr
    assert set(nodes_of(db)) == {"w1"}
    assert "is back: joining it again" in workers.log("w1")


def test_a_worker_started_before_its_scheduler_waits_for_it(tmp_path: Path) -> None:
    """A worker started before its scheduler (a pod before the scheduler's, a script
    starting both at once) says it waits, and joins once the scheduler listens."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    workers = Workers(address, tmp_path)
    scheduler = None
    try:
        workers.start("early", 1, "local", "--wait-scheduler", "120")
        deadline = time.monotonic() + 60
        while "does not answer yet: waiting up to 120 s" not in workers.log("early"):
            assert time.monotonic() < deadline, workers.log("early")
            time.sleep(0.2)
        scheduler = start_scheduler(port)
        seen = json.loads(ask(address, WAIT_FOR_WORKERS, "1"))
    finally:
        workers.stop_all()
        if scheduler is not None:
            stop(scheduler)
    assert [w["name"] for w in seen] == ["early"]


def test_a_worker_whose_scheduler_never_comes_back_says_so_and_exits(tmp_path: Path) -> None:
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = start_scheduler(port)
    workers = Workers(address, tmp_path)
    try:
        workers.start("w1", 1, "local", "--wait-scheduler", "2")
        workers.wait_for(1)
        stop(scheduler)
        code = workers.procs["w1"].wait(timeout=90)
    finally:
        workers.stop_all()
    assert code != 0
    last = workers.log("w1").strip().splitlines()[-1]
    assert last.startswith(f"error: the scheduler {address} did not answer in 2 s"), last
