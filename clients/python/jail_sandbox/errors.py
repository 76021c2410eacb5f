"""The exceptions of jail's API: one class per error code of docs/api.md, all JailError."""

from __future__ import annotations

import json

from .values import Held


class JailError(Exception):
    """A failure jail reported: ``code`` is the API's error code (``not_found``, …), ``status``
    the HTTP status (0 when no HTTP answer was involved), and ``str(err)`` jail's one-line
    message, as the command line prints it."""

    code = "internal"

    def __init__(self, message: str, code: str | None = None, status: int = 0):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.status = status


class InvalidArgumentError(JailError):
    code = "invalid_argument"


class PermissionDeniedError(JailError):
    code = "permission_denied"


class NotFoundError(JailError):
    code = "not_found"


class AlreadyExistsError(JailError):
    code = "already_exists"


class FailedPreconditionError(JailError):
    code = "failed_precondition"


class ApplyRefusedError(FailedPreconditionError):
    """An apply that wrote nothing: ``refused`` are the changes it refuses (each with the
    ``allow`` class that takes it), ``conflicts`` those whose path changed in the tree (taken
    with ``overwrite``)."""

    def __init__(self, message: str, status: int = 0, refused: list[Held] | None = None, conflicts: list[Held] | None = None):
        super().__init__(message, status=status)
        self.refused = refused or []
        self.conflicts = conflicts or []


class DeadlineExceededError(JailError):
    code = "deadline_exceeded"


class UnimplementedError(JailError):
    code = "unimplemented"


class InternalError(JailError):
    code = "internal"


_BY_CODE = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        PermissionDeniedError,
        NotFoundError,
        AlreadyExistsError,
        FailedPreconditionError,
        DeadlineExceededError,
        UnimplementedError,
        InternalError,
    )
}


def error(code: str, message: str, status: int = 0) -> JailError:
    """The exception for an error code; a code this client does not know stays a JailError
    carrying it, so a newer jail's codes still reach the caller."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return JailError(message, code, status)
    return cls(message, status=status)


def from_object(obj: object, status: int = 0) -> JailError:
    """The exception for an ``{"code": …, "message": …}`` object of an answer or a stream."""
    if isinstance(obj, dict):
        return error(str(obj.get("code", "internal")), str(obj.get("message", "jail: unknown error")), status)
    return error("internal", f"jail: malformed error {obj!r}", status)


def from_body(body: bytes, status: int) -> JailError:
    """The exception for an error answer's body, ``{"error": {…}}``."""
    try:
        answer = json.loads(body)
        obj = answer["error"]
    except (ValueError, KeyError, TypeError):
        text = body.decode("utf-8", "replace").strip() or "no body"
        return error("internal", f"jail: HTTP status {status}: {text}", status)
    err = from_object(obj, status)
    if isinstance(err, FailedPreconditionError) and ("refused" in answer or "conflicts" in answer):
        # An apply's 409 carries what stopped it beside the error.
        refused, conflicts = ([Held.from_json(h) for h in answer.get(key) or []] for key in ("refused", "conflicts"))
        return ApplyRefusedError(err.message, status, refused, conflicts)
    return err
