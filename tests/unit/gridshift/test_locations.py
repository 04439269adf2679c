"""Location codes as users type them: any letter case, a suggestion for a near miss, a refusal naming the code."""

from __future__ import annotations

import pytest

from gridshift.errors import GridshiftError
from gridshift.locations import get, parse_codes


def test_codes_in_any_case_give_the_canonical_location():
    assert get("us-cal-ciso").location == "US-CAL-CISO"
    assert get(" De-Lu ").location == "DE-LU"
    assert parse_codes("us-cal-ciso,DE-LU,sg,de-lu") == ["US-CAL-CISO", "DE-LU", "SG"]


def test_a_near_miss_is_answered_with_the_closest_codes():
    with pytest.raises(GridshiftError, match=r"unknown location 'US-CAL-CSIO'; did you mean US-CAL-CISO\?"):
        get("US-CAL-CSIO")
    with pytest.raises(GridshiftError, match=r"did you mean DE-LU"):
        parse_codes("SG,DE-LX")


def test_no_suggestion_when_nothing_is_close_and_a_malformed_code_is_named():
    with pytest.raises(GridshiftError) as err:
        get("XX-NOWHERE")
    assert "did you mean" not in str(err.value) and "known: " in str(err.value)
    with pytest.raises(GridshiftError, match=r"malformed location code 'US CAL'"):
        get("US CAL")
