"""A target's own MTP (NextN) layers, asked about the target alone (``dflash-check pair TARGET``).

Many targets ship their multi-token-prediction layers inside the checkpoint; the serving
engines then build the draft from the target itself. This module reads how many MTP layers the
config states (the key differs by family), what each engine would build from them
(``MTP_ENGINE_ROWS``, with the engine source each fact was read from), and whether the
checkpoint's tensor names really hold them. Pure: no file or network access, no torch.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Literal

from dflash_check.check.report import Finding, Severity, Verdict
from dflash_check.check.rules import TARGET_ALONE_RULES, Rule
from dflash_check.fields import FieldReader
from dflash_check.knowledge.engines import VLLM_033
from dflash_check.views import ModelFiles, TargetView, normalise_target

MTP_KEYS: tuple[str, ...] = ("mtp_num_hidden_layers", "num_mtp_modules", "num_nextn_predict_layers")
"""The keys that count a target's MTP layers, in the order they are taken as k when a config
states several: Qwen3.5/3.6 use ``mtp_num_hidden_layers`` (under ``text_config`` for the
multimodal wrappers); MiniMax ``num_mtp_modules`` (MiniMax-M3 also states
``num_nextn_predict_layers: 1``, but vLLM sizes its MTP draft by ``num_mtp_modules``,
``vllm/config/speculative.py:1131``); DeepSeek, GLM-5, MiMo, Nemotron 3, Step and Kimi
``num_nextn_predict_layers`` (Kimi states 0: none)."""

VLLM = VLLM_033.source
SGLANG = "sglang@0.5.23:sglang/srt"
TRTLLM = "NVIDIA/TensorRT-LLM@fcd3f316"

Placement = Literal["after", "mtp_layers", "mtp"]
"""Where a checkpoint keeps its MTP weights: ``after`` the decoder (``model.layers.{N}`` …
``model.layers.{N+k-1}``, DeepSeek), ``mtp_layers`` (``model.mtp_layers.{i}``, MiMo), or under
an ``mtp.`` prefix whose inner numbering is not one layer per MTP step (Qwen3.5, Qwen3-Next,
Nemotron-H: only the prefix is looked for)."""


@dataclass(frozen=True)
class MtpFamily:
    """How one family of targets lays out its MTP weights, matched on ``model_type``."""

    name: str
    """The family, for reports."""
    model_types: tuple[str, ...]
    """``model_type`` values (top level or ``text_config``) of the family."""
    placement: Placement
    """Where its checkpoints keep the MTP weights."""
    citation: str
    """The engine loader the placement was read from."""


FAMILIES: tuple[MtpFamily, ...] = (
    MtpFamily(
        "DeepSeek-V3/R1/V3.2, GLM-5",
        ("deepseek_v3", "deepseek_v32", "glm_moe_dsa", "kimi_k2"),
        "after",
        f"{VLLM}:vllm/model_executor/models/deepseek_mtp.py:151-163,541-575",
    ),
    MtpFamily(
        "MiMo",
        ("mimo",),
        "mtp_layers",
        f"{VLLM}:vllm/model_executor/models/mimo_mtp.py:96-115,183",
    ),
    MtpFamily(
        "Nemotron-H (Nemotron 3)",
        ("nemotron_h",),
        "mtp",
        f"{VLLM}:vllm/model_executor/models/nemotron_h_mtp.py:424,462",
    ),
    MtpFamily(
        "Qwen3-Next",
        ("qwen3_next",),
        "mtp",
        f"{VLLM}:vllm/model_executor/models/qwen3_next_mtp.py:231-241",
    ),
    MtpFamily(
        "Qwen3.5/3.6",
        ("qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"),
        "mtp",
        f"{VLLM}:vllm/model_executor/models/qwen3_5_mtp.py:302-318",
    ),
)
"""Families whose MTP weight names were read; for any other the weights are not looked for."""


@dataclass(frozen=True)
class EngineMtp:
    """What one engine builds from a target's MTP layers (one row of ``MTP_ENGINE_ROWS``)."""

    engine: str
    """``vllm``, ``sglang``, ``trtllm`` or ``llamacpp``."""
    match: tuple[str, ...]
    """Target ``architectures[0]`` or ``model_type`` values this row covers (empty: any)."""
    draft: str
    """The engine's MTP model class built from the target, or what is known of it."""
    request: str
    """How to ask for it ({k} is the MTP layer count)."""
    tokens: str
    """How many draft tokens per step it accepts against k."""
    on_missing: str
    """What it does when the checkpoint lacks the MTP weights."""
    citation: str
    """repo@commit:path:line the row was read from."""
    verified: bool = True
    """False when the row records what could not be read (its text says what)."""


_VLLM_ASK = '--speculative-config \'{"method": "mtp", "num_speculative_tokens": {k}}\''
_VLLM_TOKENS = (
    "default k; above k only multiples of k (the layers are rerun), "
    f"{VLLM}:vllm/config/speculative.py:1600-1612"
)
_VLLM_MISSING = (
    "refuses to load: 'MTP speculative decoding layer {N} weights missing from checkpoint' "
    f"({VLLM}:vllm/model_executor/models/deepseek_mtp.py:529-538)"
)
_VLLM_METHOD = (
    "the per-family method names (deepseek_mtp, qwen3_5_mtp, …) are deprecated aliases of mtp, "
    f"{VLLM}:vllm/config/speculative.py:1246-1250"
)
_SGL_ASK = "--speculative-algorithm NEXTN (an alias of EAGLE) --speculative-num-steps {k}"
_SGL_ASK_PATH = _SGL_ASK + " --speculative-draft-model-path <the target>"
_SGL_ONE_LAYER = (
    "builds one MTP layer (num_nextn_predict_layers set to 1) and reruns it per step, "
    f"{SGLANG}/configs/model_config.py"
)


_VLLM_UNCHECKED = "no completeness check found in its loader (behaviour not verified)"


def _vllm(
    match: tuple[str, ...], draft: str, line: str, on_missing: str = _VLLM_UNCHECKED
) -> EngineMtp:
    """One branch of vLLM's ``hf_config_override``: how it asks and what it builds."""
    return EngineMtp(
        "vllm",
        match,
        draft,
        _VLLM_ASK,
        _VLLM_TOKENS,
        on_missing,
        f"{VLLM}:vllm/config/speculative.py:{line}; {_VLLM_METHOD}",
    )


MTP_ENGINE_ROWS: tuple[EngineMtp, ...] = (
    # vLLM 0.33.0 rewrites the target's config into its MTP draft in
    # SpeculativeConfig.hf_config_override; each row is one branch of it.
    _vllm(
        ("deepseek_v3", "deepseek_v32", "glm_moe_dsa"),
        "DeepSeekMTPModel / DeepseekV32MTPModel (layers model.layers.{N}…)",
        "749-764",
        _VLLM_MISSING,
    ),
    _vllm(("deepseek_v4",), "DeepSeekV4MTPModel", "765-776", "not verified"),
    _vllm(("MiMoForCausalLM",), "MiMoMTPModel", "795-806"),
    _vllm(("Glm4MoeForCausalLM",), "Glm4MoeMTPModel", "848-857"),
    _vllm(("nemotron_h",), "NemotronHMTPModel (when num_nextn_predict_layers > 0)", "895-906"),
    _vllm(("qwen3_next",), "Qwen3NextMTP", "908-914"),
    _vllm(
        ("qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"),
        "Qwen3_5MTP / Qwen3_5MoeMTP (k from mtp_num_hidden_layers, top level or text_config)",
        "987-1006",
    ),
    _vllm(("step3p5", "step3p7"), "Step3p5MTP", "1039-1053"),
    _vllm(
        ("minimax_m3_vl", "MiniMaxM3SparseForConditionalGeneration"),
        "MiniMaxM3MTP (k from text_config.num_mtp_modules)",
        "1118-1134",
    ),
    EngineMtp(
        "vllm",
        (),
        "none: vLLM 0.33.0 maps no MTP draft for this architecture",
        "not available",
        "-",
        "-",
        f"{VLLM}:vllm/config/speculative.py:710-1165 (hf_config_override has no branch for it)",
    ),
    # SGLang 0.5.23 swaps the target's architecture for its NextN/MTP class when the draft is
    # the target (ModelConfig, is_draft_model), and fills the draft path in itself only for
    # the DeepSeek family (speculative_hook.py:1120-1147).
    EngineMtp(
        "sglang",
        ("DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"),
        "DeepseekV3ForCausalLMNextN (weights from model.layers.{N})",
        _SGL_ASK + " (the draft path defaults to the target)",
        "one MTP layer rerun per step (not verified for k > 1)",
        "not verified",
        f"{SGLANG}/configs/model_config.py:1032-1036; {SGLANG}/models/deepseek_nextn.py:123; "
        f"{SGLANG}/arg_groups/speculative_hook.py:109-115,1120-1147",
    ),
    EngineMtp(
        "sglang",
        ("GlmMoeDsaForCausalLM",),
        "GlmMoeDsaForCausalLMNextN",
        _SGL_ASK + " (the draft path defaults to the target)",
        "not verified",
        "not verified",
        f"{SGLANG}/configs/model_config.py:1038-1039; "
        f"{SGLANG}/arg_groups/speculative_hook.py:1120-1147",
    ),
    EngineMtp(
        "sglang",
        ("DeepseekV4ForCausalLM",),
        "DeepseekV4ForCausalLMNextN (one layer), or its DSpark head when the checkpoint has one",
        _SGL_ASK + " (the draft path defaults to the target)",
        "one MTP layer (num_nextn_predict_layers set to 1)",
        "not verified",
        f"{SGLANG}/configs/model_config.py:1041-1060",
    ),
    EngineMtp(
        "sglang",
        ("MiMoForCausalLM",),
        "MiMoMTP",
        _SGL_ASK_PATH,
        "not verified",
        "not verified",
        f"{SGLANG}/configs/model_config.py:1093",
    ),
    EngineMtp(
        "sglang",
        ("Qwen3NextForCausalLM",),
        "Qwen3NextForCausalLMMTP",
        _SGL_ASK_PATH,
        _SGL_ONE_LAYER,
        "not verified",
        f"{SGLANG}/configs/model_config.py:1134-1136",
    ),
    EngineMtp(
        "sglang",
        (
            "Qwen3_5ForConditionalGeneration",
            "Qwen3_5MoeForConditionalGeneration",
            "Qwen3_5ForCausalLM",
            "Qwen3_5MoeForCausalLM",
        ),
        "Qwen3_5ForCausalLMMTP (weights from mtp.*)",
        _SGL_ASK_PATH,
        _SGL_ONE_LAYER,
        "not verified",
        f"{SGLANG}/configs/model_config.py:1159-1181; {SGLANG}/models/qwen3_5_mtp.py:365",
    ),
    EngineMtp(
        "sglang",
        ("NemotronHForCausalLM",),
        "NemotronHForCausalLMMTP",
        _SGL_ASK_PATH,
        _SGL_ONE_LAYER,
        "not verified",
        f"{SGLANG}/configs/model_config.py:1198-1203",
    ),
    EngineMtp(
        "sglang",
        ("Step3p5ForCausalLM", "Step3p7ForConditionalGeneration"),
        "Step3p5MTP",
        _SGL_ASK_PATH,
        "not verified",
        "not verified",
        f"{SGLANG}/configs/model_config.py:1096-1097,1115-1120",
    ),
    EngineMtp(
        "sglang",
        (),
        "none found: SGLang 0.5.23 swaps in no NextN/MTP class for this architecture",
        "not available",
        "-",
        "-",
        f"{SGLANG}/configs/model_config.py:1032-1210 (no branch for it)",
    ),
    # TensorRT-LLM: its stored source (no line numbers could be read) gives the config class;
    # which architectures its PyTorch backend builds MTP for was not read.
    EngineMtp(
        "trtllm",
        (),
        "MTP in the PyTorch backend (one-model MTP-EAGLE when k is 1); "
        "architectures served not verified",
        "speculative_config=MTPDecodingConfig(num_nextn_predict_layers={k})",
        "max_draft_len = num_nextn_predict_layers",
        "not verified",
        f"{TRTLLM}:tensorrt_llm/llmapi/llm_args.py (MTPDecodingConfig.set_max_total_draft_tokens, "
        "spec_dec_mode)",
        verified=False,
    ),
    EngineMtp(
        "llamacpp",
        (),
        "not verified: whether llama.cpp drafts from a GGUF's NextN layers was not read",
        "not verified",
        "not verified",
        "not verified",
        "ggml-org/llama.cpp (not read)",
        verified=False,
    ),
)
"""Per engine, the first row whose ``match`` names the target's architecture or one of its
model types wins; the engine's last row (empty ``match``) answers for every other target."""

ENGINES: tuple[str, ...] = ("vllm", "sglang", "trtllm", "llamacpp")


def engine_rows(architectures: tuple[str, ...], model_type: str | None) -> tuple[EngineMtp, ...]:
    """Return, per engine, the row that applies to a target.

    The engines branch on ``architectures[0]`` and the top-level ``model_type`` (not
    ``text_config``'s: Kimi-K2.5's text model is a ``deepseek_v3``, its wrapper is not).
    """
    names = set(architectures[:1]) | ({model_type} if model_type else set())
    rows = []
    for engine in ENGINES:
        candidates = [r for r in MTP_ENGINE_ROWS if r.engine == engine]
        rows.append(next(r for r in candidates if not r.match or names & set(r.match)))
    return tuple(rows)


@dataclass(frozen=True)
class MtpStated:
    """What a target's config says about its MTP layers."""

    layers: int
    """k, the MTP layer count (0: none)."""
    key: str | None
    """The dotted key k was read from; None when no key is stated."""
    all_keys: tuple[tuple[str, int], ...]
    """Every MTP key the config states, with its value (MiniMax-M3 states two)."""


def read_mtp_layers(files: ModelFiles) -> MtpStated:
    """Read k from the first MTP key the config states (top level, then ``text_config``)."""
    top = FieldReader(files.who, files.config_location, files.config)
    readers = [top]
    text = top.child("text_config")
    if text is not None:
        readers.append(text)
    stated: list[tuple[str, int]] = []
    for key in MTP_KEYS:
        for reader in readers:
            if reader.has(key):
                value = reader.integer(key, minimum=0)
                assert value is not None  # has() saw a value; integer() raises on a bad one
                stated.append((f"{reader.prefix}{key}", value))
    if not stated:
        return MtpStated(0, None, ())
    return MtpStated(stated[0][1], stated[0][0], tuple(stated))


# At most 9 digits: a longer layer number is no layer (and int() of 5,000 digits raises).
_LAYER = re.compile(r"^model\.(?:language_model\.)?layers\.(\d{1,9})\.")
_MTP_LAYERS = re.compile(r"^model\.mtp_layers\.(\d{1,9})\.")
_MTP_PREFIX = re.compile(r"^(?:model\.(?:language_model\.)?)?mtp\.")


@dataclass(frozen=True)
class MtpTensors:
    """What the checkpoint's tensor names show of the MTP layers."""

    location: str
    """The index or header the names came from."""
    expected: str
    """The names the MTP weights should carry, for messages."""
    found: tuple[int, ...]
    """MTP layers found (their index among the k)."""
    missing: tuple[int, ...]
    """MTP layers stated but absent."""


def family(model_types: tuple[str, ...]) -> MtpFamily | None:
    """Return the MTP family of a target, if known."""
    return next((f for f in FAMILIES if set(f.model_types) & set(model_types)), None)


def find_mtp_tensors(
    names: Collection[str], location: str, n: int, k: int, fam: MtpFamily | None
) -> MtpTensors | None:
    """Look for the k MTP layers among a checkpoint's tensor names (None: layout not known)."""
    if fam is None or k == 0:
        return None
    if fam.placement == "mtp":
        # One prefix for every step: present or absent as a whole.
        held = any(_MTP_PREFIX.match(name) for name in names)
        found = tuple(range(k)) if held else ()
    else:
        pattern, first = (_LAYER, n) if fam.placement == "after" else (_MTP_LAYERS, 0)
        present = {int(m.group(1)) for name in names if (m := pattern.match(name))}
        found = tuple(i for i in range(k) if first + i in present)
    # A set: ``i not in found`` on the tuple made this quadratic in k (k = 200,000 is stated
    # by hostile configs); everything here is linear in the names and k.
    have = set(found)
    missing = tuple(i for i in range(k) if i not in have)
    return MtpTensors(location, mtp_names(fam.placement, n, k), found, missing)


def mtp_names(placement: Placement, n: int, k: int, detail: bool = True) -> str:
    """Return the names the MTP weights carry, for reports (``detail``: the DeepSeek parts)."""

    def span(prefix: str, first: int) -> str:
        last = f"…{first + k - 1}" if k > 1 else ""
        return f"{prefix}{first}{last}"

    if placement == "after":
        parts = " (eh_proj, enorm, hnorm, shared_head)" if detail else ""
        return span("model.layers.", n) + parts
    if placement == "mtp_layers":
        return span("model.mtp_layers.", 0)
    return "mtp.*"


@dataclass(frozen=True)
class MtpReport:
    """The answer for a target asked about alone: its MTP layers and what engines make of them."""

    target: TargetView
    """The target."""
    stated: MtpStated
    """What its config says."""
    family: str | None
    """The MTP family it belongs to, if known."""
    engines: tuple[EngineMtp, ...]
    """Per engine, what it would build (empty when the target has no MTP layers)."""
    tensors: MtpTensors | None
    """What the tensor names show; None when they were not read or the layout is not known."""
    tensors_note: str
    """Why ``tensors`` is None, or where the names came from."""
    findings: tuple[Finding, ...]
    """DF041-DF045."""
    num_speculative_tokens: int | None = None
    """The draft tokens per step the user means to serve with (``--num-speculative-tokens``)."""
    strict: bool = False
    """Warnings make it incompatible (``--strict``)."""

    @property
    def verdict(self) -> Verdict:
        """Compatible when the MTP layers are there for at least one engine to serve."""
        bad = {Severity.ERROR, Severity.WARNING} if self.strict else {Severity.ERROR}
        if any(f.severity in bad for f in self.findings):
            return Verdict.INCOMPATIBLE
        return Verdict.COMPATIBLE

    @property
    def verdict_text(self) -> str:
        """The verdict as printed (the registry's renderers read it as a pair's)."""
        return self.verdict.value

    @property
    def smoke(self) -> None:
        """No smoke run answers for a target alone (read like a pair's report)."""
        return None

    def count(self, severity: Severity) -> int:
        """Return how many findings have ``severity``."""
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def layer_names(self) -> str:
        """The MTP layers' place in the checkpoint, for reports."""
        n, k = self.target.num_hidden_layers, self.stated.layers
        if k == 0:
            return "-"
        fam = family(self.target.model_types)
        if fam is None:
            return "not known for this family"
        return mtp_names(fam.placement, n, k, detail=False)


MTP_RULES: dict[str, Rule] = {r.id: r for r in TARGET_ALONE_RULES}
"""The rules of a target asked about alone (their why and fix live in the rule table)."""


def fill(text: str, k: int, n: int) -> str:
    """Put a target's k and N into a row's text (rows keep ``{k}`` and ``{N}`` as placeholders)."""
    return text.replace("{k}", str(k)).replace("{N}", str(n))


def _finding(rule: str, message: str, hint: str, field: str | None = None) -> Finding:
    return Finding(rule, MTP_RULES[rule].severity, None, message, hint, field=field, model="target")


def _token_findings(k: int, tokens: int, engines: tuple[EngineMtp, ...]) -> Iterator[Finding]:
    """vLLM's reading of num_speculative_tokens against k (speculative.py:1600-1612)."""
    if tokens <= k or not any(r.engine == "vllm" and r.match for r in engines):
        return
    if tokens % k:
        yield Finding(
            "DF044",
            Severity.ERROR,
            "vllm",
            f"num_speculative_tokens {tokens} is more than the target's {k} MTP layers and not "
            f"a multiple of them: vLLM refuses it ('must be divisible by n_predict={k}', "
            f"{VLLM}:vllm/config/speculative.py:1604-1612)",
            f"use {k} or a multiple of {k}",
            model="target",
        )
    else:
        yield Finding(
            "DF045",
            Severity.INFO,
            "vllm",
            f"num_speculative_tokens {tokens} reruns the target's {k} MTP layer(s) "
            f"{tokens // k} times per step; vLLM warns the acceptance rate may drop "
            f"({VLLM}:vllm/config/speculative.py:1486-1495)",
            f"{k} draft tokens use each MTP layer once",
            model="target",
        )


def _findings(
    target: TargetView,
    stated: MtpStated,
    engines: tuple[EngineMtp, ...],
    tensors: MtpTensors | None,
    tokens: int | None,
) -> Iterator[Finding]:
    name = target.name
    if stated.layers == 0:
        said = f"{stated.key} is 0" if stated.key else f"it states none of {', '.join(MTP_KEYS)}"
        yield _finding(
            "DF041",
            f"target {name} has no MTP layers ({said})",
            "use a separate draft (DFlash, EAGLE-3) with this target: "
            "dflash-check pair DRAFT TARGET",
            stated.key,
        )
        return
    if tensors is not None and tensors.missing:
        yield _finding(
            "DF042",
            f"target {name}: {stated.key} is {stated.layers}, but {tensors.location} has "
            f"{len(tensors.missing)} of them missing (expected {tensors.expected}); "
            + "; ".join(
                f"{r.engine}: {fill(r.on_missing, stated.layers, target.num_hidden_layers)}"
                for r in engines
                if r.on_missing not in ("-", "not verified")
            ),
            "use a checkpoint exported with its MTP layers (quantised exports often drop them), "
            "or serve it without MTP",
            stated.key,
        )
    if all(r.request == "not available" or not r.verified for r in engines):
        yield _finding(
            "DF043",
            f"target {name}: none of the engines read here builds an MTP draft for "
            f"{', '.join(target.architectures[:1]) or target.model_type}",
            "check the engine's release notes for MTP support of this architecture",
        )
    if tokens is not None:
        yield from _token_findings(stated.layers, tokens, engines)


def check_target_mtp(
    files: ModelFiles,
    tensor_names: Collection[str] | None,
    tensors_note: str,
    strict: bool = False,
    num_speculative_tokens: int | None = None,
) -> MtpReport:
    """Answer for a target asked about alone; ``tensor_names`` None when they were not read."""
    target = normalise_target(files)
    stated = read_mtp_layers(files)
    fam = family(target.model_types)
    top_type = files.config.get("model_type")
    top_type = top_type if isinstance(top_type, str) else None
    engines = engine_rows(target.architectures, top_type) if stated.layers else ()
    tensors = None
    if tensor_names is not None:
        tensors = find_mtp_tensors(
            tensor_names, tensors_note, target.num_hidden_layers, stated.layers, fam
        )
        if tensors is None and stated.layers:
            tensors_note = f"{tensors_note} (where this family keeps its MTP weights is not known)"
    return MtpReport(
        target=target,
        stated=stated,
        family=fam.name if fam else None,
        engines=engines,
        tensors=tensors,
        tensors_note=tensors_note,
        findings=tuple(_findings(target, stated, engines, tensors, num_speculative_tokens)),
        num_speculative_tokens=num_speculative_tokens,
        strict=strict,
    )
