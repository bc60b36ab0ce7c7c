"""The synchronous client's endpoint methods are generated from the asynchronous client's
by `tools/unasync.py`: a method edited in one client and not the other fails here. No
service needed."""

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


def test_client_py_is_what_tools_unasync_py_writes_from_aio_py():
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


def test_it_refuses_asyncio_and_a_name_client_py_lacks():
    unasync = _tool()
    aio, client = unasync.AIO.read_text(), unasync.CLIENT.read_text()
    end = "    # --- unasync end ---"
    napping = "    async def nap(self):\n        await asyncio.sleep(1)\n\n"
    with pytest.raises(unasync.Stale, match="`asyncio` has no synchronous twin"):
        unasync.generate(aio.replace(end, napping + end), client)
    pathing = "    def here(self):\n        return Path('.')\n\n"
    with pytest.raises(unasync.Stale, match="use names client.py does not define: Path"):
        unasync.generate(aio.replace(end, pathing + end), client)
