"""Renderers: turn a ``CheckReport`` into text. They never print and never decide exit codes."""
