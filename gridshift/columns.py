"""Column declarations shared by the warehouse's Pandera models: each rule is written once here.

A model declares a column with one of these functions (``raw_sha256: str = sha256()``), so the
pattern of a sha256, the form of a UTC timestamp, a location code or a workload name cannot drift
between tables. Every function returns a fresh ``pandera.Field`` (a field object belongs to one
model); keyword arguments are passed through (``description``, ``nullable``...).
"""

from __future__ import annotations

from typing import Any

import pandera.polars as pa
from pandera.engines.polars_engine import DateTime

from gridshift import bounds
from gridshift.locations import LOCATION_CODE, MACRO_CLUSTERS, PROVIDERS

#: The type of every timestamp column (always with ``utc(...)``: microseconds, time zone UTC).
UtcDatetime = DateTime

SHA256_PATTERN = r"^[0-9a-f]{64}$"
WORKLOAD_NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
RUN_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$"


def sha256(description: str = "sha256 of the raw file the row came from", **kw: Any) -> Any:
    return pa.Field(str_matches=SHA256_PATTERN, description=description, **kw)


def utc(description: str, **kw: Any) -> Any:
    """A timezone-aware UTC timestamp (microseconds); interval start unless the description says otherwise."""
    return pa.Field(dtype_kwargs={"time_unit": "us", "time_zone": "UTC"}, description=description, **kw)


def location(description: str = "gridshift location code (gridshift/data/locations.csv)", **kw: Any) -> Any:
    return pa.Field(str_matches=LOCATION_CODE.pattern, description=description, **kw)


def provider(**kw: Any) -> Any:
    return pa.Field(isin=list(PROVIDERS), description="cloud provider", **kw)


def macro_cluster(**kw: Any) -> Any:
    return pa.Field(isin=list(MACRO_CLUSTERS), description="macro-region of the network model", **kw)


def workload_name(**kw: Any) -> Any:
    return pa.Field(str_matches=WORKLOAD_NAME_PATTERN, description="workload id", **kw)


def year(**kw: Any) -> Any:
    return pa.Field(ge=1970, le=2200, description="UTC year", **kw)


def currency(description: str, **kw: Any) -> Any:
    """An ISO 4217 currency code."""
    return pa.Field(str_matches=r"^[A-Z]{3}$", description=description, **kw)


def source(**kw: Any) -> Any:
    return pa.Field(description="source id (gridshift.sources)", **kw)


def run_name(description: str, **kw: Any) -> Any:
    return pa.Field(str_matches=RUN_NAME_PATTERN, description=description, **kw)


def bounded(name: str, description: str = "", **kw: Any) -> Any:
    """A numeric column within ``gridshift.bounds.BOUNDS[name]`` (finite: ±inf and NaN fail); the
    bound and its reason go into the description."""
    b = bounds.get(name)
    low = {"ge": b.low} if b.low_inclusive else {"gt": b.low}
    text = f"{description} (in {b.describe()}: {b.reason})" if description else f"in {b.describe()}: {b.reason}"
    return pa.Field(**low, le=b.high, description=text, **kw)
