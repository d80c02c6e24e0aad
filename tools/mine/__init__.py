"""Mining the engines' own tests, one module per engine (issue 29, item 1).

vLLM's archives carry ``tests/`` and are mined by ``tools/mine_engine_tests.py``; the engines
here (SGLang, speculators, llama.cpp, z-lab dflash) are each one module with its reviewed
table, its cases and its ``main``, sharing the coverage page of ``coverage.py``.
"""
