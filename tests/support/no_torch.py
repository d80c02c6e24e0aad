"""A ``python -c`` program that runs the CLI as if torch and transformers were not installed
(the check path without the ``smoke`` extra), shared by the tests that need one."""

from __future__ import annotations

BLOCK_TORCH = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name in ("torch", "transformers"):
            raise ImportError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
sys.argv = ["dflash-check", *sys.argv[1:]]
from dflash_check.cli import main
main()
"""
