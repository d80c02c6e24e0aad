"""Compare two tokenizers: do the ids a draft emits mean the same tokens to the target?

Hashes decide the common case without reading a vocabulary: the same ``tokenizer.json`` bytes
mean the same tokenizer. Only when the hashes differ are the vocabularies read and compared id
by id, since two files can differ in whitespace or metadata and still map ids identically.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dflash_check.errors import ConfigError


@dataclass(frozen=True)
class TokenizerComparison:
    """The outcome of comparing the draft's and the target's tokenizers."""

    same_file: bool
    """Both ``tokenizer.json`` files have the same hash."""
    compared_ids: int = 0
    """How many ids exist in both vocabularies (0 when the files were identical)."""
    differing_ids: int = 0
    """How many of those ids map to different tokens."""
    first_difference: tuple[int, str, str] | None = None
    """(id, draft token, target token) of the lowest differing id."""
    draft_only: int = 0
    """Ids the draft's vocabulary has and the target's lacks."""
    target_tokens: int | None = None
    """Tokens in the target's vocabulary (None when the files were identical, so not read)."""
    target_token_ids: tuple[tuple[str, int], ...] = ()
    """(token, id) in the target's vocabulary of the tokens asked about that it has (the mask
    token SGLang looks up); empty when the vocabulary was not read."""


def vocab_from_tokenizer_json(raw: bytes, who: str, where: str) -> dict[int, str]:
    """Return id -> token from a ``tokenizer.json`` (model vocab plus added tokens)."""
    try:
        data: Any = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise ConfigError(f"{who}: {where}: malformed JSON") from err
    if not isinstance(data, dict):
        raise ConfigError(f"{who}: {where}: expected a JSON object")
    model = data.get("model")
    vocab = model.get("vocab") if isinstance(model, dict) else None
    out: dict[int, str] = {}
    if isinstance(vocab, dict):
        out.update({i: tok for tok, i in vocab.items() if isinstance(i, int)})
    elif isinstance(vocab, list):  # Unigram: [[token, score], ...]
        out.update({i: entry[0] for i, entry in enumerate(vocab) if isinstance(entry, list)})
    else:
        raise ConfigError(f"{who}: {where}: field 'model.vocab' is missing")
    for added in data.get("added_tokens") or []:
        if isinstance(added, dict) and isinstance(added.get("id"), int):
            out[added["id"]] = str(added.get("content"))
    return out


def compare_vocabs(
    draft: Mapping[int, str], target: Mapping[int, str], lookup: tuple[str, ...] = ()
) -> TokenizerComparison:
    """Compare two id -> token maps over the ids they share, and find the ``lookup`` tokens'
    ids in the target's (the highest id when a token appears twice, as an added token
    overriding the base vocabulary does)."""
    wanted = set(lookup)
    found: dict[str, int] = {}
    for i, token in target.items():
        if token in wanted and i > found.get(token, -1):
            found[token] = i
    shared = sorted(set(draft) & set(target))
    differing = [i for i in shared if draft[i] != target[i]]
    first = (differing[0], draft[differing[0]], target[differing[0]]) if differing else None
    return TokenizerComparison(
        same_file=False,
        compared_ids=len(shared),
        differing_ids=len(differing),
        first_difference=first,
        draft_only=len(set(draft) - set(target)),
        target_tokens=len(target),
        target_token_ids=tuple(sorted(found.items())),
    )
