"""Option groups: a command takes a few typed groups, typer sees their options flat.

A command such as ``pair`` has some forty options; as forty parameters, every flow that needs a
few of them was handed the lot. Here each group is a frozen dataclass with a ``parse``
classmethod whose parameters are the group's options (the ``Annotated`` aliases, each with its
``rich_help_panel``, so ``pair --help`` reads as a few panels). ``grouped`` gives the command
the flattened signature typer reads (``inspect.signature`` honours ``__signature__``) and calls
it with one built value per group, so the command body stays a few lines of hand-over.

A group is built once per run and never compared: it is declared ``eq=False``, so that no
``__eq__``/``__hash__`` is compiled for it on every start-up (benchmarks/bench_pair.py).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def _options(parse: Callable[..., Any]) -> list[inspect.Parameter]:
    """Return ``parse``'s parameters with their annotations resolved (typer needs the
    ``Annotated`` objects, not the strings ``from __future__ import annotations`` leaves)."""
    hints = typing.get_type_hints(parse, include_extras=True)
    return [
        p.replace(annotation=hints[p.name], kind=inspect.Parameter.KEYWORD_ONLY)
        for p in inspect.signature(parse).parameters.values()
    ]


def grouped(command: F) -> F:
    """Return ``command`` as typer should see it: each keyword-only parameter whose type has a
    ``parse`` classmethod becomes that method's options; the rest are kept as they are."""
    hints = typing.get_type_hints(command, include_extras=True)
    flat: list[inspect.Parameter] = []
    groups: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {}
    for p in inspect.signature(command).parameters.values():
        kind = hints.get(p.name)
        parse = getattr(kind, "parse", None)
        if p.kind is inspect.Parameter.KEYWORD_ONLY and callable(parse):
            options = _options(parse)
            groups[p.name] = (parse, tuple(o.name for o in options))
            flat += options
        else:
            flat.append(p.replace(annotation=hints.get(p.name, p.annotation)))
    names = [p.name for p in flat]
    if len(set(names)) != len(names):
        raise TypeError(f"{command.__name__}: two option groups share an option name")

    @functools.wraps(command)
    def run(**given: Any) -> Any:
        built = {
            name: parse(**{o: given.pop(o) for o in options})
            for name, (parse, options) in groups.items()
        }
        return command(**given, **built)

    run.__signature__ = inspect.Signature(flat)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in flat}
    del run.__wrapped__  # typer must read the flat signature, not the grouped one
    return typing.cast(F, run)
