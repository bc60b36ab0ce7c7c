"""The README's examples, each run as printed against the demo: its first example reads the
variables that the demo banner's `shell:` line exports, here those of the banner of the
service the suite started, and every other one runs after it in a Python of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
# The longest an example may take: those that follow a live stream stop after a few frames.
EXAMPLE_SECS = 60


def _examples() -> list[tuple[str, str]]:
    """Every ```python block of the README, in order, with the heading it comes under."""
    examples, heading = [], ""
    for block in re.split(r"^(```python\n.*?^```)$", README.read_text(), flags=re.M | re.S):
        if block.startswith("```python\n"):
            examples.append((heading, block.removeprefix("```python\n").removesuffix("```")))
        else:
            headings = re.findall(r"^#+ (.+)$", block, flags=re.M)
            heading = headings[-1] if headings else heading
    return examples


SETUP, *EXAMPLES = _examples()


def test_the_first_example_reads_the_demo_banner_s_variables():
    assert SETUP[0] == "The examples", SETUP
    for name in ("KEY", "URL", "DAY", "RACE", "HORSE", "SEQ"):
        assert f'os.environ["{name}"]' in SETUP[1], name


@pytest.mark.parametrize(
    "heading, example",
    EXAMPLES,
    ids=[re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") for heading, _ in EXAMPLES],
)
def test_the_readme_example_runs_as_printed(service, heading, example):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RACING_")}
    env.update(service.shell_variables())
    try:
        run = subprocess.run(
            [sys.executable, "-c", SETUP[1] + "\n" + example],
            env=env,
            capture_output=True,
            text=True,
            timeout=EXAMPLE_SECS,
        )
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{heading}: still running after {EXAMPLE_SECS} s:\n{example}") from None
    assert run.returncode == 0, f"{heading}:\n{example}\n{run.stderr}"
    assert run.stdout, f"{heading}: printed nothing"
