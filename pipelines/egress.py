"""Cloud inter-region egress prices: square USD/GB matrices, first row and column are region names.

Mirror layout: ``egress/<provider>_transmission_cost_matrix.csv`` (aws, gcp, azure).
"""

from __future__ import annotations

import polars as pl

from gridshift.errors import DataError
from pipelines.raw import RawFile
from pipelines.tabular import read_csv_strings, to_float

SOURCE = "cloud-egress-matrix"
LICENSE = "Published cloud price lists (AWS, Google Cloud, Azure) as tabulated by SustainCluster (MIT)"
PROVIDERS = ("aws", "gcp", "azure")


def mirror_relpath(provider: str) -> str:
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}")
    return f"egress/{provider}_transmission_cost_matrix.csv"


def parse(raw: RawFile, provider: str) -> pl.DataFrame:
    """Parse a matrix into ``egress_price`` rows (one per ordered region pair)."""
    file = raw.uri
    df = read_csv_strings(raw.content, file, [])
    first = df.columns[0]
    dst_regions = df.columns[1:]
    src_regions = df[first].to_list()
    if sorted(src_regions) != sorted(dst_regions):
        raise DataError(
            "matrix is not square: row and column region names differ", file=file, column=first,
            values=sorted(set(src_regions) ^ set(dst_regions)),
        )
    if len(set(src_regions)) != len(src_regions):
        raise DataError("duplicated region rows", file=file, column=first)
    values = pl.DataFrame({c: to_float(df, c, file, required=True) for c in dst_regions})
    long = (
        values.with_columns(src_region=pl.Series(src_regions, dtype=pl.String))
        .unpivot(index="src_region", variable_name="dst_region", value_name="usd_per_gb")
        .with_columns(
            provider=pl.lit(provider, dtype=pl.String),
            source=pl.lit(SOURCE, dtype=pl.String),
            raw_sha256=pl.lit(raw.sha256, dtype=pl.String),
        )
    )
    return long.select("provider", "src_region", "dst_region", "usd_per_gb", "source", "raw_sha256").sort(
        "src_region", "dst_region"
    )
