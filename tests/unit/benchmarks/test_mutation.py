"""benchmarks/mutation.py: which mutants a source yields (one change each, deterministic, never in docstrings,
messages or annotations), their keys, and the kill rate the report computes."""

from __future__ import annotations

import ast

import pytest

from benchmarks.mutation import Target, _counts, mutants

SRC = '''
"""Module doc 1."""


def f(x: int = 5) -> bool:
    """Doc 2."""
    if not x:
        raise ValueError(f"bad {x + 1}")
    return x < 3 and x + 2 + 4 > -1


def g(df):
    return df.join_asof(df, strategy="backward").is_between(1, 2, closed="both")
'''


def keys(functions=()):
    return [m.key for m, _ in mutants(SRC, Target("t", "m.py", (), functions=functions))]


def test_each_mutant_is_one_change_and_compiles():
    out = mutants(SRC, Target("t", "m.py", ()))
    assert [m.change for m, _ in out] == [
        "5 -> 6", "not x -> x", "< -> <=", "and -> or", "3 -> 4", "+ -> -", "+ -> -", "> -> >=", "2 -> 3", "4 -> 5",
        "-x -> x", "1 -> 2", "strategy='backward' -> 'forward'", "1 -> 2", "2 -> 3", "closed='both' -> 'left'"]
    base = ast.dump(ast.parse(SRC))
    for m, text in out:
        assert ast.dump(ast.parse(text)) != base, m.key
        compile(text, "m.py", "exec")
    # docstrings, the f-string's message and the annotations are never mutated (a default value is behaviour)
    assert all('"""Doc 2."""' in text and "bad {x + 1}" in text and "x: int" in text and "-> bool" in text
               for _, text in out)
    assert "return x <= 3 and x + 2 + 4 > -1" in dict((m.change, t) for m, t in out)["< -> <="]


def test_keys_are_unique_and_stable():
    k = keys()
    assert len(set(k)) == len(k) == 16
    assert "f:9:11:< -> <=" in k and "f:9:21:+ -> - #2" in k  # (x + 2) + 4: two additions from column 21
    assert k == keys()


def test_functions_limit_the_mutants():
    assert all(k.startswith("g:") for k in keys(("g",))) and len(keys(("g",))) == 4
    with pytest.raises(SystemExit, match="no function"):
        keys(("h",))


def test_kill_rate_leaves_equivalent_mutants_out():
    res = {"mutants": [{"status": s} for s in ("killed", "killed", "timeout", "survived", "equivalent")]}
    c = _counts(res)
    assert (c["total"], c["killed"], c["timeout"], c["survived"], c["equivalent"]) == (5, 2, 1, 1, 1)
    assert c["rate"] == 0.75
