"""Grid signals: carbon intensity, price, weather. Every ts_utc is UTC, interval start."""

from __future__ import annotations

import pandera.polars as pa

from gridshift import columns as C
from gridshift.columns import UtcDatetime
from gridshift.sources import SIGNALS


class GridCarbon(pa.DataFrameModel):
    """Hourly grid carbon intensity per location (Electricity Maps)."""

    location: str = C.location()
    ts_utc: UtcDatetime = C.utc("interval start, UTC")
    carbon_direct_g_per_kwh: float = pa.Field(ge=0, le=5000, nullable=True, metadata={"unit": "gCO2eq/kWh"})
    carbon_lca_g_per_kwh: float = pa.Field(ge=0, le=5000, nullable=True, metadata={"unit": "gCO2eq/kWh"})
    low_carbon_pct: float = pa.Field(ge=0, le=100, nullable=True, metadata={"unit": "%"})
    renewable_pct: float = pa.Field(ge=0, le=100, nullable=True, metadata={"unit": "%"})
    is_estimated: bool = pa.Field(description="the source marked this value as estimated")
    estimation_method: str = pa.Field(nullable=True)
    emaps_zone: str = pa.Field(description="Electricity Maps zone id found in the source")
    source: str = C.source()
    raw_sha256: str = C.sha256()

    class Config:
        strict = True
        unique = ["location", "ts_utc"]


class GridPrice(pa.DataFrameModel):
    """Electricity price per location and market interval. Negative prices and spikes are real."""

    location: str = C.location()
    ts_utc: UtcDatetime = C.utc("market interval start, UTC")
    price_usd_per_mwh: float = pa.Field(ge=-10_000, le=100_000, metadata={"unit": "USD/MWh"})
    price_local_per_mwh: float = pa.Field(
        ge=-100_000_000, le=1_000_000_000, metadata={"unit": "currency/MWh, as published"}
    )
    currency: str = C.currency("currency of price_local_per_mwh")
    usd_per_local: float = pa.Field(gt=0, description="exchange rate used: USD per unit of currency")
    resolution_min: int = pa.Field(isin=[5, 15, 30, 60], metadata={"unit": "min"})
    source: str = C.source()
    raw_sha256: str = C.sha256()

    class Config:
        strict = True
        unique = ["location", "ts_utc"]


class Weather(pa.DataFrameModel):
    """Hourly weather at the location's weather coordinates (Open-Meteo archive)."""

    location: str = C.location()
    ts_utc: UtcDatetime = C.utc("hour start, UTC")
    temp_c: float = pa.Field(ge=-90, le=60, metadata={"unit": "°C"})
    rh_pct: float = pa.Field(ge=0, le=100, metadata={"unit": "%"})
    wetbulb_c: float = pa.Field(ge=-90, le=60, metadata={"unit": "°C", "method": "Stull 2011"})
    cloudcover_pct: float = pa.Field(ge=0, le=100, nullable=True, metadata={"unit": "%"})
    windspeed_kmh: float = pa.Field(ge=0, le=500, nullable=True, metadata={"unit": "km/h"})
    source: str = C.source()
    raw_sha256: str = C.sha256()

    class Config:
        strict = True
        unique = ["location", "ts_utc"]


class PartitionQuality(pa.DataFrameModel):
    """What the last ingest of each grid partition (signal × location × UTC year) held: its raw file,
    rows, coverage of the year and, when it was below ``gridshift.quality.MIN_COVERAGE``, that it was
    ingested anyway on request (``partial``); likewise the plausibility checks it was let past
    (``plausibility_overridden``)."""

    signal: str = pa.Field(isin=list(SIGNALS), description="grid signal kind (gridshift.sources.SIGNALS)")
    location: str = C.location()
    year: int = C.year()
    source: str = C.source()
    raw_sha256: str = C.sha256()
    rows: int = pa.Field(ge=1, metadata={"unit": "rows"}, description="rows of the file (edges included)")
    present: int = pa.Field(ge=0, metadata={"unit": "intervals"}, description="rows inside the UTC year")
    expected: int = pa.Field(ge=1, metadata={"unit": "intervals"}, description="intervals of the UTC year")
    coverage_frac: float = pa.Field(ge=0, le=1, metadata={"unit": "fraction"}, description="present / expected")
    estimated_frac: float = pa.Field(ge=0, le=1, nullable=True, metadata={"unit": "fraction"},
                                     description="share of the year's rows the source marked estimated")
    partial: bool = pa.Field(description="coverage below the minimum, ingested with allow_partial")
    plausibility_overridden: str = pa.Field(
        nullable=True, description="the plausibility checks (pipelines.core.plausibility) the partition failed and "
        "was ingested anyway with allow_implausible, comma-separated; null when it passed them all")

    class Config:
        strict = True
        unique = ["signal", "location", "year"]
