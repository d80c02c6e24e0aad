"""The reference listings of `rules`, `explain`, `runtimes` and `formats`, rendered from the tables.

Each module renders one table in the three forms of those commands (terminal text, JSON,
Markdown); the Markdown forms are also the generated pages docs/rules.md, docs/runtimes.md and
docs/formats.md (``tools/gen_docs.py`` writes them, ``tests/unit/test_docs.py`` keeps them current).
"""
