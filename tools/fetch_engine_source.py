"""Download a release's source archive from the package index and check its sha256 there.

``python tools/fetch_engine_source.py vllm 0.34.0 DEST`` writes ``DEST/vllm-0.34.0.tar.gz`` and
unpacks it beside (``DEST/vllm-0.34.0/``), for ``tools/mine_engine_tests.py`` to read its
``tests/``. ``pip download --no-binary :all:`` cannot fetch vLLM's archive (its ``setup.py``
imports torch, and the metadata comes out as ``0.34.0+empty``), so the file is fetched from
the URL the index's JSON API names, and refused unless its sha256 is the one the index states.
A maintainer's tool (network); never run by the tests.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import ssl
import sys
import tarfile
import urllib.request
from pathlib import Path

INDEX = "https://pypi.org/simple/{name}/"
"""The index's simple API in its JSON form (PEP 691), the listing pip itself reads."""


def sdist_of(name: str, version: str) -> tuple[str, str]:
    """Return the source archive's URL and sha256 as the index lists them."""
    request = urllib.request.Request(
        INDEX.format(name=name), headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, context=_tls()) as r:
        files = json.load(r)["files"]
    wanted = f"{name}-{version}.tar.gz"
    for f in files:
        if f["filename"] == wanted:
            return f["url"], f["hashes"]["sha256"]
    raise SystemExit(f"{name}=={version}: the index lists no source archive {wanted}")


def _tls() -> ssl.SSLContext:
    # pip's configured bundle (PIP_CERT) where there is one: the same trust pip has.
    import os

    cert = os.environ.get("PIP_CERT")
    return ssl.create_default_context(cafile=cert) if cert else ssl.create_default_context()


def fetch(name: str, version: str, dest: Path) -> Path:
    """Download, verify and unpack; return the unpacked folder."""
    url, sha = sdist_of(name, version)
    dest.mkdir(parents=True, exist_ok=True)
    archive = dest / url.rsplit("/", 1)[1]
    # An archive already here is used when its hash is the index's (hashed once either way).
    got = hashlib.sha256(archive.read_bytes()).hexdigest() if archive.exists() else None
    if got != sha:
        with urllib.request.urlopen(url, context=_tls()) as r:
            body = r.read()
        archive.write_bytes(body)
        got = hashlib.sha256(body).hexdigest()
    if got != sha:
        archive.unlink()
        raise SystemExit(f"{archive.name}: sha256 {got} is not the index's {sha}")
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    print(f"{archive.name} sha256 {sha} (matches the index)")
    return dest / archive.name.removesuffix(".tar.gz")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/fetch_engine_source.py")
    parser.add_argument("name")
    parser.add_argument("version")
    parser.add_argument("dest", type=Path)
    args = parser.parse_args(argv)
    print(fetch(args.name, args.version, args.dest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
