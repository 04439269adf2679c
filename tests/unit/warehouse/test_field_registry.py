"""Each contract once: the warehouse's Pandera models, its DuckDB DDL and the bundle's Parquet schemas are the
field registry's tables (``gridshift.fields``), column by column, and a column the warehouse and a bundle
share is admitted by one rule in both."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandera.polars as pa
import polars as pl
import pyarrow.parquet as pq
import pytest

import sim_core
from gridshift.bundle import format as bundle_format
from gridshift.bundle import verify_bundle
from gridshift.fields import FIELDS, FLOAT, Field, TableSpec, table
from tests.unit.gridshift.bundle_hostile import rewrite_parquet, valid_bundle
from warehouse.ddl import DUCK_TYPES, create_table_sql
from warehouse.load import validate
from warehouse.schemas import FRAMES, TABLES

WAREHOUSE = {**TABLES, **FRAMES}


def _expected_checks(f: Field) -> set[tuple[str, str]]:
    """The Pandera checks a registry field stands for: (check name, its statistic), as Pandera names them."""
    out = set()
    if f.bound is not None:
        low = "greater_than_or_equal_to" if f.bound.low_inclusive else "greater_than"
        out.add((low, repr(f.bound.low)))
        if math.isfinite(f.bound.high):
            out.add(("less_than_or_equal_to", repr(f.bound.high)))
    if f.pattern is not None:
        out.add(("str_matches", repr(f.pattern)))
    if f.isin is not None:
        out.add(("isin", repr(sorted(f.isin))))
    return out


def _model_checks(column: pa.Column) -> set[tuple[str, str]]:
    out = set()
    for check in column.checks:
        (stat,) = check.statistics.values()
        out.add((check.name, repr(sorted(stat) if check.name == "isin" else stat)))
    return out


@pytest.mark.parametrize("name", sorted(WAREHOUSE))
def test_the_pandera_model_is_the_registry_table(name):
    t = WAREHOUSE[name]
    schema = t.model.to_schema()
    assert list(schema.columns) == t.spec.columns
    assert schema.strict is True and list(t.model.Config.unique) == list(t.spec.primary_key)
    for f in t.spec.fields:
        col = schema.columns[f.name]
        assert col.dtype.type == f.polars_dtype, (name, f.name)
        assert col.nullable == f.nullable, (name, f.name)
        assert _model_checks(col) == _expected_checks(f), (name, f.name)
        assert (col.metadata or {}).get("unit") == f.unit, (name, f.name)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_duckdb_table_is_the_registry_table(name):
    t = TABLES[name]
    con = duckdb.connect()
    con.execute(create_table_sql(t))
    described = con.execute(f'DESCRIBE "{name}"').fetchall()  # name, type, null, key, default, extra
    assert [r[0] for r in described] == t.spec.columns
    assert {r[0]: r[1] for r in described} == {f.name: DUCK_TYPES[f.dtype].replace("TIMESTAMPTZ",
                                                                                      "TIMESTAMP WITH TIME ZONE")
                                                for f in t.spec.fields}
    pk = set(t.spec.primary_key)
    # a primary key column is NOT NULL whatever the field says; every other column follows its field
    assert {r[0]: r[2] for r in described} == {f.name: "NO" if (f.name in pk or not f.nullable) else "YES"
                                               for f in t.spec.fields}
    (key,) = con.execute("SELECT constraint_column_names FROM duckdb_constraints() "
                         "WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'", [name]).fetchone()
    assert tuple(key) == t.spec.primary_key


def test_the_bundle_files_are_written_with_the_registry_schemas(tmp_path):
    bundle = valid_bundle(tmp_path / "b")
    for spec in bundle_format.TABLES.values():
        written = pq.read_schema(bundle / spec.name)
        assert written.names == spec.columns
        assert [written.field(c).type for c in spec.columns] == [f.arrow_type for f in spec.fields]
        assert dict(pl.read_parquet_schema(bundle / spec.name)) == spec.polars_schema()


def _edges(f: Field) -> list[float]:
    b = f.bound
    vals = [b.low, float(np.nextafter(b.low, -np.inf)), float(np.nextafter(b.low, np.inf)), math.nan, math.inf]
    return vals + ([b.high, float(np.nextafter(b.high, np.inf))] if math.isfinite(b.high) else [])


def _shared_bounded() -> list[tuple[str, str]]:
    """(warehouse table, column) of every float column the bundle reader checks against its bound."""
    bundle_cols = {f.name for spec in bundle_format.TABLES.values() for f in spec.fields if f.dtype == FLOAT}
    return sorted({(t, f.name) for t, tb in WAREHOUSE.items() for f in tb.spec.fields if f.name in bundle_cols})


@pytest.mark.parametrize("table_name, column", _shared_bounded())
def test_a_column_shared_with_bundles_has_one_rule(table_name, column):
    """At each edge of the column's bound (and NaN, inf), the warehouse model admits a value exactly when the
    bundle reader's rule does: a bundle the warehouse could never have produced is refused, and nothing the
    warehouse holds is refused on its way into a bundle (before the registry, the warehouse refused an RTT of
    0 ms that bundles admit)."""
    col = WAREHOUSE[table_name].model.to_schema().columns[column]
    rule = FIELDS[column].bound
    for v in _edges(FIELDS[column]):
        try:
            col.validate(pl.DataFrame({column: [v]}))
            warehouse_ok = True
        except (pa.errors.SchemaError, pa.errors.SchemaErrors):
            warehouse_ok = False
        assert warehouse_ok == (math.isfinite(v) and rule.admits(v)), (table_name, column, v)


def test_an_rtt_of_zero_passes_the_warehouse_and_a_bundle(tmp_path):
    """0 ms is what a bundle carries from a datacenter to itself, and what two sites closer than the model's
    resolution may carry: both the network_path table and the bundle reader admit it."""
    row = {"provider": "aws", "src_location": "DE-LU", "dst_location": "FR", "src_macro": "EU", "dst_macro": "EU",
           "distance_km": 0.0, "throughput_mbps": 1000.0, "rtt_ms": 0.0, "rtt_basis": "derived_distance_azure_p50_fit",
           "throughput_basis": "per_flow_cap", "source": "azure-rtt-p50", "raw_sha256": "0" * 64}
    assert validate("network_path", pl.DataFrame([row]))["rtt_ms"].to_list() == [0.0]
    bundle = valid_bundle(tmp_path / "b")
    rewrite_parquet(bundle, "network.parquet", lambda df: df.with_columns(rtt_ms=pl.lit(0.0)))
    assert verify_bundle(bundle).ok
    assert (sim_core.load(bundle).rtt_ms == 0.0).all()


def test_a_table_cannot_redeclare_a_fields_contract():
    with pytest.raises(ValueError, match="may not change"):
        FIELDS["rtt_ms"].but(bound=None)
    with pytest.raises(ValueError, match="may not change"):
        FIELDS["provider"].but(isin=("aws",))
    redeclared = Field("rtt_ms", "float64", bound=None)
    with pytest.raises(ValueError, match="redeclares the contract of field 'rtt_ms'"):
        table("t", "", [redeclared], ["rtt_ms"])
    with pytest.raises(ValueError, match="a key outside them"):
        TableSpec("t", "", (FIELDS["rtt_ms"],), ("provider",))
