"""The cloud-region registry: every shipped region checked, zones resolved to locations, bad files refused
with the file, column, row and value."""

from __future__ import annotations

import pytest

from gridshift import cloud_regions as C
from gridshift import locations
from gridshift.errors import DataError, GridshiftError

HEAD = ",".join(C.COLUMNS)
GOOD = "aws,us-east-1,US-MIDA-PJM,Northern Virginia,39.04,-77.49,city,https://docs.aws.amazon.com/x"


def test_shipped_registry_resolves_every_covered_zone_to_its_location():
    reg = C.registry()
    assert len(reg) >= 50 and {r.provider for r in reg.values()} == set(locations.PROVIDERS)
    assert C.location_of(reg["aws:us-east-1"]) == "US-MIDA-PJM"  # Northern Virginia is in PJM
    assert C.location_of(reg["aws:eu-central-1"]) == "DE-LU"  # zone DE is the DE-LU location's zone
    assert C.location_of(reg["gcp:southamerica-west1"]) == "CL-SIC"  # zone CL-SEN
    for r in reg.values():
        if r.emaps_zone in {locations.get(c).emaps_zone for c in locations.all_codes()}:
            assert locations.get(C.location_of(r)).emaps_zone == r.emaps_zone


def test_a_zone_no_location_covers_is_refused_with_what_to_add():
    with pytest.raises(GridshiftError, match="aws:eu-west-1 is in zone IE.*add a location row"):
        C.location_of(C.get("aws:eu-west-1"))
    with pytest.raises(GridshiftError, match="unknown cloud region 'aws:mars-1'.*aws:us-east-1"):
        C.get("aws:mars-1")


@pytest.mark.parametrize(("row", "column", "value"), [
    (GOOD.replace("aws,", "ibm,", 1), "provider", "ibm"),
    (GOOD.replace("us-east-1", "US East!"), "region_id", "US East!"),
    (GOOD.replace("39.04", "91.5"), "lat", "91.5"),
    (GOOD.replace("-77.49", "east"), "lon", "east"),
    (GOOD.replace("US-MIDA-PJM", "pjm"), "emaps_zone", "pjm"),
    (GOOD.replace(",city,", ",guess,"), "coord_source", "guess"),
    (GOOD.replace("https://", "http://"), "source_url", "http://docs.aws.amazon.com/x"),
    (GOOD.replace("Northern Virginia", ""), "city", ""),
])
def test_bad_region_file_names_file_row_column_value(tmp_path, row, column, value):
    p = tmp_path / "regions.csv"
    p.write_text(f"# a comment\n{HEAD}\n{GOOD.replace('us-east-1', 'us-east-2')}\n{row}\n")
    with pytest.raises(DataError) as exc:
        C.registry(p)
    e = exc.value
    assert e.file == str(p) and e.column == column and list(e.rows) == [2]
    assert list(e.values) == [value or None] or list(e.values) == [value]
    assert str(p) in str(e) and column in str(e)


def test_duplicated_region_and_wrong_header_are_refused(tmp_path):
    p = tmp_path / "regions.csv"
    p.write_text(f"{HEAD}\n{GOOD}\n{GOOD}\n")
    with pytest.raises(DataError, match="listed twice") as exc:
        C.registry(p)
    assert list(exc.value.rows) == [1, 2]
    p.write_text("provider,region\naws,us-east-1\n")
    with pytest.raises(DataError, match="columns"):
        C.registry(p)
