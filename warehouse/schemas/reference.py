"""Reference tables: raw landings, locations, cloud egress prices, network paths."""

from __future__ import annotations

import pandera.polars as pa

from gridshift import columns as C
from gridshift.columns import UtcDatetime


class RawFiles(pa.DataFrameModel):
    """Every raw upstream file landed, named by its sha256 (lineage for every row)."""

    sha256: str = C.sha256("sha256 of the landed bytes")
    source: str = C.source()
    uri: str
    bytes: int = pa.Field(ge=0)
    fetched_at: UtcDatetime = C.utc("UTC")
    path: str = pa.Field(description="landed path relative to the gridshift home")

    class Config:
        strict = True
        unique = ["sha256"]


class Locations(pa.DataFrameModel):
    """The location registry (gridshift/data/locations.csv)."""

    location: str = C.location()
    emaps_zone: str
    market: str
    price_currency: str = C.currency("currency of the market's prices")
    entsoe_area: str = pa.Field(nullable=True)
    iso_market: str = pa.Field(nullable=True)
    timezone: str
    weather_place: str
    lat: float = pa.Field(ge=-90, le=90, metadata={"unit": "deg"})
    lon: float = pa.Field(ge=-180, le=180, metadata={"unit": "deg"})
    macro_cluster: str = C.macro_cluster()
    aws_region: str
    gcp_region: str
    azure_region: str
    price_data: str = pa.Field(isin=["yes", "partial", "no"])
    carbon_data: str = pa.Field(isin=["yes", "partial", "no"])
    weather_data: str = pa.Field(isin=["yes", "partial", "no"])

    class Config:
        strict = True
        unique = ["location"]


class EgressPrice(pa.DataFrameModel):
    """Cloud inter-region data transfer price, USD per GB, from the provider's matrix."""

    provider: str = C.provider()
    src_region: str
    dst_region: str
    usd_per_gb: float = pa.Field(ge=0, le=10, metadata={"unit": "USD/GB"})
    source: str = C.source()
    raw_sha256: str = C.sha256()

    class Config:
        strict = True
        unique = ["provider", "src_region", "dst_region"]


class NetworkPath(pa.DataFrameModel):
    """Inter-macro-region throughput and RTT per provider (Persico et al. 2016, plus stated assumptions)."""

    provider: str = C.provider()
    src_macro: str = C.macro_cluster()
    dst_macro: str = C.macro_cluster()
    throughput_mbps: float = pa.Field(gt=0, metadata={"unit": "Mbit/s"})
    rtt_ms: float = pa.Field(ge=0, metadata={"unit": "ms"})
    basis: str = pa.Field(
        isin=["measured", "assumption_intra_macro", "fallback_aws"],
        description="measured (Persico 2016 Fig. 3/6), or a documented assumption",
    )
    source: str = C.source()
    raw_sha256: str = C.sha256()

    class Config:
        strict = True
        unique = ["provider", "src_macro", "dst_macro"]
