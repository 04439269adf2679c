"""A bundle's declared sizes, checked before its content is read (``gridshift.limits.BUNDLE``).

The content reader allocates from what a bundle declares: signals of datacenters x steps, network
matrices of datacenters², task arrays of the tasks file's row count. A hash-valid bundle can declare
anything (100,000 datacenters in a 20 MB bundle make the network matrices 74.5 GiB; a tasks file's footer
can claim 10⁹ rows), so these counts are read from the manifest and the Parquet footers alone and
refused by name — file, count, limit — before any array exists.
"""

from __future__ import annotations

from pathlib import Path

from gridshift.bundle.errors import BundleError
from gridshift.bundle.format import MANIFEST, NETWORK, SIGNALS, TASKS
from gridshift.limits import BUNDLE, BundleLimits


def parquet_rows(path: Path) -> int:
    """The row count a Parquet file's footer declares (the footer only is read)."""
    import pyarrow.parquet as pq  # noqa: PLC0415 (pyarrow is polars' optional dependency: imported here)

    try:
        return int(pq.ParquetFile(path).metadata.num_rows)
    except Exception as exc:  # noqa: BLE001 - any reader error is a bundle error
        raise BundleError(f"cannot read the Parquet footer ({exc})", file=str(path)) from None


def check_datacenter_count(n_dc: int, file: str, *, limits: BundleLimits = BUNDLE) -> None:
    """Refuse a manifest listing more datacenters than the limit."""
    limits.datacenters.check(n_dc, file=file, what="the number of datacenters", column="locations",
                             error=BundleError)


def check_bundle_sizes(root: Path, n_dc: int, n_steps: int, *, limits: BundleLimits = BUNDLE) -> int:
    """Refuse a bundle whose datacenters, tasks or network rows exceed ``limits``, or whose signals file
    declares another row count than datacenters x steps — from the manifest's counts and the footers; the
    tasks file's row count."""
    check_datacenter_count(n_dc, str(root / MANIFEST), limits=limits)
    signals = parquet_rows(root / SIGNALS)
    if signals != n_dc * n_steps:
        raise BundleError(f"{signals:,} rows, expected {n_dc} locations x {n_steps} steps (the Parquet footer)",
                          file=str(root / SIGNALS))
    n_tasks = parquet_rows(root / TASKS)
    limits.tasks.check(n_tasks, file=str(root / TASKS), what="the number of tasks", error=BundleError)
    limits.network_rows.check(parquet_rows(root / NETWORK), file=str(root / NETWORK), what="the number of rows",
                              error=BundleError)
    return n_tasks
