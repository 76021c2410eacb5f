"""A PEP 517 build backend in the standard library, so that `pip install` of this directory
needs no index and no setuptools or wheel: it writes the pure-Python wheel (and sdist) of
jail_sandbox itself. Name, version, summary and Python version come from pyproject.toml's
[project] table."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "jail_sandbox"


def _project() -> dict[str, str]:
    fields, inside = {}, False
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("["):
                inside = line.strip() == "[project]"
            m = re.match(r'^([\w-]+)\s*=\s*"(.*)"\s*$', line)
            if inside and m:
                fields[m.group(1)] = m.group(2)
    return fields


def _metadata() -> str:
    p = _project()
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {p['name']}\n"
        f"Version: {p['version']}\n"
        f"Summary: {p['description']}\n"
        f"Requires-Python: {p['requires-python']}\n"
        "Description-Content-Type: text/markdown\n\n"
        f"{readme}"
    )


def _stem() -> str:
    p = _project()
    return f"{p['name'].replace('-', '_')}-{p['version']}"


def _sources() -> list[str]:
    """The package's files, relative to this directory."""
    out = []
    for name in sorted(os.listdir(os.path.join(HERE, PACKAGE))):
        if name.endswith(".py"):
            out.append(f"{PACKAGE}/{name}")
    return out


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    info = f"{_stem()}.dist-info"
    files: list[tuple[str, bytes]] = []
    for rel in _sources():
        with open(os.path.join(HERE, rel), "rb") as f:
            files.append((rel, f.read()))
    files.append((f"{info}/METADATA", _metadata().encode()))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: jail build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    record = "".join(f"{name},{_digest(data)},{len(data)}\n" for name, data in files) + f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode()))
    name = f"{_stem()}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as whl:
        for rel, data in files:
            whl.writestr(zipfile.ZipInfo(rel, (1980, 1, 1, 0, 0, 0)), data)
    return name


def build_sdist(sdist_directory, config_settings=None):
    stem = _stem()
    name = f"{stem}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ["pyproject.toml", "build_backend.py", "README.md"] + _sources():
            tar.add(os.path.join(HERE, rel), f"{stem}/{rel}")
        pkg_info = _metadata().encode()
        entry = tarfile.TarInfo(f"{stem}/PKG-INFO")
        entry.size = len(pkg_info)
        tar.addfile(entry, io.BytesIO(pkg_info))
    return name
