"""Build the target view from a target's files (the target's counterpart of ``formats/``).

A draft's config given as the target is refused here (by the draft formats' own detection), and
the target's engine family is looked up in ``knowledge/families.py``.
"""

from __future__ import annotations

from dflash_check.check.formats import draft_format_of
from dflash_check.errors import ConfigError
from dflash_check.fields import FieldReader
from dflash_check.knowledge.config_classes import MLP_KEYS
from dflash_check.knowledge.families import family_of
from dflash_check.views import (
    ATTENTION_KEYS,
    ModelFiles,
    TargetView,
    lm_head_quantization,
    rope_facts,
    special_token_ids,
    stated,
)


def _has_dimensions(reader: FieldReader | None) -> bool:
    """Whether a nested config states the text model's dimensions (some text-only configs
    carry a vestigial empty ``text_config``, which must not win over the top level)."""
    return reader is not None and (reader.has("num_hidden_layers") or reader.has("hidden_size"))


def _text_reader(files: ModelFiles) -> tuple[FieldReader, FieldReader, bool]:
    """Return (top-level reader, text-model reader, nested?) for a config."""
    top = FieldReader(files.who, files.config_location, files.config)
    text = top.child("text_config")
    # A wrapper keeps its language model under text_config.
    if _has_dimensions(text):
        assert text is not None  # _has_dimensions checked it
        return top, text, True
    # Qwen3-Omni keeps it one level deeper, under the thinker: vLLM reads
    # thinker_config.text_config (0.32.0-0.34.0 vllm/config/speculative.py, e.g. 0.34.0
    # :167-172, _get_qwen3_omni_text_config).
    thinker = top.child("thinker_config")
    omni = thinker.child("text_config") if thinker is not None else None
    if _has_dimensions(omni):
        assert omni is not None  # _has_dimensions checked it
        return top, omni, True
    return top, top, False


def _target_layers(files: ModelFiles, text: FieldReader) -> tuple[int, str]:
    """Return the target's layer count and the key it came from."""
    n = text.integer("num_hidden_layers")
    if n is not None:
        return n, f"{text.prefix}num_hidden_layers"
    # Nemotron-H Ultra configs have no num_hidden_layers: one entry per layer instead.
    for key in ("layers_block_type", "hybrid_override_pattern"):
        value = text.data.get(key)
        if isinstance(value, (list, str)) and len(value) > 0:
            return len(value), f"len({text.prefix}{key})"
    raise ConfigError(
        f"{files.who}: {files.config_location}: no layer count "
        f"(field '{text.prefix}num_hidden_layers' is missing)",
        hint="the target must state num_hidden_layers (or text_config.num_hidden_layers, "
        "thinker_config.text_config.num_hidden_layers)",
    )


def normalise_target(files: ModelFiles) -> TargetView:
    """Build the target view, reading text dimensions from ``text_config`` when nested."""
    top, text, nested = _text_reader(files)
    architectures = top.strings("architectures") or ()
    found = draft_format_of(files.config)
    if found is not None:
        raise ConfigError(
            f"{files.who}: {files.config_location}: this is a draft "
            f"({found.title}: {', '.join(architectures) or 'no architectures'}), not a target "
            "model",
            hint="the arguments are DRAFT then TARGET: did you swap them?",
        )
    n, layers_key = _target_layers(files, text)
    hidden = text.integer("hidden_size", required=True)
    vocab = text.integer("vocab_size", required=True)
    assert hidden is not None and vocab is not None  # required=True guarantees it
    model_types = tuple(
        m for m in (top.string("model_type"), text.string("model_type") if nested else None) if m
    )
    family = family_of(architectures, model_types)
    return TargetView(
        name=files.name,
        family=family.name if family is not None else None,
        model_types=model_types,
        architectures=architectures,
        model_type=text.string("model_type") or top.string("model_type"),
        nested=nested,
        text_prefix=text.prefix,
        num_hidden_layers=n,
        layers_key=layers_key,
        hidden_size=hidden,
        vocab_size=vocab,
        max_position_embeddings=text.integer("max_position_embeddings")
        or (top.integer("max_position_embeddings") if nested else None),
        token_ids=special_token_ids((text, top) if nested else (top,)),
        rope=rope_facts(text),
        attention=stated(text, ATTENTION_KEYS),
        mlp=stated(text, MLP_KEYS),
        lm_head_quantization=lm_head_quantization((text, top) if nested else (top,)),
        remote_code="auto_map" in files.config,
    )
