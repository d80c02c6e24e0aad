"""What the tool knows about each serving engine, organised by engine and release.

``engines`` holds one entity per engine (its releases, runners, the methods it loads, whether
the tool can drive it) and the citation builder every knowledge row uses; ``outcomes`` holds how
each engine fails on each rule (at load, at the first decode, or silently). The per-method
tables (``knowledge/runtimes/``) refer to these entities instead of retyping names and revisions.
"""
