"""Inter-macro-region network throughput and RTT per cloud provider.

Measured pairs come from Persico, Botta, Montieri, Pescapè, "A First Look at Public-Cloud
Inter-Datacenter Network Performance", IEEE GLOBECOM 2016, Figures 3 (throughput) and 6 (RTT),
as tabulated in ``reference/network_persico2016.csv``. Two documented assumptions complete the
matrix (each row says which it is in ``basis``):

* ``assumption_intra_macro``: pairs inside one macro-region are not in the paper; like the
  reference benchmark we assume 1000 Mbit/s and 0 ms RTT there. This is an assumption, not a
  measurement.
* ``fallback_aws``: the paper has no GCP figures; GCP uses the AWS measurements.
"""

from __future__ import annotations

import polars as pl

from gridshift.locations import MACRO_CLUSTERS
from pipelines.core.raw import RawFile
from pipelines.core.source import Source
from pipelines.core.tabular import read_csv_strings, to_float

NAME = "persico2016"
MIRROR_RELPATH = "reference/network_persico2016.csv"
INTRA_MACRO_THROUGHPUT_MBPS = 1000.0
INTRA_MACRO_RTT_MS = 0.0
REQUIRED = ["provider", "src_macro", "dst_macro", "throughput_mbps", "rtt_ms"]


def parse(raw: RawFile) -> pl.DataFrame:
    """Parse the measured table and complete it with the documented assumptions."""
    file = raw.uri
    df = read_csv_strings(raw.content, file, REQUIRED)
    measured = pl.DataFrame(
        {
            "provider": df["provider"].str.strip_chars().str.to_lowercase(),
            "src_macro": df["src_macro"].str.strip_chars(),
            "dst_macro": df["dst_macro"].str.strip_chars(),
            "throughput_mbps": to_float(df, "throughput_mbps", file, required=True),
            "rtt_ms": to_float(df, "rtt_ms", file, required=True),
        }
    ).with_columns(basis=pl.lit("measured"))
    providers = measured["provider"].unique().sort().to_list()
    intra = pl.DataFrame(
        {
            "provider": [p for p in providers for _ in MACRO_CLUSTERS],
            "src_macro": [m for _ in providers for m in MACRO_CLUSTERS],
            "dst_macro": [m for _ in providers for m in MACRO_CLUSTERS],
            "throughput_mbps": INTRA_MACRO_THROUGHPUT_MBPS,
            "rtt_ms": INTRA_MACRO_RTT_MS,
            "basis": "assumption_intra_macro",
        }
    )
    table = pl.concat([measured, intra], how="vertical_relaxed")
    if "gcp" not in providers and "aws" in providers:
        table = pl.concat(
            [
                table,
                table.filter(pl.col("provider") == "aws").with_columns(
                    provider=pl.lit("gcp"),
                    basis=pl.when(pl.col("basis") == "measured")
                    .then(pl.lit("fallback_aws"))
                    .otherwise(pl.col("basis")),
                ),
            ]
        )
    return table.with_columns(
        source=pl.lit(NAME, dtype=pl.String), raw_sha256=pl.lit(raw.sha256, dtype=pl.String)
    ).sort("provider", "src_macro", "dst_macro")


class Persico2016(Source):
    """The measured table of Persico et al. (2016) from a mirror, completed with the stated assumptions."""

    name = NAME
    mirror_relpath = MIRROR_RELPATH

    def parse(self, raw: RawFile) -> pl.DataFrame:
        """``network_path`` rows, sorted by (provider, src_macro, dst_macro)."""
        return parse(raw)


SOURCE = Persico2016()
