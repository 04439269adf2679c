"""Pandera (polars) models generated from the field registry (``gridshift.fields``), never written by hand.

Each table's model is a real ``DataFrameModel`` subclass (the validation before every write, the Dagster
asset checks and the tests use it): strict, ``Config.unique`` = the table's primary key, and per column the
registry's dtype, nullability, range (``ge``/``gt`` and ``le``), pattern or allowed values, with the unit
and the range's reason in the field's metadata and description.
"""

from __future__ import annotations

import math
from typing import Any

import pandera.polars as pa
from pandera.engines.polars_engine import DateTime

from gridshift.fields import BOOL, FLOAT, INT, STRING, UTC, Field, TableSpec

_ANNOTATION: dict[str, Any] = {FLOAT: float, INT: int, STRING: str, BOOL: bool, UTC: DateTime}


def pandera_field(f: Field) -> Any:
    """The ``pandera.Field`` of one registry field (a fresh object: a field belongs to one model)."""
    kw: dict[str, Any] = {"nullable": f.nullable}
    description = f.description
    if f.bound is not None:
        b = f.bound
        kw["ge" if b.low_inclusive else "gt"] = b.low
        if math.isfinite(b.high):
            kw["le"] = b.high
        description = f"{description} (in {b.describe()}: {b.reason})"
    if f.pattern is not None:
        kw["str_matches"] = f.pattern
    if f.isin is not None:
        kw["isin"] = list(f.isin)
    if f.dtype == UTC:
        kw["dtype_kwargs"] = {"time_unit": "us", "time_zone": "UTC"}
    metadata = {**({"unit": f.unit} if f.unit else {}), **f.metadata}
    return pa.Field(description=description, metadata=metadata or None, **kw)


def dataframe_model(spec: TableSpec, class_name: str) -> type[pa.DataFrameModel]:
    """The table's ``DataFrameModel``, named ``class_name`` (its docstring: the table's description)."""
    namespace: dict[str, Any] = {
        "__doc__": spec.description,
        "__module__": __name__,
        "__qualname__": class_name,
        "__annotations__": {f.name: _ANNOTATION[f.dtype] for f in spec.fields},
        **{f.name: pandera_field(f) for f in spec.fields},
        "Config": type("Config", (), {"strict": True, "unique": list(spec.primary_key)}),
    }
    return type(class_name, (pa.DataFrameModel,), namespace)
