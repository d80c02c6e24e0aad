"""The package list, with docs/ shipped as ``dflash_check/docs`` (everything else: pyproject).

The pages messages cite (``dflash-check docs PAGE``) must be in an installed package, and
pyproject's ``packages.find`` cannot add a package whose folder lies outside ``dflash_check/``.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["dflash_check*"]), "dflash_check.docs"],
    package_dir={"dflash_check.docs": "docs"},
)
