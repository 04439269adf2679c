"""Run result objects under a URL: parsing, atomic local and S3 (loopback moto server) round trips, errors."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

import polars as pl
import pytest

from gridshift import objectstore
from gridshift.errors import DataError
from gridshift.hashing import sha256_bytes
from gridshift.objectstore import ObjectNotFoundError, ObjectStoreError, StoreURLError
from gridshift.results import ResultStore, decode_run, encode_run, run_relpath
from tests.loopback import bucket_keys, loopback_only, make_bucket, s3_server

OPTIONS_JSON = '{"days":null,"forecast":"calibrated","start_step":0,"steps":2}'
#: a run's key names its options by their sha256 (an object whose options_sha256 is not that is refused)
KEY = ("0123456789abcdef", "lowest_carbon", 3, "0.1.0", sha256_bytes(OPTIONS_JSON.encode()))


@dataclass
class Record:
    key: tuple = KEY
    options_json: str = OPTIONS_JSON
    metrics: dict = field(default_factory=lambda: {"carbon_kg": 1.25, "pue": float("nan"), "cost_usd": 0.1 + 0.2})
    series: pl.DataFrame = field(default_factory=lambda: pl.DataFrame({
        "location": ["DE-LU", "DE-LU"], "step": [0, 1], "total_kwh": [1.5, 2.0],
        "ts_utc": [dt.datetime(2023, 1, 1, tzinfo=dt.UTC), dt.datetime(2023, 1, 1, 0, 15, tzinfo=dt.UTC)]}))
    n_steps: int = 2
    n_dc: int = 1


@pytest.mark.parametrize(("url", "msg"), [
    ("", "is empty"),
    ("ftp://host/x", "scheme 'ftp' is not supported"),
    ("s3://", "expected s3://bucket/prefix"),
    ("s3://key:secret@bucket/x", "'s3://***@bucket/x': no credentials in the URL"),
    ("file://user:secret@localhost/x", "'file://***@localhost/x': no credentials in the URL"),
    ("s3://bucket:9000/x", "no port in the URL"),
    ("s3://bucket/a?endpoint=x", "'s3://bucket/a?***': no query or fragment"),
    ("s3://bucket/a?X-Amz-Signature=secret", "'s3://bucket/a?***': no query or fragment"),
    ("ftp://u:secret@host/x?token=secret#secret", "'ftp://***@host/x?***': scheme 'ftp' is not supported"),
    ("s3://bucket/../x", "'.' and '..' are not allowed"),
    ("file://otherhost/x", "names no host"),
])
def test_bad_urls_are_refused_clearly(url, msg):
    with pytest.raises(StoreURLError, match="results URL .*" if url else "results URL") as err:
        ResultStore(url)
    assert msg in str(err.value)
    assert "secret" not in str(err.value)  # a refused credential is never quoted (it would reach logs)


def test_url_forms():
    assert objectstore.parse("s3://bkt/a/b/").url == "s3://bkt/a/b"
    assert objectstore.parse("s3://bkt").root == "bkt"
    assert objectstore.parse("file:///tmp/x").root == "/tmp/x"
    assert objectstore.parse("rel/dir").root == os.path.abspath("rel/dir")
    assert run_relpath(KEY) == f"bundle=0123456789abcdef/version=0.1.0/options={KEY[4]}/lowest_carbon.seed-3.parquet"
    with pytest.raises(ValueError, match="cannot name an object"):
        run_relpath(("../x", "p", 0, "v", "s"))


def test_encoding_is_deterministic_and_exact():
    a, b = encode_run(Record()), encode_run(Record())
    assert a == b
    run = decode_run(a, "mem://x", sha256=sha256_bytes(a))
    assert run.key == KEY and run.n_steps == 2 and run.n_dc == 1
    assert run.metrics["cost_usd"] == 0.1 + 0.2 and run.metrics["carbon_kg"] == 1.25  # exact floats
    assert run.metrics["pue"] != run.metrics["pue"]  # NaN survives
    assert run.series.equals(Record().series)
    assert run.options_json == Record().options_json
    with pytest.raises(DataError, match="does not match the sha256"):
        decode_run(a, "mem://x", sha256="0" * 64)
    with pytest.raises(DataError, match="not a readable Parquet"):
        decode_run(b"not parquet", "mem://x")
    import io

    import pyarrow.parquet as pq
    table = pq.read_table(io.BytesIO(a))
    for bad, msg in [(table.drop_columns(["seed"]), "one row with columns"), (pl.concat(
            [pl.from_arrow(table)] * 2).to_arrow().replace_schema_metadata(table.schema.metadata), "2 row"),
            (table.replace_schema_metadata({b"gridshift.run": b'{"format": 1}'}), "result format 1 is not 2"),
            (table.replace_schema_metadata(None), "no 'gridshift.run' footer")]:
        sink = io.BytesIO()
        pq.write_table(bad, sink)
        with pytest.raises(DataError, match=msg):
            decode_run(sink.getvalue(), "mem://bad")
    other = Record(metrics={"carbon_kg": 1.2500000000000002, "pue": float("nan"), "cost_usd": 0.1 + 0.2})
    assert encode_run(other) != a  # one ulp in a metric changes the bytes


def test_local_round_trip_and_missing_object(tmp_path):
    store = ResultStore(str(tmp_path / "res"))
    assert store.find(KEY) is None and store.lookup([KEY]) == {}
    ref = store.put(Record())
    assert ref.url == str(tmp_path / "res" / run_relpath(KEY))
    data = open(ref.url, "rb").read()  # noqa: SIM115
    assert ref.sha256 == sha256_bytes(data) and ref.size_bytes == len(data)
    assert not [p for p in (tmp_path / "res").rglob("*") if p.name.startswith(".")]  # no temp file left
    assert store.lookup([KEY])[KEY]["carbon_kg"] == 1.25
    assert store.series(KEY).equals(Record().series)
    with pytest.raises(ObjectNotFoundError, match=f"no object at {tmp_path}/res/runs/nope"):
        store.get(str(tmp_path / "res" / "runs" / "nope"))
    assert store.keys() == [KEY]


def test_reading_the_url_gives_labelled_rows(tmp_path):
    """polars (Hive), pyarrow and Dask read the URL as one dataset: one row per run, labelled by its key."""
    import dask.dataframe as dd

    url = str(tmp_path / "res")
    store = ResultStore(url)
    keys = [(KEY[0], p, s, *KEY[3:]) for p in ("lowest_carbon", "local_only") for s in (0, 7)]
    for i, k in enumerate(keys):
        store.put(Record(key=k, metrics={"carbon_kg": float(i), "pue": 1.5, "cost_usd": 2.0}))
    (tmp_path / "res" / "README.txt").write_text("not a run")  # other files under the URL are no runs
    assert store.keys() == sorted(keys)
    cols = ["bundle_id", "policy", "seed", "gridshift_version", "options_sha256", "forecast", "carbon_kg"]
    want = pl.DataFrame([(*k, "calibrated", float(i)) for i, k in enumerate(keys)], schema=cols, orient="row")
    scanned = pl.scan_parquet(f"{url}/**/*.parquet", hive_partitioning=True)
    assert {"bundle", "version", "options"} <= set(scanned.collect_schema())  # the Hive keys of the path
    assert scanned.select(cols).sort("policy", "seed").collect().equals(want.sort("policy", "seed"))
    got = dd.read_parquet(url, columns=cols).compute().sort_values(["policy", "seed"]).reset_index(drop=True)
    assert got.to_dict("list") == want.sort("policy", "seed").to_pandas().to_dict("list")
    # the series rides along as a list of structs: exploded, it is the run's per-step, per-DC frame
    one = scanned.filter(pl.col("policy") == "local_only", pl.col("seed") == 7).select("series").collect()
    assert one.explode("series").unnest("series").equals(Record().series)


def test_s3_round_trip_through_a_loopback_server(tmp_path):
    with s3_server() as endpoint, loopback_only():
        assert endpoint.startswith("http://127.0.0.1:")
        make_bucket(endpoint, "gridshift-results")
        store = ResultStore("s3://gridshift-results/sweeps/a")
        assert store.find(KEY) is None
        ref = store.put(Record())
        assert ref.url == f"s3://gridshift-results/sweeps/a/{run_relpath(KEY)}"
        assert bucket_keys(endpoint, "gridshift-results") == [f"sweeps/a/{run_relpath(KEY)}"]
        assert objectstore.read_bytes(ref.url) == encode_run(Record())  # the bytes that were put
        run = store.get(ref.url, sha256=ref.sha256)
        assert run.key == KEY and run.series.equals(Record().series) and run.metrics["carbon_kg"] == 1.25
        # seed 4: absent (repr: NaN == NaN, floats exact)
        assert repr(store.lookup([KEY, (*KEY[:2], 4, *KEY[3:])])) == repr({KEY: run.metrics})
        assert store.keys() == [KEY]
        # a missing object and a missing bucket are clear errors naming the URL
        with pytest.raises(ObjectNotFoundError, match="no object at s3://gridshift-results/sweeps/a/runs/x"):
            store.get("s3://gridshift-results/sweeps/a/runs/x")
        with pytest.raises(ObjectNotFoundError, match="no object at s3://no-such-bucket/k"):
            objectstore.read_bytes("s3://no-such-bucket/k")
        with pytest.raises(ObjectStoreError, match="cannot write s3://no-such-bucket/"):
            ResultStore("s3://no-such-bucket").put(Record())
        # the credentials came from the environment only: nothing of them is in the object or its URL
        secret = os.environ["AWS_SECRET_ACCESS_KEY"].encode()
        assert secret not in objectstore.read_bytes(ref.url) and secret.decode() not in ref.url
