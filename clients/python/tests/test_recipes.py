"""docs/recipes.md's recipes, each run as printed against the demo, in a Python of its own
with the variables that the demo banner's `shell:` line exports."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples import python_blocks, run_as_printed, case_id

RECIPES = python_blocks(Path(__file__).resolve().parents[3] / "docs" / "recipes.md")
# The longest a recipe may take: those that follow the socket stop at a race's result.
RECIPE_SECS = 60


def test_there_is_a_recipe_for_each_common_job():
    assert [heading for heading, _ in RECIPES] == [
        "Follow a race day",
        "Mirror the data through the change feed",
        "Backtest with `as_of` and a replay",
        "Load a day into pandas",
    ]


@pytest.mark.parametrize("heading, recipe", RECIPES, ids=[case_id(h) for h, _ in RECIPES])
def test_the_recipe_runs_as_printed(service, heading, recipe):
    run_as_printed(service, heading, recipe, RECIPE_SECS)
