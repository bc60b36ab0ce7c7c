"""Writes the synchronous client's endpoint methods from the asynchronous client's, so that
a method is written once: `Racing`'s in `client.py` from `AsyncRacing`'s in `aio.py`, and
`Webhooks`' from `AsyncWebhooks`' (both classes in `webhooks.py`).

    python3 clients/python/tools/unasync.py           # rewrites client.py and webhooks.py
    python3 clients/python/tools/unasync.py --check   # exits 1, with a diff, if either is stale

What `AsyncRacing` has between the lines `# --- unasync start ...` and `# --- unasync end ---`
of `aio.py` becomes what `Racing` has between `# --- generated from aio.py ...` and
`# --- end of generated code ---` of `client.py`; likewise what `AsyncWebhooks` has between
its `# --- unasync start ...` and `# --- unasync end ---` becomes what `Webhooks` has between
`# --- generated from AsyncWebhooks ...` and `# --- end of generated code ---` (`REGIONS`).
The copy gets the rewrite the `unasync` project does for httpcore: the keywords `async` and
`await` are dropped and the names in `RENAMES` replaced (`AsyncIterator` becomes
`Iterator`, `aclose` becomes `close`, ...). It works on Python's tokens, so text in strings
and comments (docstrings included) is copied as it is: write it to suit both clients. The
rest of each file (its imports, `__init__`, `close`, `get` and `Webhooks._send` with
`time.sleep`) is written by hand and kept.

It refuses what no renaming makes synchronous (`asyncio`): such a method stays out of the
copied lines and is written in each client. And it checks that every name the generated
methods use is defined in the file they are written to, so that a name `aio.py` imports and
`client.py` does not fails here rather than when the method is called. Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import difflib
import io
import sys
import textwrap
import tokenize
from pathlib import Path
from typing import NamedTuple

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "racing_client"
AIO = PACKAGE / "aio.py"
CLIENT = PACKAGE / "client.py"
WEBHOOKS = PACKAGE / "webhooks.py"

SOURCE_START = "# --- unasync start: tools/unasync.py copies what follows into client.py ---"
SOURCE_END = "# --- unasync end ---"
TARGET_START = "# --- generated from aio.py by tools/unasync.py: do not edit ---"
TARGET_END = "# --- end of generated code ---"


class Region(NamedTuple):
    """What `source_class` has between the lines `start` and `end` of `source`, without
    `async`, becomes what `target_class` has between `target_start` and `target_end` of
    `target` (which may be the same file: the two regions must then not overlap)."""

    source: Path
    source_class: str
    start: str
    end: str
    target: Path
    target_class: str
    target_start: str
    target_end: str


CLIENT_REGION = Region(
    AIO, "AsyncRacing", SOURCE_START, SOURCE_END, CLIENT, "Racing", TARGET_START, TARGET_END
)
WEBHOOKS_REGION = Region(
    WEBHOOKS,
    "AsyncWebhooks",
    "# --- unasync start: tools/unasync.py copies what follows into Webhooks ---",
    SOURCE_END,
    WEBHOOKS,
    "Webhooks",
    "# --- generated from AsyncWebhooks by tools/unasync.py: do not edit ---",
    TARGET_END,
)
# One region a target file: main() reads each target once, before writing any.
REGIONS = (CLIENT_REGION, WEBHOOKS_REGION)

# The dropped keywords, and the names replaced (whole names only, as the tokenizer reads them).
KEYWORDS = {"async", "await"}
RENAMES = {
    "AsyncRacing": "Racing",
    "AsyncWebhooks": "Webhooks",
    "AsyncIterator": "Iterator",
    "AsyncIterable": "Iterable",
    "AsyncGenerator": "Generator",
    "AsyncClient": "Client",
    "AsyncBaseTransport": "BaseTransport",
    "StopAsyncIteration": "StopIteration",
    "aclose": "close",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "__aiter__": "__iter__",
    "__anext__": "__next__",
}
# Names with no synchronous twin by renaming: their methods are written in each client.
REFUSED = {"asyncio"}


class Stale(Exception):
    """What stops the generation: a marker missing, a refused name, a name the target lacks."""


def region(text: str, start: str, end: str, where: str) -> tuple[int, int]:
    """The indices of the lines strictly between the marker lines `start` and `end`."""
    lines = text.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if line.strip() == start]
    ends = [i for i, line in enumerate(lines) if line.strip() == end]
    if len(found) != 1 or len(ends) != 1 or ends[0] < found[0]:
        raise Stale(f"{where}: expected one line `{start}` and, after it, one line `{end}`")
    return found[0] + 1, ends[0]


def unasync(source: str, where: str = "aio.py") -> str:
    """`source` (Python code, from the file `where`) without `async` and `await`, with
    `RENAMES` applied."""
    lines = source.splitlines(keepends=True)
    edits = []  # (row, start column, end column, replacement), in source order
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.NAME:
            continue
        (row, col), (_, end) = tok.start, tok.end
        if tok.string in REFUSED:
            raise Stale(
                f"{where}:{row}: `{tok.string}` has no synchronous twin: write that method in each "
                "client, outside the copied lines"
            )
        if tok.string in KEYWORDS:
            # The keyword and the spaces after it: `return await f()` becomes `return f()`.
            line = lines[row - 1]
            end += len(line[end:]) - len(line[end:].lstrip(" \t"))
            edits.append((row, col, end, ""))
        elif tok.string in RENAMES:
            edits.append((row, col, end, RENAMES[tok.string]))
    for row, col, end, new in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + new + line[end:]
    return "".join(lines)


def module_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (imports, definitions, assignments)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def unbound_names(methods: str, client: str) -> list[str]:
    """The names the generated methods read that neither they nor the module `client` bind."""
    tree = ast.parse(textwrap.dedent(methods))
    local = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    local |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return sorted(read - local - module_names(ast.parse(client)) - set(dir(builtins)))


def generate(aio: str, client: str, where: Region = CLIENT_REGION) -> str:
    """The target file as it should be (`client.py` by default): its own text, `client`,
    with the methods copied from the source file's, `aio`, in their place. For a region
    whose source and target are one file, `aio` and `client` are that file's text."""
    source_name, target_name = where.source.name, where.target.name
    first, last = region(aio, where.start, where.end, source_name)
    aio_lines = aio.splitlines(keepends=True)
    # As many empty lines before the copied ones as the source has, so that the tokenizer's
    # line numbers in an error are the source's; then cut off (one character each).
    methods = unasync("\n" * first + "".join(aio_lines[first:last]), source_name)[first:]
    try:
        unbound = unbound_names(methods, client)
    except SyntaxError as e:
        raise Stale(f"the generated methods do not parse: {e}") from None
    if unbound:
        raise Stale(
            f"the generated methods use names {target_name} does not define: {', '.join(unbound)}"
        )
    start, end = region(client, where.target_start, where.target_end, target_name)
    # One file: the source's lines (markers included) wholly before or after the target's.
    if where.source == where.target and not (last < start - 1 or end < first - 1):
        raise Stale(f"{target_name}: the copied lines and the generated ones overlap")
    lines = client.splitlines(keepends=True)
    return "".join(lines[:start]) + methods + "".join(lines[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if client.py or webhooks.py is stale"
    )
    args = parser.parse_args(argv)
    # Every region generated before anything is written: a refusal leaves every file as it was.
    done = []
    for where in REGIONS:
        target = where.target.read_text()
        source = target if where.source == where.target else where.source.read_text()
        try:
            done.append((where, target, generate(source, target, where)))
        except Stale as e:
            print(f"unasync: {e}", file=sys.stderr)
            return 2
    stale = []
    for where, target, want in done:
        name, source_name = where.target.name, where.source.name
        if want == target:
            if not args.check:
                print(f"unasync: {name} ({where.target_class}) is up to date")
            continue
        stale.append(name)
        if args.check:
            diff = difflib.unified_diff(
                target.splitlines(keepends=True),
                want.splitlines(keepends=True),
                f"{name} (as it is)",
                f"{name} (as tools/unasync.py would write it from {where.source_class} in {source_name})",
            )
            sys.stdout.writelines(diff)
            print(
                f"\nunasync: the generated methods of {where.target_class} in {name} differ from"
                f" those of {where.source_class} in {source_name}: edit {where.source_class} (not"
                " the generated lines), then run python3 clients/python/tools/unasync.py"
            )
        else:
            where.target.write_text(want)
            print(f"unasync: wrote {where.target} ({where.target_class})")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
