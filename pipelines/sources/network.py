"""Network paths between every ordered pair of the registry's locations, per cloud provider.

One ``network_path`` row per (provider, src_location, dst_location), src ≠ dst, over the locations
of ``gridshift/data/locations.csv`` (a bundle fills src = dst itself: no transfer). Every number
carries its basis (``rtt_basis``, ``throughput_basis``) and the raw file it came from:

* **Locations in two different macro-regions** (US, EU, SA, AP): Persico et al. (GLOBECOM 2016,
  Figures 3 and 6) measured throughput and RTT between the macro-regions; both are kept exactly
  (``measured_persico2016``). GCP has no figures there and uses AWS's (``fallback_aws_persico2016``).
* **Locations in one macro-region** (not in the paper):

  - RTT = ``fixed_ms + inflation × 2 d / v`` (``derived_distance_azure_p50_fit``): ``d`` the
    great-circle distance between the two locations' coordinates, ``v`` = 200 km/ms in fiber,
    ``fixed_ms`` and ``inflation`` fitted to Microsoft's published P50 RTTs between the Azure regions
    the registry uses (:mod:`pipelines.sources.azure_latency`). The same model for every provider:
    it describes distance over a cloud backbone, not one provider's routing.
  - throughput = window / RTT (``derived_window_persico2016``): Persico's flows behave like a
    window-limited TCP flow, throughput × RTT ≈ constant per provider (:func:`persico.fit_window`);
    the provider's fitted constant divided by the pair's RTT (GCP: AWS's constant,
    ``derived_window_persico2016_aws``), capped at :data:`PER_FLOW_CAP_MBPS`
    (``per_flow_cap`` where the cap binds).

Rows name their source: ``persico2016`` for inter-macro rows, ``azure-rtt-p50`` for intra-macro rows
(whose throughput also depends on the Persico file: both raw files are landed with the table).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from gridshift import locations
from gridshift.errors import DataError
from gridshift.locations import PROVIDERS
from pipelines.core.raw import RawFile
from pipelines.sources import azure_latency, persico
from pipelines.sources.azure_latency import RttFit
from pipelines.sources.persico import WindowFit

#: Single-flow bandwidth limit between instances that are not in one cluster placement group: 5 Gbit/s
#: (AWS, "Amazon EC2 instance network bandwidth", EC2 User Guide). Used for every provider.
PER_FLOW_CAP_MBPS = 5000.0
#: A provider without Persico figures uses another's (the paper measured AWS and Azure only).
FALLBACK = {"gcp": "aws"}

RTT_BASES = ("measured_persico2016", "fallback_aws_persico2016", "derived_distance_azure_p50_fit")
THROUGHPUT_BASES = ("measured_persico2016", "fallback_aws_persico2016", "derived_window_persico2016",
                    "derived_window_persico2016_aws", "per_flow_cap")
COLUMNS = ["provider", "src_location", "dst_location", "src_macro", "dst_macro", "distance_km",
           "throughput_mbps", "rtt_ms", "rtt_basis", "throughput_basis", "source", "raw_sha256"]


@dataclass(frozen=True)
class NetworkModel:
    """The ``network_path`` rows and the two fits they were derived with."""

    table: pl.DataFrame
    rtt: RttFit
    windows: dict[str, WindowFit]

    def summary(self) -> dict[str, object]:
        return {
            "rtt_fixed_ms": round(self.rtt.fixed_ms, 3), "rtt_inflation": round(self.rtt.inflation, 4),
            "rtt_fit_pairs": self.rtt.n, "rtt_median_ratio": round(self.rtt.median_ratio, 3),
            "rtt_rms_residual_ms": round(self.rtt.rms_residual_ms, 2),
            **{f"window_mbit_ms_{p}": round(w.mbit_ms, 1) for p, w in self.windows.items()},
            "bases": self.table.group_by("rtt_basis", "throughput_basis").len().sort("rtt_basis", "throughput_basis")
            .rows(),
        }


def location_pairs(registry: pl.DataFrame) -> pl.DataFrame:
    """Every ordered pair of distinct locations with their macro-regions and great-circle distance."""
    locs = registry.select("location", "lat", "lon", "macro_cluster")
    pairs = (
        locs.rename(lambda c: f"src_{c}").join(locs.rename(lambda c: f"dst_{c}"), how="cross")
        .filter(pl.col("src_location") != pl.col("dst_location"))
    )
    dist = azure_latency.great_circle_km(pairs["src_lat"], pairs["src_lon"], pairs["dst_lat"], pairs["dst_lon"])
    return pairs.select(
        "src_location", "dst_location",
        src_macro=pl.col("src_macro_cluster"), dst_macro=pl.col("dst_macro_cluster"),
        distance_km=pl.Series(dist),
    )


def build(persico_raw: RawFile, azure_raw: RawFile, registry: pl.DataFrame | None = None) -> NetworkModel:
    """The ``network_path`` rows for every provider and ordered pair of distinct registry locations."""
    measured = persico.parse(persico_raw)
    rtt_fit = azure_latency.fit(azure_latency.parse(azure_raw))
    windows = persico.fit_window(measured)
    pairs = location_pairs(locations.registry_frame() if registry is None else registry)
    intra = pl.col("src_macro") == pl.col("dst_macro")
    frames = []
    for provider in PROVIDERS:
        base = provider if provider in windows else FALLBACK.get(provider)
        if base not in windows:
            raise DataError(f"no Persico figures for provider {provider!r} nor for its fallback", file=persico_raw.uri,
                            column="provider")
        own = base == provider
        meas = measured.filter(pl.col("provider") == base).drop("provider")
        df = pairs.join(meas, on=["src_macro", "dst_macro"], how="left", maintain_order="left")
        missing = df.filter(~intra & pl.col("rtt_ms").is_null())
        if missing.height:
            a, b = missing.row(0, named=True)["src_macro"], missing.row(0, named=True)["dst_macro"]
            raise DataError(f"Persico figures lack the {base} pair {a} -> {b}", file=persico_raw.uri,
                            column="src_macro", values=[f"{a} -> {b}"])
        derived_rtt = rtt_fit.rtt_ms(df["distance_km"].to_numpy())
        window_thr = windows[base].throughput_mbps(derived_rtt)
        capped = window_thr > PER_FLOW_CAP_MBPS
        df = df.with_columns(
            provider=pl.lit(provider, dtype=pl.String),
            rtt_ms=pl.when(intra).then(pl.Series(derived_rtt)).otherwise(pl.col("rtt_ms")),
            throughput_mbps=pl.when(intra).then(pl.Series(np.minimum(window_thr, PER_FLOW_CAP_MBPS)))
            .otherwise(pl.col("throughput_mbps")),
            rtt_basis=pl.when(intra).then(pl.lit("derived_distance_azure_p50_fit"))
            .otherwise(pl.lit("measured_persico2016" if own else "fallback_aws_persico2016")),
            throughput_basis=pl.when(intra & pl.Series(capped)).then(pl.lit("per_flow_cap"))
            .when(intra).then(pl.lit("derived_window_persico2016" if own else "derived_window_persico2016_aws"))
            .otherwise(pl.lit("measured_persico2016" if own else "fallback_aws_persico2016")),
            source=pl.when(intra).then(pl.lit(azure_raw.source)).otherwise(pl.lit(persico_raw.source)),
            raw_sha256=pl.when(intra).then(pl.lit(azure_raw.sha256)).otherwise(pl.lit(persico_raw.sha256)),
        )
        frames.append(df.select(COLUMNS))
    table = pl.concat(frames).sort("provider", "src_location", "dst_location")
    return NetworkModel(table, rtt_fit, windows)
