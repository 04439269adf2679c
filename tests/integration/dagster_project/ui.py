"""The Dagster UI as a user starts it, for the UI tests: a free loopback port, its GraphQL API, waiting for it
to come up, stopping it with SIGTERM and checking it left no process behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int, query: str, variables: dict | None = None) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql",
                                 data=json.dumps({"query": query, "variables": variables or {}}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        body = json.loads(r.read())
    assert "errors" not in body, body
    return body["data"]


def wait_up(proc: subprocess.Popen, port: int, limit_s: float = 480) -> None:
    """Until the webserver answers. dg dev starts a webserver, a daemon and a code server: ~20 s on a quiet
    2-core machine, but over 4 min was seen at a load average of 15; this bounds a hang, it is not a
    performance check."""
    deadline = time.time() + limit_s
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5)
            return
        except OSError:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else proc.returncode
            assert time.time() < deadline, "the UI did not come up"
            time.sleep(1)


def children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-g", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(x) for x in out]


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, as Ctrl-C would; it must stop within 60 s and its webserver, daemon and code server with it."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("dg dev did not stop within 60 s of SIGTERM")
    assert proc.returncode in (0, -signal.SIGTERM), proc.returncode
    deadline = time.time() + 30
    while children(proc.pid):
        assert time.time() < deadline, f"dg dev left processes behind: {children(proc.pid)}"
        time.sleep(0.5)
