"""`lossgrad build`: render, configure and build the CANN projects for one SoC.

Registered by lossgrad.cli (`main.add_command(build)`). Without CANN it stops before anything else with a
message naming ASCEND_HOME_PATH, set_env.sh and the twin; --dry-run needs no CANN and writes nothing.
"""
from __future__ import annotations

from pathlib import Path

import click

from ..dtypes import KERNEL_DTYPES
from ..dtypes import parse as parse_dtype
from ..errors import BackendUnavailable, LossGradError
from ..registry import OPS, OpSpec, get_op
from ..socs import DEFAULT_SOC
from . import outdir, project
from .detect import detect_cann, require_cann
from .kernel_sources import KernelSourcesUnavailable


_STATE_TEXT = {"create": "will be created", "adopt": "empty, will be used",
               "reuse": "created by lossgrad earlier, reused"}


def parse_ops(text: str) -> list[OpSpec]:
    if text.strip().lower() == "all":
        return list(OPS.values())
    ops: list[OpSpec] = []
    for name in filter(None, (t.strip() for t in text.split(","))):
        try:
            op = get_op(name)
        except KeyError as exc:
            raise click.BadParameter(str(exc.args[0]), param_hint="--ops") from None
        if op not in ops:
            ops.append(op)
    if not ops:
        raise click.BadParameter("no op given", param_hint="--ops")
    return ops


@click.command("build")
@click.option("--soc", default=DEFAULT_SOC, show_default=True,
              help="CANN SoC version (e.g. Ascend910B1, Ascend910_9391, Ascend950PR_9579, Ascend310P3, Ascend910A) "
                   "or a product-line alias (a2, a3, 950, 310p, 910). A bare Ascend910B is the 1st-generation 910.")
@click.option("--ops", "ops_text", default="all", show_default=True,
              help="comma-separated op names (API, aclnn or custom op type), or 'all'")
@click.option("--flow", type=click.Choice(project.FLOWS), default="package", show_default=True,
              help="package: custom-op .run with aclnn<Op> (msOpGen layout); launch-legacy: ascendc_library() "
                   "with SOC_VERSION/RUN_MODE; launch-asc: find_package(ASC) with --npu-arch/CMAKE_ASC_RUN_MODE")
@click.option("--run-mode", type=click.Choice(project.RUN_MODES), default=None,
              help="kernel-launch flows: cpu (CPU debug), sim (simulator) or npu (device; the default)")
@click.option("--dtypes", "dtypes_text", default=None,
              help="kernel-launch flows: build only the variants made of these dtypes (e.g. float16,float32)")
@click.option("--out", "out", type=click.Path(path_type=Path), default=Path("lossgrad_build"), show_default=True,
              help="output directory: created with a marker, or reused only if lossgrad created it")
@click.option("--vendor", default=project.DEFAULT_VENDOR, show_default=True,
              help="package vendor name (<install-path>/vendors/<vendor>)")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="parallel build jobs")
@click.option("--build-type", type=click.Choice(["Release", "Debug"]), default=None,
              help="CMAKE_BUILD_TYPE (default: Debug for CPU debug, else Release)")
@click.option("--dry-run", is_flag=True, help="print every file and command, write and run nothing (no CANN needed)")
def build_command(soc: str, ops_text: str, flow: str, run_mode: str | None, dtypes_text: str | None, out: Path,
                  vendor: str, jobs: int | None, build_type: str | None, dry_run: bool) -> None:
    """Build the CANN custom-op package or kernel-launch libraries for one SoC."""
    if dtypes_text and flow == "package":  # the package registers every dtype of the registry; never ignore it
        raise click.BadParameter("applies to the kernel-launch flows (--flow launch-legacy|launch-asc) only; the "
                                 "package flow builds every dtype combination", param_hint="--dtypes")
    try:
        cann = detect_cann() if dry_run else require_cann(
            "lossgrad build", alternative="see what would be built with `lossgrad build --dry-run` (no CANN needed), "
            "or render the kernel sources with `lossgrad gen --out DIR`")
    except BackendUnavailable as exc:
        raise click.ClickException(str(exc)) from None
    ops = parse_ops(ops_text)
    dtypes = None
    if dtypes_text:
        try:
            dtypes = [parse_dtype(t.strip()) for t in dtypes_text.split(",") if t.strip()]
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--dtypes") from None
        bad = [d.label for d in dtypes if d not in KERNEL_DTYPES]
        if bad:  # a usage error, before any plan: no kernel exists for these
            raise click.BadParameter(f"{', '.join(bad)}: the kernels take "
                                     f"{', '.join(d.label for d in KERNEL_DTYPES)} only", param_hint="--dtypes")
    try:
        plan = project.plan_build(flow, soc, ops, out=out, run_mode=run_mode, cann=cann, vendor=vendor,
                                  dtypes=dtypes, jobs=jobs, build_type=build_type)
        state = outdir.inspect(plan.out)
    except (project.PlanError, LossGradError, outdir.UnsafeOutputDir) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(plan.report(dry_run=dry_run))
    click.echo(f"\noutput directory: {plan.out} ({_STATE_TEXT[state]})")
    if dry_run:
        return
    try:
        project.write_files(plan)
        project.run_steps(plan, echo=click.echo)
    except (project.BuildFailed, outdir.UnsafeOutputDir, KernelSourcesUnavailable, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"\ndone: {plan.out}")
    if plan.run_env:
        click.echo("run against this build with (in the run's environment only):")
        for key, value in plan.run_env.items():
            click.echo(f"  {key}={value}")


build = build_command  # the name lossgrad.cli registers
