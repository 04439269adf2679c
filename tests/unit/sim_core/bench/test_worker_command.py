"""The documented ``dask worker`` command (docs/distributed.md) listens on the address it is given, never on every
interface: run as written (the machine's private address replaced by loopback), its worker and nanny processes
hold no listening socket on 0.0.0.0 or :: (each worker's HTTP server, dashboard or not, binds every interface
unless given --dashboard-address)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[4]


def _documented_worker_args() -> list[str]:
    text = (REPO / "docs" / "distributed.md").read_text()
    (line,) = re.findall(r"^DASK_CONFIG=deploy/dask \./run\.sh dask worker .*$", text, flags=re.M)
    return shlex.split(line.split("./run.sh dask ", 1)[1])


def _listening(pid: int) -> list[tuple[str, int]]:
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    return [(c.laddr.ip, c.laddr.port) for p in procs for c in p.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN]


def test_the_documented_worker_listens_on_its_given_address_only(tmp_path):
    args = _documented_worker_args()
    assert "--host" in args and "--dashboard-address" in args
    env = {**os.environ, "DASK_CONFIG": str(REPO / "deploy" / "dask")}
    dask = [sys.executable, "-m", "distributed.cli.dask_worker"]
    sched = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                              "--port", "0", "--no-dashboard", "--scheduler-file", str(tmp_path / "s.json")],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = None
    try:
        for _ in range(600):
            if (tmp_path / "s.json").exists() and (tmp_path / "s.json").read_text().strip():
                break
            time.sleep(0.1)
        address = json.loads((tmp_path / "s.json").read_text())["address"]
        argv = [address if a == "tcp://A:8786" else "127.0.0.1" if a == "B_PRIVATE_IP" else a for a in args[1:]]
        worker = subprocess.Popen([*dask, *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        want = int(argv[argv.index("--nworkers") + 1])
        listening: list[tuple[str, int]] = []
        for _ in range(1200):  # each nanny listens once, each worker twice (its server, its HTTP server)
            listening = _listening(worker.pid)
            if len(listening) >= 3 * want:
                break
            time.sleep(0.1)
        assert len(listening) == 3 * want, listening
        assert all(ip == "127.0.0.1" for ip, _port in listening), listening
    finally:
        for p in (worker, sched):
            if p is not None:
                p.terminate()
                p.wait(timeout=60)
