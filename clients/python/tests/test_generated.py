"""The synchronous client's endpoint methods are generated from the asynchronous client's
by `tools/unasync.py` (`Racing`'s from `AsyncRacing`'s, `Webhooks`' from `AsyncWebhooks`'):
a method edited in one client and not the other fails here. No service needed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "unasync.py"


def _tool():
    spec = importlib.util.spec_from_file_location("unasync", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_client_py_and_webhooks_py_are_what_tools_unasync_py_writes():
    done = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_method_changed_in_one_client_alone_is_found():
    unasync = _tool()
    aio, client = unasync.AIO.read_text(), unasync.CLIENT.read_text()
    assert unasync.generate(aio, client) == client
    # A docstring changed in aio.py alone: client.py is stale.
    edited = aio.replace('"""A horse\'s profile."""', '"""A horse\'s profile, as of now."""')
    assert edited != aio
    assert "A horse's profile, as of now." in unasync.generate(edited, client)
    # A generated method edited in client.py: generating again undoes the edit.
    hand = client.replace("return self.get(E.index()", "return self.get(E.index() ")
    assert hand != client
    assert unasync.generate(aio, hand) == client


def test_a_webhooks_method_changed_in_one_class_alone_is_found():
    unasync = _tool()
    where = unasync.WEBHOOKS_REGION
    text = unasync.WEBHOOKS.read_text()
    assert unasync.generate(text, text, where) == text
    # A docstring changed in AsyncWebhooks alone: Webhooks is stale.
    said = '"""One endpoint: enabled or not, and why."""'
    assert text.count(said) == 2
    async_at = text.index("class AsyncWebhooks")
    edited = text[:async_at] + text[async_at:].replace(said, '"""One endpoint, enabled or not."""')
    assert text[async_at:] != edited[async_at:]
    assert unasync.generate(edited, edited, where).count('"""One endpoint, enabled or not."""') == 2
    # A generated method edited in Webhooks alone: generating again undoes the edit.
    sync_line = '        self._send("DELETE", _path(endpoint_id), None)\n'
    assert text.count(sync_line) == 1
    hand = text.replace(sync_line, sync_line.replace("None)", "None )"))
    assert unasync.generate(hand, hand, where) == text


def test_check_fails_while_webhooks_py_alone_is_stale(tmp_path, monkeypatch, capsys):
    unasync = _tool()
    copy = tmp_path / "webhooks.py"
    text = unasync.WEBHOOKS.read_text()
    sync_line = '        self._send("DELETE", _path(endpoint_id), None)\n'
    copy.write_text(text.replace(sync_line, sync_line.replace("None)", "None )")))
    where = unasync.WEBHOOKS_REGION._replace(source=copy, target=copy)
    monkeypatch.setattr(unasync, "REGIONS", (unasync.CLIENT_REGION, where))
    assert unasync.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "differ from those of AsyncWebhooks in webhooks.py" in out
    assert copy.read_text() != text  # --check changes nothing
    assert unasync.main([]) == 0
    assert copy.read_text() == text


def test_it_drops_async_and_await_and_renames_what_has_a_sync_twin():
    unasync = _tool()
    source = (
        "    async def pages(self) -> AsyncIterator[int]:\n"
        "        async with self._http as h:\n"
        "            yield (await h.get('async await'))  # await stays in comments\n"
        "        await self.aclose()\n"
    )
    assert unasync.unasync(source) == (
        "    def pages(self) -> Iterator[int]:\n"
        "        with self._http as h:\n"
        "            yield (h.get('async await'))  # await stays in comments\n"
        "        self.close()\n"
    )


def test_it_refuses_asyncio_and_a_name_the_target_lacks():
    unasync = _tool()
    aio, client = unasync.AIO.read_text(), unasync.CLIENT.read_text()
    end = "    # --- unasync end ---"
    napping = "    async def nap(self):\n        await asyncio.sleep(1)\n\n"
    with pytest.raises(unasync.Stale, match="`asyncio` has no synchronous twin"):
        unasync.generate(aio.replace(end, napping + end), client)
    pathing = "    def here(self):\n        return Path('.')\n\n"
    with pytest.raises(unasync.Stale, match="use names client.py does not define: Path"):
        unasync.generate(aio.replace(end, pathing + end), client)
    # The same rules in AsyncWebhooks, whose file is also the target's.
    text = unasync.WEBHOOKS.read_text()
    where = unasync.WEBHOOKS_REGION
    assert text.count(end) == 1
    with pytest.raises(unasync.Stale, match=r"webhooks\.py:\d+: `asyncio` has no synchronous twin"):
        edited = text.replace(end, napping + end)
        unasync.generate(edited, edited, where)
    with pytest.raises(unasync.Stale, match="use names webhooks.py does not define: Path"):
        edited = text.replace(end, pathing + end)
        unasync.generate(edited, edited, where)


def test_it_refuses_a_source_and_a_target_that_overlap_in_one_file():
    unasync = _tool()
    where = unasync.WEBHOOKS_REGION
    text = "\n".join(
        [
            "class Both:",
            "    " + where.target_start,
            "    " + where.start,
            "    async def f(self):",
            "        return 1",
            "    " + where.end,
            "    " + where.target_end,
            "",
        ]
    )
    with pytest.raises(unasync.Stale, match="overlap"):
        unasync.generate(text, text, where)
