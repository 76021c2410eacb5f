"""jail_sandbox: Python client of jail's local API for persistent sandboxes (docs/api.md).

    from jail_sandbox import Sandbox

    with Sandbox.create(name="demo") as sb:
        r = sb.exec("echo hello")
        print(r.exit_code, r.stdout)

It talks HTTP/1.1 to `jail serve`'s socket when it runs, else to each sandbox's own socket, and
creates a sandbox without a daemon by running `jail create --json` ($JAIL_BIN, else jail on
PATH). Standard library only.
"""

from .aio import AsyncSandbox
from .errors import (
    AlreadyExistsError,
    ApplyRefusedError,
    DeadlineExceededError,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    JailError,
    NotFoundError,
    PermissionDeniedError,
    UnimplementedError,
)
from .sandbox import Sandbox
from .values import (
    ApplyResult,
    ArchiveResult,
    Change,
    ChangeSet,
    ExecResult,
    ExitStatus,
    FileEntry,
    Held,
    ProcessInfo,
    ProcessOutput,
    SandboxInfo,
    WriteResult,
)

__version__ = "0.1.0"

__all__ = [
    "AlreadyExistsError",
    "ApplyRefusedError",
    "ApplyResult",
    "ArchiveResult",
    "AsyncSandbox",
    "Change",
    "ChangeSet",
    "DeadlineExceededError",
    "ExecResult",
    "ExitStatus",
    "FailedPreconditionError",
    "FileEntry",
    "Held",
    "InternalError",
    "InvalidArgumentError",
    "JailError",
    "NotFoundError",
    "PermissionDeniedError",
    "ProcessInfo",
    "ProcessOutput",
    "Sandbox",
    "SandboxInfo",
    "UnimplementedError",
    "WriteResult",
]
