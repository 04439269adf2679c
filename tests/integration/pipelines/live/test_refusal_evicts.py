"""A refused answer does not stay in the HTTP cache: after the publisher fixes the file, the rerun asks again.

The fake serves, once, a body its transfer cannot give away (a 200 with its own matching Content-Length):
the first 4,000 hours of the real DE-LU 2023 export (refused for coverage), or the whole year with one
value the table's model refuses, or with another zone's id (refused by the parser). The next request gets
the real file.
"""

from __future__ import annotations

import pytest

from gridshift.errors import DataError
from gridshift.home import Home
from pipelines.core import http
from warehouse.db import read_table
from warehouse.ingest import ingest_grid, prepare_grid

CSV = "electricitymaps/DE-LU/DE-LU_2023_hourly.csv"


def _lines(shared_data) -> list[bytes]:
    return (shared_data / CSV).read_bytes().splitlines(keepends=True)


def _truncated(lines: list[bytes]) -> bytes:
    return b"".join(lines[:4001])  # the header and 4,000 hours


def _negative_value(lines: list[bytes]) -> bytes:
    first = lines[1].replace(b",140.51,", b",-140.51,")  # 2023-01-01 00:00, direct intensity
    assert first != lines[1]
    return b"".join([lines[0], first, *lines[2:]])


def _other_zone(lines: list[bytes]) -> bytes:
    return b"".join([lines[0], *(ln.replace(b",DE,", b",FR,", 1) for ln in lines[1:])])


@pytest.mark.parametrize("body,refusal", [
    (_truncated, r"covers 45\.66% of the UTC year"),
    (_negative_value, r"carbon_direct_g_per_kwh"),
    (_other_zone, r"zone id does not match"),
], ids=["truncated-coverage", "model-check", "parser-check"])
def test_a_refused_answer_is_evicted_and_the_rerun_fetches_again(fake, tmp_path, shared_data, body, refusal):
    home = Home(tmp_path / "home")
    fake.state.add_fault("/emaps-csv/", "body", body(_lines(shared_data)))
    with pytest.raises(DataError, match=refusal):
        ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert fake.state.count("/emaps-csv/") == 1
    with http.make_session(home) as s:  # nothing of the refused answer is left in the cache
        assert list(s.cache.responses.keys()) == []
    rep = ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=None, live=True)  # the publisher fixed it
    assert fake.state.count("/emaps-csv/") == 2 and rep.rows == 8760 and rep.coverage == 1.0
    assert read_table(home.warehouse_path, "SELECT count(*) FROM grid_carbon").item() == 8760
    ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=None, live=True)  # the accepted answer is cached
    assert fake.state.count("/emaps-csv/") == 2


def test_in_a_batch_only_the_refused_partitions_answer_is_evicted(fake, tmp_path, shared_data):
    home = Home(tmp_path / "home")
    fake.state.add_fault("/emaps-csv/DE_", "body", _truncated(_lines(shared_data)))
    batch = prepare_grid("carbon", [("DE-LU", 2023), ("US-CAL-CISO", 2023)], home=home, mirror=None, live=True)
    assert [p.location for p in batch.ready] == ["US-CAL-CISO"] and list(batch.refused) == [("DE-LU", 2023)]
    with http.make_session(home) as s:
        assert len(list(s.cache.responses.keys())) == 1  # the accepted one stays
    prepare_grid("carbon", [("DE-LU", 2023), ("US-CAL-CISO", 2023)], home=home, mirror=None, live=True)
    assert fake.state.count("/emaps-csv/DE_") == 2 and fake.state.count("/emaps-csv/US-CAL-CISO_") == 1
