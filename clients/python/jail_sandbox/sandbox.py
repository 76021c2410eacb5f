"""Sandbox: jail's persistent sandboxes with blocking calls."""

from __future__ import annotations

from typing import Any

from ._base import SandboxBase
from ._drive import run_sync


class Sandbox(SandboxBase):
    """A persistent jail sandbox. ``with Sandbox.create(...) as sb:`` deletes it on exit."""

    _run = staticmethod(run_sync)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.delete(force=True, missing_ok=True)
