"""gridshift.declarations: the one table behind run options and metrics (refusals by name; built-ins stay)."""

import pytest

from gridshift import metrics, run_options


@pytest.mark.parametrize("module", [run_options, metrics])
def test_a_taken_name_is_refused_and_a_built_in_cannot_be_removed(module):
    first = module.declared()[0]
    with pytest.raises(ValueError, match=f"{first.name!r} is already declared"):
        module.declare(first)
    with pytest.raises(ValueError, match=f"{first.name!r} is built in"):
        module.undeclare(first.name)
    assert module.declared()[0] is first
    module.undeclare("no_such_thing")  # removing what was never declared is a no-op
