"""Live upstream clients: one module per source, each fetch → RawFile (landed as-is) → parse.

Every HTTP call goes through :func:`pipelines.http.make_session` (cache, retries, timeouts,
token redaction). See docs/sources.md for each source's licence, token and cache policy.
"""
