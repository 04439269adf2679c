"""Electricity Maps hourly carbon intensity: the yearly per-zone CSV export (ODbL-1.0).

Mirror layout: ``electricitymaps/<LOCATION>/<LOCATION>_<YEAR>_hourly.csv``. The ``Zone Id``
inside can differ from the location code (BR-SP carries BR-CS, DE-LU carries DE): it must match
the registry's ``emaps_zone``. Estimated rows are kept and flagged, never dropped.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from gridshift.errors import DataError
from gridshift.locations import Location
from pipelines.raw import RawFile
from pipelines.tabular import DEFAULT_MAX_GAP, check_time_grid, read_csv_strings, to_float, to_utc

SOURCE = "electricitymaps-csv"
LICENSE = "ODbL-1.0; attribution: Electricity Maps (https://www.electricitymaps.com)"
COL_TS = "Datetime (UTC)"
COL_ZONE = "Zone Id"
COL_DIRECT = "Carbon Intensity gCO₂eq/kWh (direct)"
COL_LCA = "Carbon Intensity gCO₂eq/kWh (LCA)"
COL_LOW = "Low Carbon Percentage"
COL_RENEW = "Renewable Percentage"
COL_EST = "Data Estimated"
COL_METHOD = "Data Estimation Method"
REQUIRED = [COL_TS, COL_ZONE, COL_DIRECT, COL_LCA, COL_LOW, COL_RENEW, COL_EST, COL_METHOD]


def mirror_relpath(location: Location, year: int) -> str:
    code = location.location
    return f"electricitymaps/{code}/{code}_{year}_hourly.csv"


def parse(raw: RawFile, location: Location, *, max_gap: timedelta = DEFAULT_MAX_GAP) -> pl.DataFrame:
    """Parse one export into ``grid_carbon`` rows (UTC, explicit units)."""
    file = raw.uri
    df = read_csv_strings(raw.content, file, REQUIRED)
    zone_ok = df[COL_ZONE] == location.emaps_zone
    if not zone_ok.all():
        bad = df.with_row_index("_i").filter(~zone_ok)
        raise DataError(
            f"zone id does not match location {location.location} (expected {location.emaps_zone!r})",
            file=file,
            column=COL_ZONE,
            rows=[i + 2 for i in bad["_i"].head(10).to_list()],
            values=bad[COL_ZONE].head(10).to_list(),
        )
    est = df[COL_EST].str.strip_chars().str.to_lowercase()
    est_ok = est.is_in(["true", "false"])
    if not est_ok.all():
        bad = df.with_row_index("_i").filter(~est_ok)
        raise DataError(
            "estimated flag must be true or false",
            file=file,
            column=COL_EST,
            rows=[i + 2 for i in bad["_i"].head(10).to_list()],
            values=bad[COL_EST].head(10).to_list(),
        )
    ts = to_utc(df, COL_TS, file, "%Y-%m-%d %H:%M:%S")
    check_time_grid(ts, file, COL_TS, step=timedelta(hours=1), max_gap=max_gap)
    method = df[COL_METHOD].str.strip_chars()
    return pl.DataFrame(
        {
            "location": pl.Series([location.location] * df.height, dtype=pl.String),
            "ts_utc": ts,
            "carbon_direct_g_per_kwh": to_float(df, COL_DIRECT, file, required=True),
            "carbon_lca_g_per_kwh": to_float(df, COL_LCA, file),
            "low_carbon_pct": to_float(df, COL_LOW, file),
            "renewable_pct": to_float(df, COL_RENEW, file),
            "is_estimated": est == "true",
            "estimation_method": method.replace("", None),
            "emaps_zone": df[COL_ZONE],
            "source": pl.Series([SOURCE] * df.height, dtype=pl.String),
            "raw_sha256": pl.Series([raw.sha256] * df.height, dtype=pl.String),
        }
    )  # file order kept, so validation errors point at file lines
