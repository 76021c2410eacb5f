"""AsyncSandbox: jail's persistent sandboxes with asyncio; every call is awaited."""

from __future__ import annotations

from typing import Any

from ._base import SandboxBase
from ._drive import run_async


class AsyncSandbox(SandboxBase):
    """Sandbox's twin for asyncio: the same methods, each a coroutine (``files``, ``processes``
    and ``workspace`` too); exec's callbacks may be coroutine functions. Cancelling an exec kills
    its command. ``async with await AsyncSandbox.create(...) as sb:`` deletes it on exit."""

    _run = staticmethod(run_async)

    async def __aenter__(self) -> "AsyncSandbox":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.delete(force=True, missing_ok=True)
