"""The speculative settings a user gives an engine: the method vLLM is asked for
(``--speculative-method``, a ``pairs.yaml`` entry's ``method``) and the draft length
(``--num-speculative-tokens``), with what the engines accept of them; and the engine settings
a verdict depends on (``EngineSettings``), read from the engine's own flags as a user launches
it (``--engine-arg``, a ``pairs.yaml`` entry's ``engine_args``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

MAX_SPECULATIVE_TOKENS = 1024
"""Largest draft length accepted as an engine setting: drafts train blocks of 8-32, so more is
a typo, not a setting (``--num-speculative-tokens``, ``pairs.yaml``)."""

SPECULATIVE_METHODS: tuple[str, ...] = (
    "dflash",
    "dspark",
    "eagle",
    "eagle3",
    "mtp",
    "draft_model",
    "ngram",
    "ngram_gpu",
    "suffix",
    "extract_hidden_states",
)
"""The values of vLLM's ``speculative_config.method`` (``--speculative-method``), besides the
per-model MTP names ending in ``_mtp``, which it serves as ``mtp``
(vllm==0.34.0:vllm/config/speculative.py:53-97, 1375-1379)."""


def vllm_method(requested: str) -> str:
    """Return the method vLLM runs for ``requested``: a per-model MTP name is ``mtp``."""
    requested = requested.strip().lower()
    return "mtp" if requested.endswith("_mtp") else requested


def known_method(requested: str) -> bool:
    """Whether ``requested`` is a ``speculative_config.method`` vLLM accepts."""
    return vllm_method(requested) in SPECULATIVE_METHODS


class SettingsError(ValueError):
    """An engine argument the check reads has a value the engine would not start with (the
    CLI makes it a usage error, ``pairs.yaml`` an error at the entry's line)."""


@dataclass(frozen=True)
class SglangSettings:
    """The SGLang server settings a verdict depends on, as SGLang 0.5.23 resolves them from
    its own flags (``sglang/srt/server_args.py``, ``arg_groups/``)."""

    attn_dp_size: int = 1
    """The attention data-parallel width: ``--attn-dp-size N``, or the deprecated
    ``--dp-size N --enable-dp-attention``, which resolution turns into it
    (sglang==0.5.23:sglang/srt/arg_groups/parallel_hook.py:39-61). DP attention runs when it
    is above 1 (``attn_dp_enabled_of``, runtime_context.py:191-199): ``--enable-dp-attention``
    with the default ``--dp-size 1`` leaves it off."""
    speculative_num_draft_tokens: int | None = None
    """``--speculative-num-draft-tokens``, the verify window every algorithm reads; None: not
    given (``draft_tokens`` says what SGLang starts with for a draft's method)."""
    speculative_dflash_block_size: int | None = None
    """``--speculative-dflash-block-size``: for DFLASH only, an alias of the draft tokens
    (arg_groups/speculative_hook.py:368-386; fields/spec.py:70-73). Kept apart because
    SGLang ignores it for DSPARK and EAGLE3, and refuses it for DFLASH only where it differs
    from ``--speculative-num-draft-tokens`` (``dflash_conflict``)."""
    speculative_dspark_block_size: int | None = None
    """``--speculative-dspark-block-size``: for DSPARK only, the draft's gamma; the verify
    window is then gamma + 1 (speculative_hook.py:807-838; fields/spec.py:78-81)."""

    speculative_num_steps: int | None = None
    """``--speculative-num-steps``: how many draft steps an EAGLE-family draft (NEXTN, the
    target's own MTP layers) runs; None: SGLang picks it per architecture
    (speculative_hook.py:1159-1174, 1430-1458; fields/spec.py:58-61)."""
    speculative_eagle_topk: int | None = None
    """``--speculative-eagle-topk``: the EAGLE tree's branching; at 1 SGLang sets the draft
    tokens to num_steps + 1 (speculative_hook.py:1256-1266; fields/spec.py:62-65)."""

    @property
    def dp_attention(self) -> bool:
        """Whether the server runs attention data-parallel."""
        return self.attn_dp_size > 1

    def draft_tokens(self, method: str) -> int | None:
        """Return the ``speculative_num_draft_tokens`` SGLang starts a draft of ``method``
        with, from the flags alone; None: from the draft's config (its block_size for DFLASH,
        gamma + 1 for DSPARK), else SGLang's default. Each algorithm reads only its own alias
        (speculative_hook.py:368-386 for DFLASH, :807-838 for DSPARK)."""
        if self.speculative_num_draft_tokens is not None:
            return self.speculative_num_draft_tokens
        if _runs_as_dflash(method):
            return self.speculative_dflash_block_size
        if method == "dspark" and self.speculative_dspark_block_size is not None:
            return self.speculative_dspark_block_size + 1
        return None

    def dflash_conflict(self, method: str) -> tuple[int, int] | None:
        """Return (draft tokens, DFlash block size) where both flags are given, differ and a
        draft of ``method`` runs as DFLASH, which SGLang then refuses while the server
        arguments resolve (speculative_hook.py:374-384); None otherwise (DSPARK and EAGLE3
        ignore the DFlash alias)."""
        tokens, block = self.speculative_num_draft_tokens, self.speculative_dflash_block_size
        if not _runs_as_dflash(method) or tokens is None or block is None or tokens == block:
            return None
        return tokens, block

    def draft_length_args(self, method: str) -> list[str]:
        """Return the draft-length flags a serve command passes for a draft of ``method``, as
        the user gave them, one flag per setting (empty: none given, the command derives its
        own). DSpark's gamma stays its own flag: with it SGLang does not read gamma from the
        draft's config (speculative_hook.py:807-813), which a derived window would change.
        Two DFLASH flags that differ both stay, so the command is the one judged (DF019:
        SGLang refuses them, ``dflash_conflict``), not a setting the check never saw."""
        gamma = self.speculative_dspark_block_size if method == "dspark" else None
        if gamma is not None:
            given = self.speculative_num_draft_tokens
            window = [] if given is None else ["--speculative-num-draft-tokens", str(given)]
            return ["--speculative-dspark-block-size", str(gamma), *window]
        conflict = self.dflash_conflict(method)
        if conflict is not None:
            tokens, block = conflict
            return [
                "--speculative-num-draft-tokens",
                str(tokens),
                "--speculative-dflash-block-size",
                str(block),
            ]
        tokens = self.draft_tokens(method)
        return [] if tokens is None else ["--speculative-num-draft-tokens", str(tokens)]

    @staticmethod
    def flag(field: str) -> str:
        """Return the flag of setting ``field`` in SGLang's current spelling, the one reports
        name: the first of its flags in the parser's table, the aliases after it."""
        return _SGLANG_FLAG_OF[field]

    def stated(self) -> dict[str, int]:
        """Return field -> value for the settings that differ from SGLang's defaults: what
        the flags changed (a flag given at its default judges as no flag)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != f.default
        }


@dataclass(frozen=True)
class EngineSettings:
    """The engine settings a verdict depends on, per engine, parsed once from the engine's
    own flags (``--engine-arg``, a ``pairs.yaml`` entry's ``engine_args``)."""

    sglang: SglangSettings = SglangSettings()
    """SGLang's server settings."""

    def of(self, engine: str) -> SglangSettings | None:
        """Return the settings of ``engine`` (None: the check reads none of its flags)."""
        found = {f.name: getattr(self, f.name) for f in fields(self)}.get(engine)
        return found if isinstance(found, SglangSettings) else None

    def stated(self) -> dict[str, dict[str, int]]:
        """Return engine -> field -> value for the settings that differ from each engine's
        defaults (the reports' ``engine_settings``); empty: every engine at its defaults."""
        every = {f.name: getattr(self, f.name).stated() for f in fields(self)}
        return {engine: given for engine, given in every.items() if given}

    def text(self) -> str | None:
        """Return the stated settings as the engines' flags, ``sglang --attn-dp-size 2``
        (engines joined by ``; ``), or None when every engine is at its defaults."""
        parts = [
            # Each engine's settings name their own flags: no table here keyed by engine.
            " ".join([engine, *(f"{getattr(self, engine).flag(k)} {v}" for k, v in given.items())])
            for engine, given in self.stated().items()
        ]
        return "; ".join(parts) or None


NO_ENGINE_SETTINGS = EngineSettings()
"""Every engine with its defaults: what a check assumes without engine arguments."""

_SGLANG_SWITCHES = {"--enable-dp-attention": "enable_dp_attention"}
"""SGLang's store-true flags the check reads (server_args.py:416-424)."""
_SGLANG_INTEGERS = {
    "--attn-dp-size": "attn_dp_size",
    "--attention-data-parallel-size": "attn_dp_size",
    "--dp-size": "dp_size",
    "--data-parallel-size": "dp_size",
    "--speculative-num-draft-tokens": "speculative_num_draft_tokens",
    "--speculative-dflash-block-size": "speculative_dflash_block_size",
    "--speculative-dspark-block-size": "speculative_dspark_block_size",
    "--speculative-num-steps": "speculative_num_steps",
    "--speculative-eagle-topk": "speculative_eagle_topk",
}
"""SGLang's integer flags the check reads, with their aliases (arg_groups/fields/parallel.py
:73-90, fields/spec.py:58-81): the field each sets."""

DRAFT_LENGTH_FLAGS: frozenset[str] = frozenset(
    flag
    for flag, field in _SGLANG_INTEGERS.items()
    if field.startswith("speculative_") and field.endswith(("_draft_tokens", "_block_size"))
)
"""SGLang's draft-length flags: its serve command writes them from the parsed settings
(``SglangSettings.draft_length_args``), so ``without_flags`` drops a user's own copy."""


SGLANG_ALGORITHMS = MappingProxyType(
    {
        "dflash": "DFLASH",
        "dflash2": "DFLASH",
        "dspark": "DSPARK",
        "eagle3": "EAGLE3",
        # NEXTN is the documented name, but SGLang resolves it to EAGLE only after the model
        # hooks ran (arg_groups/pipeline.py:225 before :306), and DeepSeek V4's compares the
        # raw string with EAGLE (deepseek_v4_hook.py:148-154): EAGLE passes everywhere.
        "mtp": "EAGLE",
    }
)
"""The draft's method -> SGLang's ``--speculative-algorithm`` (the names of
``SpeculativeAlgorithm``, sglang==0.5.23:sglang/srt/speculative/spec_info.py:39-43, read
case-insensitively by ``from_string`` at :50-58; DFlash 2 runs as DFLASH since
sgl-project/sglang#35371; a NextN checkpoint as EAGLE, NEXTN's resolution at
arg_groups/speculative_hook.py:109-115). Here, with SGLang's other flags, rather than in its
engine module: the draft-length flags a method reads follow from its algorithm
(``_runs_as_dflash``), and the engine module imports this one for its serve command."""


def _first_flags(table: dict[str, str], named: Iterable[str]) -> dict[str, str]:
    """Return field -> its first flag in a parser's ``table`` (flag -> field), for the fields
    ``named``, in the table's order."""
    named = set(named)
    first: dict[str, str] = {}
    for flag, field in table.items():
        if field in named:
            first.setdefault(field, flag)
    return first


# A field that resolution folds away (``dp_size``) is no setting: no report names it.
_SGLANG_FLAG_OF = _first_flags(_SGLANG_INTEGERS, (f.name for f in fields(SglangSettings)))
"""Each SGLang settings field's flag in its current spelling (``SglangSettings.flag``)."""


def read_flags_text() -> str:
    """Return the engine flags the check reads, from the parser's tables, each by its first
    spelling (``SGLang: --attn-dp-size N, ...``; help and the pairs.yaml schema)."""
    first = _first_flags(_SGLANG_INTEGERS, _SGLANG_INTEGERS.values())
    flags = [f"{flag} N" for flag in first.values()] + list(_SGLANG_SWITCHES)
    return f"SGLang: {', '.join(flags)}, and their aliases"


def _runs_as_dflash(method: str) -> bool:
    """Whether SGLang serves a draft of ``method`` as DFLASH, the one algorithm that reads
    ``--speculative-dflash-block-size`` (DFlash 2 too: ``SGLANG_ALGORITHMS``)."""
    return SGLANG_ALGORITHMS.get(method) == "DFLASH"


def _positive(flag: str, text: str) -> int:
    """Return ``text`` as argparse's ``int`` reads it, refusing what is not a positive count
    (SGLang refuses a width below 1 at start-up, and a draft length below 1 drafts nothing)."""
    try:
        value = int(text)
    except ValueError:
        raise SettingsError(f"{flag} needs a positive integer, not {text!r}") from None
    if not 1 <= value <= MAX_SPECULATIVE_TOKENS:
        raise SettingsError(
            f"{flag} needs a positive integer up to {MAX_SPECULATIVE_TOKENS}, not {value}"
        )
    return value


def _read_flags(args: Sequence[str]) -> dict[str, Any]:
    """Return field -> value for the flags of ``args`` the check reads, in argparse's forms
    (``--flag=VALUE`` and ``--flag VALUE``; the last one given wins, as in argparse)."""
    given: dict[str, Any] = {}
    rest = iter(args)
    for arg in rest:
        flag, eq, inline = arg.partition("=")
        if flag in _SGLANG_SWITCHES:
            if eq:  # argparse: "ignored explicit argument"
                raise SettingsError(f"{flag} takes no value, not {inline!r}")
            given[_SGLANG_SWITCHES[flag]] = True
        elif flag in _SGLANG_INTEGERS:
            text = inline if eq else next(rest, None)
            if text is None:
                raise SettingsError(f"{flag} needs a value: {flag}=N")
            given[_SGLANG_INTEGERS[flag]] = _positive(flag, text)
        # Any other argument is the engine's own business: it still goes to --launch.
    return given


def parse_engine_args(args: Sequence[str]) -> EngineSettings:
    """Return the settings ``args`` (engine flags, as given to ``--engine-arg``) give each
    engine, resolved as the engine resolves them; raise ``SettingsError`` for a value the
    engine would refuse to start with."""
    given = _read_flags(args)
    attn_dp, dp = given.get("attn_dp_size", 1), given.get("dp_size", 1)
    if given.get("enable_dp_attention") and attn_dp == 1:  # the deprecated spelling
        attn_dp, dp = dp, 1
    if attn_dp > 1 and dp > 1:  # parallel_hook.py:285-292
        raise SettingsError(
            f"--dp-size {dp} with --attn-dp-size {attn_dp}: SGLang does not start data-parallel "
            "replicas with attention data parallelism"
        )
    # --speculative-num-draft-tokens and --speculative-dflash-block-size that differ are
    # refused by SGLang for DFLASH only (speculative_hook.py:374-384): the draft's method is
    # not known here, so DF019 says it for a DFlash draft and other drafts start with them.
    return EngineSettings(
        SglangSettings(
            attn_dp,
            given.get("speculative_num_draft_tokens"),
            given.get("speculative_dflash_block_size"),
            given.get("speculative_dspark_block_size"),
            given.get("speculative_num_steps"),
            given.get("speculative_eagle_topk"),
        )
    )


def without_flags(args: Sequence[str], flags: frozenset[str]) -> tuple[str, ...]:
    """Return ``args`` without the integer flags in ``flags`` and their values, in either
    argparse form: what a serve command that writes those flags itself passes on of a user's
    engine arguments (one flag, not two: the later copy would win, or SGLang refuses two
    draft lengths that differ)."""
    kept: list[str] = []
    rest = iter(args)
    for arg in rest:
        flag, eq, _ = arg.partition("=")
        if flag not in flags:
            kept.append(arg)
        elif not eq:
            next(rest, None)  # its value, the next argument
    return tuple(kept)
