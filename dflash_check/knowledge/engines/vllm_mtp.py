"""vLLM's MTP rows (``Engine.mtp`` of ``vllm.py``): what vLLM builds from a target's own MTP
layers, one row per branch of ``SpeculativeConfig.hf_config_override``, with the refusals and
reruns of the draft length. A module of its own so that ``vllm.py`` stays one screenful per
concern (releases, stages, serving), and imported only when its ``mtp_rows`` is called (a
target asked about alone, the listings), never by a pair check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from dflash_check.knowledge.engines.mtp_reading import (
    EngineMtp,
    MtpRefusal,
    MtpReruns,
    MtpStepLimit,
)

# What vLLM builds from a target's own MTP layers (``Engine.mtp``), read in each release: its
# SpeculativeConfig.hf_config_override rewrites the target's config into its MTP draft, each
# row one branch of it, cited at the release selected.
_VLLM_ASK = '--speculative-config \'{"method": "mtp", "num_speculative_tokens": {k}}\''
_VLLM_UNCHECKED = "no completeness check found in its loader (behaviour not verified)"
_SPEC = "vllm/config/speculative.py"


@dataclass(frozen=True)
class _Read:
    """What every MTP row of one release cites beside its branch: where the release reads the
    draft length, reruns the layers, takes the per-family method names, and refuses a
    checkpoint without its MTP weights (``path:lines``, the release's own)."""

    tokens: str
    """Where it defaults the draft length to k and refuses a count that is not a multiple."""
    refusal: str
    """Where it raises on a count that is not a multiple of k."""
    warning: str
    """Where it warns that rerun layers may lower acceptance."""
    method: str
    """Where the per-family method names become mtp."""
    missing: str | None
    """Where the DeepSeek MTP loader refuses missing layer weights; None: no such check there."""


_SPECULATOR = "vllm/v1/worker/gpu/spec_decode/speculator_config.py"
# Read per release: 0.34.0 moved the draft-length checks into the speculator configs and
# dropped the DeepSeek loader's completeness check.
_READ = {
    "0.32.0": _Read(
        f"{_SPEC}:1489-1501",
        f"{_SPEC}:1493-1501",
        f"{_SPEC}:1376-1385",
        f"{_SPEC}:1141-1145",
        "vllm/model_executor/models/deepseek_mtp.py:524-533",
    ),
    "0.33.0": _Read(
        f"{_SPEC}:1600-1612",
        f"{_SPEC}:1604-1612",
        f"{_SPEC}:1486-1495",
        f"{_SPEC}:1246-1250",
        "vllm/model_executor/models/deepseek_mtp.py:529-538",
    ),
    "0.34.0": _Read(
        f"{_SPECULATOR}:276-291",
        f"{_SPECULATOR}:283-291",
        "vllm/v1/worker/gpu/spec_decode/mtp/config.py:88-97",
        f"{_SPEC}:1375-1379",
        None,
    ),
}

Lines = Mapping[str, str]
"""A branch's lines in ``vllm/config/speculative.py`` per release read (a release without
the branch has no entry: the row does not apply there)."""

# Where DeepSeek's branch maps deepseek_v3, deepseek_v32 and glm_moe_dsa to deepseek_mtp.
_DEEPSEEK: Lines = {"0.32.0": "679-694", "0.33.0": "749-764", "0.34.0": "847-862"}


# Nemotron Parse 3.5's one trained step: refused above it while the speculative config is
# resolved, in SpeculativeConfig itself at 0.33.0 and in the MTP speculator config (which
# SpeculativeConfig calls through speculator_config.py:222) at 0.34.0.
_PARSE_STEPS = MtpStepLimit(
    1,
    "Parse 3.5 has only one trained MTP step",
    (
        ("0.33.0", "vllm==0.33.0:vllm/config/speculative.py:1587-1591"),
        ("0.34.0", "vllm==0.34.0:vllm/v1/worker/gpu/spec_decode/mtp/config.py:101-106"),
    ),
)


_DRAFT_CLASS = re.compile(r"\b[A-Z]\w*MTP\w*\b")
"""A draft architecture named in a row's text (``Qwen3_5MTP``, ``DeepSeekMTPModel``)."""


def _vllm(
    match: tuple[str, ...],
    draft: str,
    lines: Lines,
    deepseek: bool = False,
    on_missing: str = _VLLM_UNCHECKED,
) -> tuple[EngineMtp, ...]:
    """One branch of vLLM's ``hf_config_override``, one row per release that has it: how it
    asks and what it builds (the draft architectures its text names, looked up in each
    release's model registry), cited in that release (``deepseek``: its loader's check of the
    MTP weights)."""
    rows = []
    for version, at in lines.items():
        src, read = f"vllm=={version}", _READ[version]
        missing = (
            "refuses to load: 'MTP speculative decoding layer {N} weights missing from "
            f"checkpoint' ({src}:{read.missing})"
            if deepseek and read.missing
            else on_missing
        )
        rows.append(
            EngineMtp(
                "vllm",
                match,
                draft,
                _VLLM_ASK,
                "default k; above k only multiples of k (the layers are rerun), "
                f"{src}:{read.tokens}",
                missing,
                f"{src}:{_SPEC}:{at}; the per-family method names (deepseek_mtp, qwen3_5_mtp, "
                f"…) are deprecated aliases of mtp, {src}:{read.method}",
                reruns=MtpReruns(
                    "must be divisible by n_predict={k}",
                    f"{src}:{read.refusal}",
                    f"{src}:{read.warning}",
                ),
                drafts=tuple(dict.fromkeys(_DRAFT_CLASS.findall(draft))),
                releases=f"=={version}",
            )
        )
    return tuple(rows)


# hf_config_override, per release read: its lines (the decorator to its return).
_HF_CONFIG_OVERRIDE = {"0.32.0": "660-1073", "0.33.0": "710-1169", "0.34.0": "778-1304"}

# Kimi K2 at the releases that refuse it: the lines mapping the DeepSeek model types to
# deepseek_mtp (kimi_k2 not among them), and where the method check raises on what is left.
_KIMI_REFUSED = {"0.32.0": ("679-694", "1388-1391"), "0.33.0": ("749-764", "1498-1501")}


def _kimi_refused(version: str, lines: str, raised: str) -> EngineMtp:
    """A release that maps ``kimi_k2`` to no MTP draft and refuses method mtp at start-up."""
    src = f"vllm=={version}:vllm/config/speculative.py"
    return EngineMtp(
        "vllm",
        ("kimi_k2",),
        f"none: vLLM {version}'s hf_config_override maps kimi_k2 to no MTP draft "
        "(deepseek_v3, deepseek_v32 and glm_moe_dsa only)",
        "not available",
        "-",
        "-",
        f"{src}:{lines}",
        releases=f"=={version}",
        refusal=MtpRefusal(
            "NotImplementedError: Unsupported speculative method: 'mtp'", f"{src}:{raised}"
        ),
    )


def _no_branch(version: str, lines: str) -> EngineMtp:
    """A release's answer for a target its hf_config_override has no branch for."""
    return EngineMtp(
        "vllm",
        (),
        f"none: vLLM {version} maps no MTP draft for this architecture",
        "not available",
        "-",
        "-",
        f"vllm=={version}:vllm/config/speculative.py:{lines} "
        "(hf_config_override has no branch for it)",
        releases=f"=={version}",
    )


def _parse(rows: tuple[EngineMtp, ...]) -> tuple[EngineMtp, ...]:
    """Nemotron Parse 3.5's rows: more draft tokens than its one step are refused at start-up,
    not rerun: no MtpReruns (DF044/DF045 do not speak for it), a step limit instead (DF059)."""
    return tuple(
        replace(
            row,
            tokens=f"only 1: more is refused at start-up (DF059, {_PARSE_STEPS.at(v).citation})",
            reruns=None,
            step_limit=_PARSE_STEPS,
        )
        for row in rows
        for v in [row.releases.removeprefix("==") if row.releases else ""]
    )


MTP = (
    # DeepSeek-V3.2 and GLM-5 (DSA attention) get the V3.2 class, DeepSeek-V3 the other; the
    # branch reads model_type alone: an architecture naming V3.2 beside model_type deepseek_v3
    # gets DeepSeekMTPModel (vLLM 0.34.0's test_dsa_models_select_matching_mtp).
    *_vllm(
        ("deepseek_v32", "glm_moe_dsa"),
        "DeepseekV32MTPModel (layers model.layers.{N}…)",
        {"0.32.0": "663,679-694", "0.33.0": "733,749-764", "0.34.0": "831,847-862"},
        deepseek=True,
    ),
    *_vllm(("deepseek_v3",), "DeepSeekMTPModel (layers model.layers.{N}…)", _DEEPSEEK, True),
    *_vllm(
        ("deepseek_v4",),
        "DeepSeekV4MTPModel",
        {"0.32.0": "695-706", "0.33.0": "765-776", "0.34.0": "863-874"},
        on_missing="not verified",
    ),
    *_vllm(
        ("MiMoForCausalLM",),
        "MiMoMTPModel",
        {"0.32.0": "725-736", "0.33.0": "795-806", "0.34.0": "893-904"},
    ),
    *_vllm(
        ("Glm4MoeForCausalLM",),
        "Glm4MoeMTPModel",
        {"0.32.0": "778-787", "0.33.0": "848-857", "0.34.0": "946-955"},
    ),
    *_vllm(
        ("nemotron_h",),
        "NemotronHMTPModel (when num_nextn_predict_layers > 0)",
        {"0.32.0": "825-836", "0.33.0": "895-906", "0.34.0": "1012-1023"},
    ),
    *_vllm(
        ("qwen3_next",),
        "Qwen3NextMTP",
        {"0.32.0": "838-844", "0.33.0": "908-914", "0.34.0": "1025-1031"},
    ),
    *_vllm(
        ("qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"),
        "Qwen3_5MTP / Qwen3_5MoeMTP (k from mtp_num_hidden_layers, top level or text_config)",
        {"0.32.0": "917-936", "0.33.0": "987-1006", "0.34.0": "1104-1123"},
    ),
    *_vllm(
        ("step3p5", "step3p7"),
        "Step3p5MTP",
        {"0.32.0": "969-981", "0.33.0": "1039-1051", "0.34.0": "1156-1168"},
    ),
    # Step 5 from 0.33.0 on (0.32.0 has no branch for it), pinned by vLLM 0.34.0's own tests
    # (conformance/mined/mtp_cases.py).
    *_vllm(
        ("step5", "step5_vl"),
        "Step5MTP (k from num_nextn_predict_layers, text_config's for step5_vl)",
        {"0.33.0": "1055-1068", "0.34.0": "1172-1185"},
    ),
    *_vllm(
        ("bailing_hybrid", "BailingMoeV2_5ForCausalLM"),
        "BailingMoeV25MTPModel",
        {"0.32.0": "881-895", "0.33.0": "951-965", "0.34.0": "1068-1082"},
    ),
    *_vllm(
        ("qwen4_exp", "qwen4_exp_text"),
        "Qwen4ExpMTP (k from text_config.mtp_num_hidden_layers)",
        {"0.32.0": "845-865", "0.33.0": "915-935", "0.34.0": "1032-1052"},
    ),
    *_vllm(
        ("inkling_mm_model", "inkling_model"),
        "InklingMTPModel (k from mtp_config.num_nextn_predict_layers; none: refused)",
        {"0.32.0": "1000-1016", "0.33.0": "1087-1103", "0.34.0": "1204-1220"},
    ),
    *_vllm(
        ("glm5_next",),
        "Glm5NextMTPModel (k from text_config.num_nextn_predict_layers)",
        {"0.32.0": "1059-1071", "0.33.0": "1146-1158", "0.34.0": "1281-1293"},
    ),
    *_vllm(
        ("minimax_m3_vl", "MiniMaxM3SparseForConditionalGeneration"),
        "MiniMaxM3MTP (k from text_config.num_mtp_modules)",
        {"0.32.0": "1031-1047", "0.33.0": "1118-1134", "0.34.0": "1253-1269"},
    ),
    # Nemotron Parse 3.5: one step, keyed on the architecture and the decoder's
    # causal_vision_prefix, whatever the config counts (knowledge/mtp_layers.py, KEYED_MTP);
    # 0.32.0 has no such branch (nor registers ParseAuxMTPModel).
    *_parse(
        _vllm(
            ("RadioMBartPrefixForCausalLM",),
            "ParseAuxMTPModel (one step, when decoder.causal_vision_prefix)",
            {"0.33.0": "721-731", "0.34.0": "810-820"},
        )
    ),
    # Kimi K2 (model_type kimi_k2, DeepseekV3ForCausalLM; vLLM loads its config through
    # DeepseekV3Config, knowledge/mtp_layers.py): hf_config_override maps deepseek_v3,
    # deepseek_v32 and glm_moe_dsa to deepseek_mtp, not kimi_k2, so the draft config keeps the
    # target's model type, which no MTP draft has. Read per release: 0.32.0 and 0.33.0 then
    # refuse method mtp, 0.34.0 accepts it at config.
    *(_kimi_refused(v, lines, raised) for v, (lines, raised) in _KIMI_REFUSED.items()),
    EngineMtp(
        "vllm",
        ("kimi_k2",),
        "DeepseekV3ForCausalLM, the target's own class: hf_config_override maps kimi_k2 to no "
        "MTP draft (no n_predict), and 0.34.0 accepts method mtp at config with the target's "
        "config as the draft's; what its MTP speculator builds from it is not verified",
        _VLLM_ASK,
        "not read (n_predict is unset)",
        "not verified",
        f"vllm==0.34.0:{_SPEC}:{_DEEPSEEK['0.34.0']} (no branch for kimi_k2); accepted "
        "at config: vllm/v1/worker/gpu/spec_decode/speculator_config.py:308 (the method table "
        "knows mtp), :412-426 (the target's class declares no speculator to check it against)",
        verified=False,
        releases="==0.34.0",
    ),
    # Any other target: the release's hf_config_override has no branch for it (its own lines).
    *(_no_branch(v, lines) for v, lines in _HF_CONFIG_OVERRIDE.items()),
    EngineMtp(
        "vllm",
        (),
        "none read: this release's hf_config_override was not read",
        "not available",
        "-",
        "-",
        "hf_config_override not read at this release (read at "
        + ", ".join(f"vllm=={v}" for v in _HF_CONFIG_OVERRIDE)
        + ")",
        verified=False,
    ),
)
"""vLLM's MTP rows, first match wins (``Engine.mtp``); a ranged row (``releases``) only at its
releases."""
