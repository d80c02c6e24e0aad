"""``runtimes`` and ``formats``: the runtime profiles and the draft formats, as tables."""

from __future__ import annotations

from dflash_check.cli.output import print_listing
from dflash_check.cli.rules import DocFormat, DocFormatOpt


def runtimes(output_format: DocFormatOpt = DocFormat.table) -> None:
    """List the runtime profiles: how each runtime reads target_layer_ids."""
    print_listing("runtimes", output_format.value)


def formats(output_format: DocFormatOpt = DocFormat.table) -> None:
    """List the draft formats: how each keeps its keys and numbers its layer ids."""
    print_listing("formats", output_format.value)
