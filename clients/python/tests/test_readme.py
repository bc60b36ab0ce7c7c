"""The README's examples, each run as printed against the demo: its first example reads the
variables that the demo banner's `shell:` line exports, here those of the banner of the
service the suite started, and every other one runs after it in a Python of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples import python_blocks, run_as_printed, case_id

README = Path(__file__).resolve().parents[1] / "README.md"
# The longest an example may take: those that follow a live stream stop after a few frames.
EXAMPLE_SECS = 60

SETUP, *EXAMPLES = python_blocks(README)


def test_the_first_example_reads_the_demo_banner_s_variables():
    assert SETUP[0] == "The examples", SETUP
    for name in ("KEY", "URL", "DAY", "RACE", "HORSE", "SEQ"):
        assert f'os.environ["{name}"]' in SETUP[1], name


@pytest.mark.parametrize("heading, example", EXAMPLES, ids=[case_id(h) for h, _ in EXAMPLES])
def test_the_readme_example_runs_as_printed(service, heading, example):
    run_as_printed(service, heading, SETUP[1] + "\n" + example, EXAMPLE_SECS)
