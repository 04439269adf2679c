"""Local services the tests start themselves: an S3-compatible server on 127.0.0.1 (moto) and a
guard that refuses any Python socket connection beyond the loopback address."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
from collections.abc import Iterator

#: only these variables configure S3 access; credentials are throw-away values for the loopback server
S3_ENV = {"AWS_ACCESS_KEY_ID": "gridshift-test", "AWS_SECRET_ACCESS_KEY": "gridshift-test-secret",
          "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


@contextlib.contextmanager
def s3_server() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 (a free port); sets the S3 environment (endpoint, throw-away
    credentials, no EC2 metadata lookups) for this process and the processes it starts, and restores it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    env = {**S3_ENV, "AWS_ENDPOINT_URL_S3": endpoint}
    saved = {k: os.environ.get(k) for k in [*env, "AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN"]}
    for k in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        os.environ.pop(k, None)
    os.environ.update(env)
    try:
        yield endpoint
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def make_bucket(endpoint: str, name: str) -> None:
    import boto3

    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket=name)


def bucket_keys(endpoint: str, name: str) -> list[str]:
    import boto3

    pages = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").get_paginator("list_objects_v2")
    return sorted(o["Key"] for p in pages.paginate(Bucket=name) for o in p.get("Contents", []))


def _loopback(address) -> bool:
    if isinstance(address, str | bytes):  # a unix socket path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextlib.contextmanager
def loopback_only() -> Iterator[None]:
    """Refuse (``ConnectionRefusedError``) every Python-level connection to a non-loopback address."""
    real = socket.socket.connect
    real_ex = socket.socket.connect_ex

    def connect(self, address):
        if not _loopback(address):
            raise ConnectionRefusedError(f"test guard: connection to {address!r} beyond 127.0.0.1 refused")
        return real(self, address)

    def connect_ex(self, address):
        if not _loopback(address):
            raise ConnectionRefusedError(f"test guard: connection to {address!r} beyond 127.0.0.1 refused")
        return real_ex(self, address)

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = real, real_ex
