"""Allow ``python -m dflash_check``."""

from dflash_check.cli import main

main()
