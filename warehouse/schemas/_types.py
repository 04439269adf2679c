"""Column types shared by the schema modules."""

from pandera.engines.polars_engine import DateTime

UTC_TS = {"dtype_kwargs": {"time_unit": "us", "time_zone": "UTC"}}
UtcDatetime = DateTime
