"""Parse ``vllm serve`` command lines with vLLM's own CLI, inside vLLM's own environment.

Usage: python vllm_command_driver.py JOBS.json OUT.json. JOBS is a list of ``{"id", "argv"}``:
``argv`` the arguments after ``vllm`` (``serve TARGET --speculative-config JSON ...``). Each
line goes through what ``vllm`` itself runs (``vllm==0.34.0:vllm/entrypoints/cli/main.py:88-114``):
a ``FlexibleArgumentParser`` with the ``serve`` subcommand's parser (``make_arg_parser``,
``entrypoints/cli/serve.py:161-174``), ``validate_parsed_serve_args``, the positional model
taking precedence (``serve.py:56-57``), then ``AsyncEngineArgs.from_cli_args`` and
``create_engine_config`` (the start-up validation ``vllm_config_driver`` runs over the pairs).
OUT gets one record per job: ``outcome``, the ``stage`` that refused (``parse``: the parser and
its validation; ``config``: ``create_engine_config``), the message, and the speculative settings
it parsed (``parsed``) and resolved (``resolved``).

The stubs are ``vllm_config_driver``'s (the Triton flag, the torchvision stand-in), for the
same reasons. Imports vLLM: never imported by the project.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
from typing import Any

from vllm_config_driver import MESSAGE_CHARS, run_jobs, start_vllm


def _parse(argv: list[str]) -> Any:
    """``vllm ARGV``'s parsed arguments, as ``vllm``'s own ``main`` builds them."""
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.entrypoints.common.cli_args import validate_parsed_serve_args
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser(description="vLLM CLI")
    ServeSubcommand().subparser_init(parser.add_subparsers(required=False, dest="subparser"))
    args = parser.parse_args(argv)
    validate_parsed_serve_args(args)
    if getattr(args, "model_tag", None) is not None:
        args.model = args.model_tag
    return args


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    """Parse and validate one line; return its record (an exception is its outcome)."""
    from vllm.engine.arg_utils import AsyncEngineArgs

    record: dict[str, Any] = {"id": job["id"], "argv": job["argv"]}
    stage = "parse"
    usage = io.StringIO()  # argparse writes its refusal to stderr, then exits
    started = time.monotonic()
    try:
        with contextlib.redirect_stderr(usage):
            engine_args = AsyncEngineArgs.from_cli_args(_parse(job["argv"]))
        record["parsed"] = {
            "model": engine_args.model,
            "speculative_config": engine_args.speculative_config,
            "tensor_parallel_size": engine_args.tensor_parallel_size,
            "pipeline_parallel_size": engine_args.pipeline_parallel_size,
        }
        stage = "config"
        config = engine_args.create_engine_config()
        spec = config.speculative_config
        record["resolved"] = {
            "model": config.model_config.model,
            "method": getattr(spec, "method", None),
            "draft": getattr(spec, "model", None),
            "num_speculative_tokens": getattr(spec, "num_speculative_tokens", None),
            "tensor_parallel_size": config.parallel_config.tensor_parallel_size,
            "pipeline_parallel_size": config.parallel_config.pipeline_parallel_size,
        }
    except (Exception, SystemExit) as err:  # noqa: BLE001 - the engine's verdict (argparse exits)
        lines = usage.getvalue().strip().splitlines()[-1:] if stage == "parse" else []
        message = lines[0] if lines else str(err)
        record.update(outcome="refused", stage=stage)
        record["error"] = {"type": type(err).__name__, "message": message[:MESSAGE_CHARS]}
    else:
        record.update(outcome="accepted", stage=None, error=None)
    record["seconds"] = round(time.monotonic() - started, 3)
    return record


def main(jobs_path: str, out_path: str) -> int:
    """Run every job in ``jobs_path``; write the records to ``out_path``."""
    return run_jobs(jobs_path, out_path, run_one, start_vllm(out_path))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
