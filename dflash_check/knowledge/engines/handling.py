"""What an engine does with a draft where a rule asks it, rather than naming the engine.

A rule that judges one engine's behaviour asks the engine's ``Engine.handling`` (this value,
filled in the engine's own module), so that no rule compares engine names and a new engine
states its own answers in its module. An engine that fills none keeps the defaults: the
behaviour was not read for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DraftHandling:
    """The answers an engine gives the rules about a draft; defaults: not read for it."""

    class_runners: tuple[str | None, ...] = ()
    """The runners (None: the engine's only one) that build the draft classes its releases'
    class fields describe (``Release.xpress``, ``beam_dflash2_contract``, ``dflash_anchor``,
    ``dflash2_nope``): vLLM's V2 alone, since its V1 refuses those drafts while it resolves the
    config, before any class is built (DF016), and its proposer does not read
    ``sample_from_anchor`` (DF021). Empty: no class of it is judged from those fields."""
    pads_dspark_vocab: bool = False
    """Whether it serves a DSpark draft's vocabulary larger than the target's as padding (so
    DF007 says nothing of it)."""
    dspark_larger_vocab: str = ""
    """What it does with a DSpark draft's larger vocabulary, appended to DF007's message
    (``; ...``), where that was read; empty: not read."""
    vocab_from_tensors: bool = False
    """Whether its converter sizes the draft's vocabulary from the draft's tensors, not its
    config (DF007's ``_tensors_decide``)."""
    speculators_need_ids: bool = False
    """Whether its speculators loader indexes the layer-ids key before any fallback could
    apply, so a speculators draft without ids fails at load (DF011's ``_guess``)."""
    captures_each_layer_once: bool = False
    """Whether it feeds one feature per distinct captured layer, not per id (DF009)."""
    decode_shape_runners: tuple[str | None, ...] = ()
    """The runners where a fed feature count that differs from the draft's fc fails at the
    first decode, the same count running silently (DF009's stage); empty: the rule's own."""
    copies_dspark_noise: bool = False
    """Whether, for a DSpark draft read at its text_config, it copies the top-level
    ``dspark_noise_token_id`` onto it before reading its mask keys there (DF026)."""

    def builds_classes(self, runner: str | None) -> bool:
        """Whether ``runner`` builds the draft classes its releases' class fields describe."""
        return runner in self.class_runners


NOT_READ = DraftHandling()
"""The answers of an engine whose behaviour the rules ask about was not read: the defaults."""
