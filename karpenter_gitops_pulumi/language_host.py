"""Run a Pulumi Python program as the Python language host runs it, connected to a resource monitor.

The Pulumi CLI's ``pulumi-language-python`` starts ``pulumi-language-python-exec`` with the flags
below and the stack's config in ``PULUMI_CONFIG`` / ``PULUMI_CONFIG_SECRET_KEYS``; that script
configures the SDK's runtime, changes to the project directory and runs the program inside the
stack resource. :mod:`karpenter_gitops_pulumi.engine` starts this module the same way (its own words, same steps).

    python -u -m karpenter_gitops_pulumi.language_host --monitor ADDR --engine ADDR --project P --stack S \
        --pwd DIR --dry_run true --parallel 48 PROGRAM
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import runpy
import sys
import traceback


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m karpenter_gitops_pulumi.language_host")
    for flag in ("--project", "--stack", "--parallel", "--dry_run", "--pwd", "--monitor", "--engine", "--organization"):
        parser.add_argument(flag)
    parser.add_argument("program")
    args = parser.parse_args(argv)

    import pulumi
    import pulumi.runtime

    pulumi.runtime.set_all_config(pulumi.runtime.get_config_env(), pulumi.runtime.get_config_secret_keys_env())
    pulumi.runtime.configure(
        pulumi.runtime.Settings(
            monitor=args.monitor,
            engine=args.engine,
            project=args.project,
            stack=args.stack,
            parallel=int(args.parallel or 48),
            dry_run=args.dry_run == "true",
            organization=args.organization or "organization",
        )
    )
    sys.argv = [args.program]
    if args.pwd:
        os.chdir(args.pwd)
    # A program whose graph failed part-way leaves futures nobody awaits; the language host silences asyncio for it.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(pulumi.runtime.run_in_stack(lambda: runpy.run_path(args.program, run_name="__main__")))
        return 0
    except pulumi.RunError as error:
        pulumi.log.error(str(error))
    except Exception:  # noqa: BLE001 - the engine shows the program's traceback as an error diagnostic
        pulumi.log.error("Program failed with an unhandled exception:\n" + traceback.format_exc())
    finally:
        loop.close()
        sys.stdout.flush()
        sys.stderr.flush()
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
