"""Grid signals: carbon intensity, price, weather. Every ts_utc is UTC, interval start.

The tables list fields of the registry (``gridshift.fields``); their Pandera models are generated from it.
"""

from __future__ import annotations

from gridshift.fields import FIELDS, table
from warehouse.schemas.models import dataframe_model

_TS = FIELDS["ts_utc"]

GRID_CARBON = table(
    "grid_carbon", "Hourly grid carbon intensity per location (Electricity Maps).",
    ["location", "ts_utc", "carbon_direct_g_per_kwh", "carbon_lca_g_per_kwh", "low_carbon_pct", "renewable_pct",
     "is_estimated", "estimation_method", FIELDS["emaps_zone"].but(description="Electricity Maps zone id found in "
                                                                             "the source"),
     "source", "raw_sha256"],
    ["location", "ts_utc"])

GRID_PRICE = table(
    "grid_price", "Electricity price per location and market interval. Negative prices and spikes are real.",
    ["location", _TS.but(description="market interval start, UTC"), "price_usd_per_mwh", "price_local_per_mwh",
     "currency", "usd_per_local", "resolution_min", "source", "raw_sha256"],
    ["location", "ts_utc"])

WEATHER = table(
    "weather", "Hourly weather at the location's weather coordinates (Open-Meteo archive).",
    ["location", _TS.but(description="hour start, UTC"), "temp_c", "rh_pct", "wetbulb_c", "cloudcover_pct",
     "windspeed_kmh", "source", "raw_sha256"],
    ["location", "ts_utc"])

PARTITION_QUALITY = table(
    "partition_quality",
    "What the last ingest of each grid partition (signal × location × UTC year) held: its raw file, rows, "
    "coverage of the year and, when it was below ``gridshift.quality.MIN_COVERAGE``, that it was ingested "
    "anyway on request (``partial``); likewise the plausibility checks it was let past "
    "(``plausibility_overridden``).",
    ["signal", "location", "year", "source", "raw_sha256", "rows", "present", "expected", "coverage_frac",
     "estimated_frac", "partial", "plausibility_overridden"],
    ["signal", "location", "year"])

GridCarbon = dataframe_model(GRID_CARBON, "GridCarbon")
GridPrice = dataframe_model(GRID_PRICE, "GridPrice")
Weather = dataframe_model(WEATHER, "Weather")
PartitionQuality = dataframe_model(PARTITION_QUALITY, "PartitionQuality")
