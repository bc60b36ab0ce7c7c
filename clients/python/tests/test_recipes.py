"""docs/recipes.md's recipes, each run as printed against the demo, in a Python of its own
with the variables that the demo banner's `shell:` line exports."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

RECIPES = Path(__file__).resolve().parents[3] / "docs" / "recipes.md"
# The longest a recipe may take: those that follow the socket stop at a race's result.
RECIPE_SECS = 60


def _recipes() -> list[tuple[str, str]]:
    """Every ```python block of the recipes, with the heading it comes under."""
    recipes, heading = [], ""
    for block in re.split(r"^(```python\n.*?^```)$", RECIPES.read_text(), flags=re.M | re.S):
        if block.startswith("```python\n"):
            recipes.append((heading, block.removeprefix("```python\n").removesuffix("```")))
        else:
            headings = re.findall(r"^#+ (.+)$", block, flags=re.M)
            heading = headings[-1] if headings else heading
    return recipes


RECIPE_LIST = _recipes()


def test_there_is_a_recipe_for_each_common_job():
    headings = [heading for heading, _ in RECIPE_LIST]
    assert headings == [
        "Follow a race day",
        "Mirror the data through the change feed",
        "Backtest with `as_of` and a replay",
        "Load a day into pandas",
    ], headings


@pytest.mark.parametrize(
    "heading, recipe",
    RECIPE_LIST,
    ids=[re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") for heading, _ in RECIPE_LIST],
)
def test_the_recipe_runs_as_printed(service, heading, recipe):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RACING_")}
    env.update(service.shell_variables())
    try:
        run = subprocess.run(
            [sys.executable, "-c", recipe],
            env=env,
            capture_output=True,
            text=True,
            timeout=RECIPE_SECS,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{heading}: still running after {RECIPE_SECS} s:\n{recipe}") from None
    assert run.returncode == 0, f"{heading}:\n{recipe}\n{run.stderr}"
    assert run.stdout, f"{heading}: printed nothing"
