"""The client's own conversions, without jail: durations, create's flags, error classes."""

from __future__ import annotations

import unittest

from jail_sandbox import ApplyRefusedError, Held, JailError, NotFoundError
from jail_sandbox import _routes, errors, values


class TestValues(unittest.TestCase):
    def test_durations(self) -> None:
        self.assertEqual([values.go_duration(s) for s in (30, 1.5, 0.25, 0.0001)], ["30s", "1.5s", "0.25s", "0.0001s"])
        self.assertEqual([values.seconds(t) for t in ("1h30m0s", "15m0s", "1.5s", "300ms", "0s", None)], [5400, 900, 1.5, 0.3, 0, None])
        with self.assertRaises(ValueError):
            values.seconds("ten minutes")
        with self.assertRaises(ValueError):
            values.go_duration(-1)

    def test_times(self) -> None:
        for text in ("2026-12-01T11:00:00.123456789Z", "2026-12-01T11:00:00.123456Z"):
            self.assertEqual(values.time(text).isoformat(), "2026-12-01T11:00:00.123456+00:00")
        self.assertEqual(values.time("2026-12-01T11:00:00.5Z").microsecond, 500000)
        self.assertEqual(values.time("2026-12-01T11:00:00Z").isoformat(), "2026-12-01T11:00:00+00:00")

    def test_create_flags(self) -> None:
        req = _routes.create_request(
            profile="agent", workdir="/w", read=["/opt/data"], tmpfs=["/workspace"], allow_hosts=["pypi.org"],
            env={"B": "2", "A": "1"}, cache=["go", "npm"], workspace="overlay", name="n", labels={"k": "v"}, idle_timeout=900, ttl=7200, timeout=30,
        )  # fmt: skip
        self.assertEqual(req["network"], {"allow_hosts": ["pypi.org"]})
        self.assertEqual(
            _routes.create_args(req),
            [
                "create", "--json", "--profile=agent", "--ro=/opt/data", "--tmpfs=/workspace", "--allow-host=pypi.org",
                "--env=A=1", "--env=B=2", "--cache=go,npm", "--timeout=30s", "--idle-timeout=900s", "--ttl=7200s", "--workspace=overlay", "--name=n", "--label=k=v",
            ],
        )  # fmt: skip

    def test_command_body(self) -> None:
        self.assertEqual(_routes.command_body("echo hi"), {"shell": "echo hi"})
        self.assertEqual(
            _routes.command_body(["ls", "-l"], cwd="/tmp", timeout=2, input="x", stdin=True),
            {"cmd": ["ls", "-l"], "cwd": "/tmp", "timeout": "2s", "stdin": "pipe", "input": "eA=="},
        )

    def test_errors(self) -> None:
        e = errors.from_body(b'{"error":{"code":"not_found","message":"jail: sandbox \\"x\\": no such sandbox"}}', 404)
        self.assertIsInstance(e, NotFoundError)
        self.assertEqual((e.code, e.status, str(e)), ("not_found", 404, 'jail: sandbox "x": no such sandbox'))
        e = errors.from_body(b'{"error":{"code":"resource_exhausted","message":"jail: later"}}', 429)
        self.assertEqual((type(e), e.code), (JailError, "resource_exhausted"))
        e = errors.from_body(
            b'{"written":[],"refused":[{"path":".envrc","reason":"autorun","allow":"autorun"}],"removed":false,'
            b'"error":{"code":"failed_precondition","message":"jail: apply x: nothing written"}}',
            409,
        )
        self.assertIsInstance(e, ApplyRefusedError)
        self.assertEqual((e.code, e.refused, e.conflicts), ("failed_precondition", [Held(".envrc", "autorun", "autorun")], []))
        e = errors.from_body(b"<html>", 502)
        self.assertEqual(e.code, "internal")


if __name__ == "__main__":
    unittest.main()
