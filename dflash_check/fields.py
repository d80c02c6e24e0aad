"""Typed reads of JSON config fields, with one-line errors that name model, file and field.

Config files come from strangers: every value is checked for its JSON type before use, and a bad
one becomes a ``ConfigError`` whose text says which model, which file and which field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dflash_check.errors import ConfigError

# Dimensions above this are not plausible for any model and are treated as malformed input;
# it also keeps arithmetic on them (ids x hidden size) far from surprising territory.
MAX_DIMENSION = 2**31 - 1
# Longest list of integers accepted (layer ids): real drafts tap 3-8 layers, and no model has
# more than a few hundred; a longer list is malformed input, refused before any rule runs.
MAX_LIST_ITEMS = 1024


def describe(value: Any) -> str:
    """Return a short, safe description of a JSON value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {json.dumps(shown)}"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, int):
        return f"integer {value}" if abs(value) < 10**12 else "a huge integer"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# eq=False: a reader of one JSON object (what it reads is the value, not the reader), never
# compared; no generated __eq__/__hash__ to compile at start-up.
@dataclass(frozen=True, eq=False)
class FieldReader:
    """Read fields of one JSON object, naming ``who`` (the model) and ``where`` (the file)."""

    who: str
    """The role and name of the model, e.g. ``draft z-lab/Qwen3-4B-DFlash-b16``."""
    where: str
    """The file the object came from, e.g. ``config.json``."""
    data: Mapping[str, Any]
    """The JSON object."""
    prefix: str = ""
    """Dotted path of this object inside the file (``text_config.``), for messages."""

    def fail(self, key: str, problem: str) -> ConfigError:
        """Build the error for field ``key``."""
        return ConfigError(f"{self.who}: {self.where}: field '{self.prefix}{key}' {problem}")

    def has(self, key: str) -> bool:
        """Return whether ``key`` is present with a non-null value."""
        return self.data.get(key) is not None

    def is_null(self, key: str) -> bool:
        """Return whether ``key`` is present with an explicit JSON null (not merely absent)."""
        return key in self.data and self.data[key] is None

    def child(self, key: str) -> FieldReader | None:
        """Return a reader for the nested object ``key``, None if absent or null."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(key, f"must be an object, got {describe(value)}")
        return FieldReader(self.who, self.where, value, f"{self.prefix}{key}.")

    def integer(self, key: str, *, required: bool = False, minimum: int = 1) -> int | None:
        """Read an integer in ``[minimum, MAX_DIMENSION]``; None when absent and not required."""
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.fail(key, "is missing" if key not in self.data else "is null")
            return None
        return self.check_int(key, value, minimum)

    def check_int(self, key: str, value: Any, minimum: int) -> int:
        """Validate ``value`` (read from ``key``) as an integer in range."""
        # JSON has one number type: 36.0 is a float here and is rejected, because a config
        # writer that emits it is broken and runtimes differ in how they would coerce it.
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and not math.isfinite(value):
                raise self.fail(key, f"must be an integer, got {value!r}")
            raise self.fail(key, f"must be an integer, got {describe(value)}")
        if value < minimum:
            raise self.fail(key, f"must be >= {minimum}, got {value}")
        if value > MAX_DIMENSION:
            raise self.fail(key, f"is implausibly large ({describe(value)})")
        return value

    def strings(self, key: str) -> tuple[str, ...] | None:
        """Read a list of strings; None when absent."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, f"must be a list of strings, got {describe(value)}")
        return tuple(value)

    def string(self, key: str) -> str | None:
        """Read a string; None when absent."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {describe(value)}")
        return value

    def integers(self, key: str) -> tuple[int, ...] | None:
        """Read a list of integers (any sign: the rules judge the values); None when absent."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.fail(key, f"must be a list of integers, got {describe(value)}")
        if len(value) > MAX_LIST_ITEMS:
            raise self.fail(
                key, f"has {len(value)} entries, more than the {MAX_LIST_ITEMS} accepted"
            )
        out = []
        for i, item in enumerate(value):
            if isinstance(item, bool) or not isinstance(item, int):
                raise self.fail(f"{key}[{i}]", f"must be an integer, got {describe(item)}")
            if abs(item) > MAX_DIMENSION:
                raise self.fail(f"{key}[{i}]", f"is implausibly large ({describe(item)})")
            out.append(item)
        return tuple(out)


def parse_json_object(raw: bytes, who: str, where: str) -> dict[str, Any]:
    """Parse ``raw`` as a JSON object, or raise a ``ConfigError`` naming the file."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{who}: {where}: not UTF-8 text (byte {err.start})") from err
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"{who}: {where}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}"
        ) from err
    except RecursionError as err:
        raise ConfigError(f"{who}: {where}: JSON nested too deeply") from err
    except ValueError as err:
        # Python refuses integers of more than 4,300 digits (int_max_str_digits).
        raise ConfigError(f"{who}: {where}: malformed JSON: {str(err)[:80]}") from err
    if not isinstance(data, dict):
        raise ConfigError(f"{who}: {where}: expected a JSON object, got {describe(data)}")
    return data
