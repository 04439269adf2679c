"""Inter-macro-region network throughput and RTT per cloud provider, measured by Persico et al.

Persico, Botta, Montieri, Pescapè, "A First Look at Public-Cloud Inter-Datacenter Network
Performance", IEEE GLOBECOM 2016, Figures 3 (throughput) and 6 (RTT), as tabulated in the mirror's
``reference/network_persico2016.csv`` (provider, src_macro, dst_macro, throughput_mbps, rtt_ms; AWS
and Azure, every ordered pair of the macro-regions US, EU, SA, AP; no GCP figures).

:func:`parse` reads the measured rows as they are. :func:`fit_window` fits what they show: a single
TCP flow limited by its window, so throughput × RTT is roughly constant per provider (the window in
flight). ``pipelines.sources.network`` keeps these measurements for every pair of locations in two
different macro-regions and uses the fitted window for pairs inside one macro-region, which the paper
did not measure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from gridshift import portable_math as pm
from gridshift.errors import DataError
from gridshift.locations import MACRO_CLUSTERS, PROVIDERS
from pipelines.core.raw import RawFile
from pipelines.core.source import Source
from pipelines.core.tabular import read_csv_strings, to_float

NAME = "persico2016"
MIRROR_RELPATH = "reference/network_persico2016.csv"
REQUIRED = ["provider", "src_macro", "dst_macro", "throughput_mbps", "rtt_ms"]


def parse(raw: RawFile) -> pl.DataFrame:
    """The measured rows (provider, src_macro, dst_macro, throughput_mbps, rtt_ms), checked: known
    provider and macro-regions, two different macro-regions, positive finite numbers, no repeats."""
    file = raw.uri
    df = read_csv_strings(raw.content, file, REQUIRED)
    measured = pl.DataFrame({
        "provider": df["provider"].str.strip_chars().str.to_lowercase(),
        "src_macro": df["src_macro"].str.strip_chars(),
        "dst_macro": df["dst_macro"].str.strip_chars(),
        "throughput_mbps": to_float(df, "throughput_mbps", file, required=True),
        "rtt_ms": to_float(df, "rtt_ms", file, required=True),
    })
    checks = {
        "provider": ~measured["provider"].is_in(PROVIDERS),
        "src_macro": ~measured["src_macro"].is_in(MACRO_CLUSTERS),
        "dst_macro": ~measured["dst_macro"].is_in(MACRO_CLUSTERS) | (measured["src_macro"] == measured["dst_macro"]),
        "throughput_mbps": ~measured["throughput_mbps"].is_between(0, 1e7, closed="right"),
        "rtt_ms": ~measured["rtt_ms"].is_between(0, 10_000, closed="right"),
    }
    for col, bad in checks.items():
        if bad.any():
            rows = measured.with_row_index("_i").filter(bad)
            raise DataError("invalid measurement(s)", file=file, column=col,
                            rows=[i + 2 for i in rows["_i"].head(10).to_list()], values=rows[col].head(10).to_list())
    dup = measured.select("provider", "src_macro", "dst_macro").is_duplicated()
    if dup.any():
        rows = measured.with_row_index("_i").filter(dup)
        raise DataError("repeated (provider, src_macro, dst_macro)", file=file, column="src_macro",
                        rows=[i + 2 for i in rows["_i"].head(10).to_list()])
    return measured.sort("provider", "src_macro", "dst_macro")


@dataclass(frozen=True)
class WindowFit:
    """throughput_mbps × rtt_ms ≈ ``mbit_ms`` for one provider's measured pairs."""

    provider: str
    mbit_ms: float  # geometric mean of throughput × RTT (Mbit/s · ms = kbit in flight)
    n: int
    min_mbit_ms: float
    max_mbit_ms: float
    slope: float  # free fit of log throughput on log RTT (−1 for a constant window)

    @property
    def window_bytes(self) -> float:
        return self.mbit_ms * 1e6 * 1e-3 / 8

    def throughput_mbps(self, rtt_ms) -> np.ndarray:
        return self.mbit_ms / np.asarray(rtt_ms, dtype=np.float64)


def fit_window(measured: pl.DataFrame) -> dict[str, WindowFit]:
    """Per provider: the geometric mean of throughput × RTT (least squares of log throughput on
    log RTT with the slope held at −1), and the free slope for comparison."""
    out = {}
    for provider in measured["provider"].unique().sort().to_list():
        rows = measured.filter(pl.col("provider") == provider)
        thr, rtt = rows["throughput_mbps"].to_numpy(), rows["rtt_ms"].to_numpy()
        prod = thr * rtt
        slope = pm.line_fit(pm.log(rtt), pm.log(thr))[1] if rows.height >= 2 else math.nan
        out[provider] = WindowFit(provider, float(pm.exp(math.fsum(pm.log(prod)) / len(prod))), rows.height,
                                  float(prod.min()), float(prod.max()), slope)
    return out


class Persico2016(Source):
    """The measured table of Persico et al. (2016), from a mirror."""

    name = NAME
    mirror_relpath = MIRROR_RELPATH

    def parse(self, raw: RawFile) -> pl.DataFrame:
        """The measured rows, sorted by (provider, src_macro, dst_macro)."""
        return parse(raw)


SOURCE = Persico2016()
