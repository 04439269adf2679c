"""Objects under a URL: a local folder (``/path``, ``file:///path``) or S3 (``s3://bucket/prefix``).

Why: benchmark results must outlive one machine and be readable by every worker of a distributed
sweep, so they are written under a URL rather than into the (one-writer, one-host) DuckDB file.

* Writes are atomic: a reader sees the whole object or nothing. Local files go through
  :func:`gridshift.atomic.atomic_write_bytes` (temporary file + rename); an S3 object becomes
  visible only when its upload completes (PutObject, or CompleteMultipartUpload for the multipart
  upload pyarrow uses), never half-written.
* S3 goes through ``pyarrow.fs.S3FileSystem`` (pyarrow is already a dependency; no boto/s3fs).
  Credentials come only from the AWS SDK's usual environment variables (``AWS_ACCESS_KEY_ID``,
  ``AWS_SECRET_ACCESS_KEY``, optional ``AWS_SESSION_TOKEN``, or a profile); nothing here takes or
  stores a secret. ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` point at an S3-compatible server
  (MinIO, Ceph, a loopback test server), ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` name the region
  (default ``us-east-1``: given explicitly so pyarrow never asks AWS to resolve a bucket's region).
* Errors name the URL: :class:`StoreURLError` for a URL that is not one of the above,
  :class:`ObjectNotFoundError` for a missing object.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from gridshift.atomic import atomic_write_bytes
from gridshift.errors import GridshiftError, storage_cause
from gridshift.limits import Limit

SCHEMES = ("file", "s3")
DEFAULT_REGION = "us-east-1"


class StoreURLError(GridshiftError, ValueError):
    """A results URL that is neither a local path nor ``s3://bucket[/prefix]``."""


class ObjectNotFoundError(GridshiftError, FileNotFoundError):
    """No object at the URL (or its bucket does not exist)."""


class ObjectStoreError(GridshiftError, OSError):
    """The store refused a read or write (permissions, unreachable endpoint...); names the URL."""


@dataclass(frozen=True)
class Location:
    """A parsed URL: ``scheme`` ("file" or "s3"), ``root`` (a local directory, or ``bucket/prefix``)."""

    scheme: str
    root: str

    @property
    def url(self) -> str:
        return f"s3://{self.root}" if self.scheme == "s3" else self.root

    def join(self, relative: str) -> str:
        """The URL of ``relative`` (a ``/``-separated key without ``..``) under this location."""
        parts = relative.split("/")
        if not relative or any(p in ("", ".", "..") for p in parts):
            raise StoreURLError(f"object key {relative!r} is not a clean relative path")
        return f"{self.url.rstrip('/')}/{relative}"


def shown(url: str) -> str:
    """``url`` fit to quote in an error: user-info replaced by ``***`` and any query or fragment by ``?***``, since a
    refused URL may be refused precisely for carrying a credential there (``s3://KEY:SECRET@bucket``, a pre-signed
    ``?X-Amz-Signature=...``)."""
    parts = urlsplit(url)
    netloc = f"***@{parts.netloc.rpartition('@')[2]}" if "@" in parts.netloc else parts.netloc
    rest = "?***" if parts.query or parts.fragment or url.endswith(("?", "#")) else ""
    return f"{parts.scheme}://{netloc}{parts.path}{rest}"


def parse(url: str | os.PathLike) -> Location:
    """Parse a results URL (see the module docstring); raise :class:`StoreURLError` if it is none. A URL carrying
    a credential (user-info, a query) is refused without quoting it (:func:`shown`)."""
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str) or not url.strip():
        raise StoreURLError(f"results URL {url!r} is empty; give a local path or s3://bucket/prefix")
    url = url.strip()
    if "://" not in url:
        return Location("file", str(Path(url).expanduser().absolute()))
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    quoted = repr(shown(url))
    if scheme not in SCHEMES:
        raise StoreURLError(f"results URL {quoted}: scheme {scheme!r} is not supported "
                            f"(a local path, file:///path or s3://bucket/prefix)")
    if "@" in parts.netloc:
        raise StoreURLError(f"results URL {quoted}: no credentials in the URL (S3 credentials come from "
                            "AWS_* environment variables)")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise StoreURLError(f"results URL {quoted}: no query or fragment allowed (S3 settings come from "
                            "AWS_* environment variables)")
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise StoreURLError(f"results URL {quoted}: a file URL names no host (file:///absolute/path)")
        return Location("file", str(Path(parts.path or "/").absolute()))
    bucket = parts.netloc
    if not bucket or ":" in bucket:
        raise StoreURLError(f"results URL {quoted}: expected s3://bucket/prefix (no port in the URL; "
                            "set AWS_ENDPOINT_URL_S3 for another endpoint)")
    prefix = parts.path.strip("/")
    if any(p in (".", "..") for p in prefix.split("/")):
        raise StoreURLError(f"results URL {quoted}: '.' and '..' are not allowed in the prefix")
    return Location("s3", f"{bucket}/{prefix}" if prefix else bucket)


def s3_settings() -> dict[str, str]:
    """The S3 endpoint and region read from the environment (never credentials)."""
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION
    return {"endpoint": endpoint, "region": region}


@lru_cache(maxsize=8)
def _s3(endpoint: str, region: str) -> pafs.S3FileSystem:
    kw: dict = {"region": region}
    if endpoint:
        scheme = urlsplit(endpoint).scheme
        kw.update(endpoint_override=endpoint, scheme=scheme or "https")
    return pafs.S3FileSystem(**kw)


def _fs_path(url: str) -> tuple[pafs.FileSystem | None, str, Location]:
    loc = parse(url)
    if loc.scheme == "file":
        return None, loc.root, loc
    s = s3_settings()
    return _s3(s["endpoint"], s["region"]), loc.root, loc


def write_bytes(url: str, data: bytes) -> None:
    """Publish ``data`` at ``url`` atomically (replacing an object already there)."""
    fs, path, loc = _fs_path(url)
    if fs is None:
        try:
            atomic_write_bytes(Path(path), data)
        except OSError as err:  # (a full disk in words: the atomic write left nothing behind)
            raise ObjectStoreError(f"cannot write {loc.url}: {storage_cause(err) or err}") from err
        return
    try:
        with fs.open_output_stream(path) as out:  # the object appears when the stream closes
            out.write(data)
    except (OSError, pa.ArrowException) as err:
        raise ObjectStoreError(f"cannot write {loc.url}: {err}") from err


def read_bytes(url: str, *, limit: Limit | None = None) -> bytes:
    """The bytes of the object at ``url`` (:class:`ObjectNotFoundError` if there is none). With ``limit``, an
    object larger than it is refused by name (``DataError``) from its size, before it is read (and a read stops
    one byte past the limit, should the object grow meanwhile)."""
    fs, path, loc = _fs_path(url)
    try:
        if fs is None:
            with open(path, "rb") as fh:
                if limit is not None:
                    limit.check(os.fstat(fh.fileno()).st_size, file=loc.url, what="the object")
                data = fh.read() if limit is None else fh.read(limit.limit + 1)
        else:
            if limit is not None:
                limit.check(fs.get_file_info(path).size or 0, file=loc.url, what="the object")
            with fs.open_input_stream(path) as src:
                data = src.read() if limit is None else src.read(limit.limit + 1)
        if limit is not None:
            limit.check(len(data), file=loc.url, what="the object")
        return data
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as err:
        raise ObjectNotFoundError(f"no object at {loc.url}") from err
    except (OSError, pa.ArrowException) as err:
        raise ObjectStoreError(f"cannot read {loc.url}: {err}") from err


def exists(url: str) -> bool:
    """Whether an object (a file, not a folder) is at ``url``."""
    fs, path, loc = _fs_path(url)
    if fs is None:
        return Path(path).is_file()
    try:
        return fs.get_file_info(path).type == pafs.FileType.File
    except (OSError, pa.ArrowException) as err:
        raise ObjectStoreError(f"cannot look up {loc.url}: {err}") from err


def list_files(url: str) -> list[str]:
    """The ``/``-separated paths, relative to ``url``, of every object under it (sorted; none if it is absent)."""
    fs, path, loc = _fs_path(url)
    fs = fs or pafs.LocalFileSystem()
    try:
        infos = fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    except (OSError, pa.ArrowException) as err:
        raise ObjectStoreError(f"cannot list {loc.url}: {err}") from err
    base = path.rstrip("/") + "/"
    return sorted(i.path[len(base):] for i in infos
                  if i.type == pafs.FileType.File and i.path.startswith(base) and not i.base_name.startswith("."))


__all__ = ["Location", "ObjectNotFoundError", "ObjectStoreError", "StoreURLError", "exists", "list_files", "parse",
           "read_bytes", "s3_settings", "write_bytes"]
