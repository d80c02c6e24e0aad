"""The pure core: model views, runtime profiles, rules and the check itself.

Nothing in this package does I/O, prints, or imports typer, rich, torch or transformers.
"""
