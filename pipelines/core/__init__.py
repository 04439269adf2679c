"""Plumbing shared by every source: the HTTP session, raw landings, strict parsing, exchange rates,
and the Source interface."""
