"""``gridshift.gctune``: the collector paused during the block and resumed as it was, what the block made
frozen (never walked again), and the command thresholds."""

from __future__ import annotations

import gc

import pytest

from gridshift import gctune


@pytest.fixture
def restore_gc():
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    gctune.for_a_command()
    yield
    gctune._opted_in[0] = False
    gc.unfreeze()
    gc.set_threshold(*threshold)
    (gc.enable if enabled else gc.disable)()


def test_the_block_runs_uncollected_and_what_it_made_is_frozen(restore_gc):
    gc.enable()
    frozen = gc.get_freeze_count()
    with gctune.imports_uncollected():
        assert not gc.isenabled()
        made = [[i] for i in range(1000)]  # tracked objects, alive after the block
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(made)


def test_the_collector_is_resumed_as_it_was_also_when_the_block_raises(restore_gc):
    gc.disable()
    with gctune.imports_uncollected():
        pass
    assert not gc.isenabled()  # it was off: left off
    gc.enable()
    with pytest.raises(ImportError), gctune.imports_uncollected():
        raise ImportError("no such module")
    assert gc.isenabled()


def test_a_process_that_did_not_opt_in_is_left_as_it_is(restore_gc):
    gctune._opted_in[0] = False
    frozen = gc.get_freeze_count()
    with gctune.imports_uncollected():
        assert gc.isenabled()
        made = [[i] for i in range(1000)]
    assert gc.get_freeze_count() == frozen and made


def test_a_command_collects_in_larger_batches(restore_gc):
    gctune.for_a_command()
    assert gc.get_threshold() == (gctune.YOUNG_THRESHOLD, 10, 10)
