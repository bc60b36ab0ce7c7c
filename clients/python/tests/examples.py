"""The ```python blocks of a Markdown document, and how a test runs one as printed: in a
Python of its own, with the variables the demo banner's `shell:` line exports."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def python_blocks(document: Path) -> list[tuple[str, str]]:
    """Every ```python block of `document`, in order, with the heading it comes under."""
    blocks, heading = [], ""
    for part in re.split(r"^(```python\n.*?^```)$", document.read_text(), flags=re.M | re.S):
        if part.startswith("```python\n"):
            blocks.append((heading, part.removeprefix("```python\n").removesuffix("```")))
        else:
            headings = re.findall(r"^#+ (.+)$", part, flags=re.M)
            heading = headings[-1] if headings else heading
    return blocks


def case_id(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def run_as_printed(service, heading: str, code: str, seconds: int) -> None:
    """Runs `code` against `service` (the demo) and fails unless it ends well and prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RACING_")}
    env.update(service.shell_variables())
    try:
        run = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=seconds
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{heading}: still running after {seconds} s:\n{code}") from None
    assert run.returncode == 0, f"{heading}:\n{code}\n{run.stderr}"
    assert run.stdout, f"{heading}: printed nothing"
