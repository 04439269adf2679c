"""The source registry: every entry complete, tokens declared once, credits refuse unknown names."""

from __future__ import annotations

import pytest

from gridshift import sources


def test_every_source_declares_its_terms_and_where_it_comes_from():
    for s in sources.SOURCES:
        assert s.licence and s.attribution and s.url.startswith("https://"), s.name
        assert s.table in {"grid_carbon", "grid_price", "weather", "egress_price", "network_path", "trace_tasks",
                           "workload_tasks"}, s.name
        assert s.credit() == {"source": s.name, "licence": s.licence, "attribution": s.attribution, "url": s.url}
    assert sources.get("open-meteo-archive").licence == "CC-BY-4.0"
    assert sources.get("electricitymaps-csv").licence == "ODbL-1.0"


def test_tokens_are_declared_once_on_the_sources_that_need_them():
    assert sources.TOKEN_ENV_VARS == ("ELECTRICITYMAPS_TOKEN", "ENTSOE_API_KEY", "PJM_API_KEY")
    assert sources.get("entsoe-day-ahead").token_env == "ENTSOE_API_KEY"


def test_credits_are_sorted_and_refuse_an_unregistered_source():
    assert [c["source"] for c in sources.credits({"persico2016", "alibaba-2023"})] == ["alibaba-2023", "persico2016"]
    with pytest.raises(sources.UnknownSourceError, match="registered"):
        sources.credits({"somewhere-on-the-internet"})
