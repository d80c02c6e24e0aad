"""``pair --smoke-run``: its options, gathered into ``SmokeFlags``, and the spinner.

The decode itself (after a passing static check, or with ``--force``; in the bundled runtime
or, with ``--engine``, on a serving engine) is ``app/smoke_pair.py``'s: this module parses the
options into its ``SmokeRequest`` and prints what happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from dflash_check.cli.options import SMOKE, DeviceChoice, DtypeChoice, panel_option
from dflash_check.errors import CheckError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from dflash_check.check.report import CheckReport
    from dflash_check.cli.engine import EngineFlags
    from dflash_check.cli.hub_options import HubFlags
    from dflash_check.cli.options import OutputOptions
    from dflash_check.smoke.run import SmokeOptions
    from dflash_check.sources.interface import ModelRef

SmokeRunOpt = Annotated[
    bool,
    panel_option(
        "--smoke-run",
        panel=SMOKE,
        help="Also run a real speculative decode (the smoke extra; CUDA or CPU).",
    ),
]
DeviceOpt = Annotated[
    DeviceChoice,
    panel_option("--device", panel=SMOKE, metavar="DEVICE", help="Smoke-run device."),
]
DtypeOpt = Annotated[
    DtypeChoice,
    panel_option(
        "--dtype",
        panel=SMOKE,
        metavar="DTYPE",
        help="Smoke-run dtype (auto: bfloat16 on CUDA, else float32).",
    ),
]
PromptOpt = Annotated[
    list[str] | None,
    panel_option(
        "--prompt",
        panel=SMOKE,
        metavar="TEXT",
        help="Smoke-run prompt (repeatable; default: built-in prompts).",
    ),
]
MaxNewTokensOpt = Annotated[
    int,
    panel_option(
        "--max-new-tokens", panel=SMOKE, metavar="N", min=1, help="Tokens to generate per prompt."
    ),
]
BlockSizeOpt = Annotated[
    int | None,
    panel_option(
        "--block-size", panel=SMOKE, metavar="N", min=2, help="Override the draft's block_size."
    ),
]
TemperatureOpt = Annotated[
    float,
    panel_option(
        "--temperature",
        panel=SMOKE,
        metavar="T",
        min=0.0,
        help="0: greedy (checked lossless); above 0: rejection sampling.",
    ),
]
MinAcceptanceOpt = Annotated[
    float | None,
    panel_option(
        "--min-acceptance",
        panel=SMOKE,
        metavar="TAU",
        min=1.0,
        help="Fail (exit 1) below this tau (default from evidence: dflash-check docs engines).",
    ),
]
NoChatTemplateOpt = Annotated[
    bool,
    panel_option(
        "--no-chat-template",
        panel=SMOKE,
        help="Feed prompts raw, without the tokenizer's chat template.",
    ),
]
ForceOpt = Annotated[
    bool,
    panel_option(
        "--force", panel=SMOKE, help="Run the smoke run even when the static check fails."
    ),
]
TrustRemoteCodeOpt = Annotated[
    bool,
    panel_option(
        "--trust-remote-code",
        panel=SMOKE,
        help="Let transformers run the target repo's own code (off by default).",
    ),
]
SeedOpt = Annotated[int, panel_option("--seed", panel=SMOKE, metavar="N", help="Sampling seed.")]
TimingRepeatsOpt = Annotated[
    int,
    panel_option(
        "--timing-repeats",
        panel=SMOKE,
        metavar="N",
        min=1,
        max=100,
        help="Timed runs after a warm-up; the speedup is their median.",
    ),
]


@dataclass(frozen=True, eq=False)
class SmokeFlags:
    """The smoke-run options of ``pair``, as typed."""

    smoke_run: bool
    device: DeviceChoice
    dtype: DtypeChoice
    prompts: tuple[str, ...]
    max_new_tokens: int
    block_size: int | None
    temperature: float
    min_acceptance: float | None
    no_chat_template: bool
    force: bool
    trust_remote_code: bool
    seed: int
    timing_repeats: int

    @classmethod
    def parse(
        cls,
        smoke_run: SmokeRunOpt = False,
        device: DeviceOpt = DeviceChoice.auto,
        dtype: DtypeOpt = DtypeChoice.auto,
        prompt: PromptOpt = None,
        max_new_tokens: MaxNewTokensOpt = 64,
        block_size: BlockSizeOpt = None,
        temperature: TemperatureOpt = 0.0,
        min_acceptance: MinAcceptanceOpt = None,
        no_chat_template: NoChatTemplateOpt = False,
        force: ForceOpt = False,
        trust_remote_code: TrustRemoteCodeOpt = False,
        seed: SeedOpt = 0,
        timing_repeats: TimingRepeatsOpt = 3,
    ) -> SmokeFlags:
        """Return the group from its options (``cli.groups.grouped``)."""
        return cls(
            smoke_run, device, dtype, tuple(prompt or ()), max_new_tokens, block_size,
            temperature, min_acceptance, no_chat_template, force, trust_remote_code, seed,
            timing_repeats,
        )  # fmt: skip

    def options(self, hub: HubFlags) -> SmokeOptions:
        """Return the smoke runtime's options (its Hub access as the check's)."""
        from dflash_check.smoke.run import SmokeOptions

        return SmokeOptions(
            device=self.device.value,
            dtype=self.dtype.value,
            prompts=self.prompts,
            max_new_tokens=self.max_new_tokens,
            block_size=self.block_size,
            temperature=self.temperature,
            min_acceptance=self.min_acceptance,
            chat_template=not self.no_chat_template,
            trust_remote_code=self.trust_remote_code,
            seed=self.seed,
            token=hub.token,
            offline=hub.offline,  # HubSource also honours HF_HUB_OFFLINE itself
            repeats=self.timing_repeats,
        )


def smoke_flags(
    report: CheckReport,
    draft: str,
    draft_ref: ModelRef,
    target_ref: ModelRef,
    smoke: SmokeFlags,
    hub: HubFlags,
    engines: EngineFlags,
    out: OutputOptions,
) -> CheckReport:
    """``pair --smoke-run``: refuse a draft the runtime cannot decode, then hand the decode to
    ``app.smoke_pair`` behind a spinner; print why it was skipped, or fail (exit 3) when it
    could not run."""
    from dflash_check.app.bundled_drafts import unsupported
    from dflash_check.app.smoke_pair import SKIPPED, SmokeRequest, skipped, smoke_pair
    from dflash_check.cli.output import fail, stderr_console
    from dflash_check.cli.terminal import shown

    refused = unsupported(report, draft)
    if refused is not None:
        fail(refused, out.json, out.output)
    request = SmokeRequest(smoke.options(hub), smoke.force, engines.options())
    err_console = stderr_console()
    if skipped(report, request):
        if not out.quiet:
            err_console.print(SKIPPED, markup=False)
        return report
    progress = spinner(err_console, shown=not out.quiet)
    with shown(progress):
        task = progress.add_task("starting", total=None)

        def say(text: str) -> None:
            progress.update(task, description=text)

        try:
            return smoke_pair(report, draft_ref, target_ref, request, say)
        except CheckError as err:
            failed = err
    # Reached only through the except above; after the spinner is cleared, the error stands alone.
    fail(failed, out.json, out.output)


def spinner(console: Console, shown: bool = True) -> Progress:
    """Return the smoke run's spinner on ``console`` (off when it is no terminal, or not
    ``shown``: ``--quiet``)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(
        SpinnerColumn(),
        TextColumn("smoke run: {task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not (shown and console.is_terminal),
    )
