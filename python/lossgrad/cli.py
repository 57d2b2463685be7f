"""The `lossgrad` command line: verify (the main job), tiling, gen, socs, bench, build, cache.

Every user error ends the command with one line on stderr (under --json, one JSON object on stdout instead) and
exit status 2 for a usage error (bad options, a bad case table, an invalid call), 1 for a failure (missing CANN or
compiler, an unwritable directory, a full disk, failed cases), 130 for Ctrl-C, 143 for SIGTERM. A traceback is
printed only with the global --debug flag.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from . import bench as twin_bench
from .errors import BackendUnavailable, LossGradError, OutputTooLarge
from .registry import OPS, ROLES, get_op, runs_on, short_names
from .runners import BACKENDS
from .socs import DEFAULT_SOC, SOCS, VERIFY_DEFAULT_SOCS, aliases_of, get_soc, soc_record
from .twin.build import CacheDirError
from .verify.cases import parse_dtypes, parse_int, parse_shape

USAGE_ERROR, FAILURE = 2, 1


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _leading_options(argv: Sequence[str]) -> list[str]:
    """The group's own options: the arguments before the subcommand."""
    out = []
    for a in argv:
        if not a.startswith("-"):
            break
        out.append(a)
    return out


class _Main(click.Group):
    """Turns every error into one line (or one JSON object) and an exit status; --debug re-raises."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        debug = "--debug" in _leading_options(argv)
        as_json = "--json" in argv
        try:
            rv = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            self._fail(exc.format_message(), USAGE_ERROR, as_json, kind="usage")
        except click.ClickException as exc:
            self._fail(exc.format_message(), exc.exit_code, as_json, kind="error")
        except click.Abort as exc:  # click's wrapping of KeyboardInterrupt, of which verify's Terminated is one
            signum = getattr(exc.__cause__, "signum", None)  # SIGTERM or SIGHUP during verify
            if signum is not None:
                self._fail(str(exc.__cause__), 128 + int(signum), as_json, kind="terminated")
            self._fail("interrupted", 130, as_json, kind="interrupted")
        except LossGradError as exc:  # an invalid call described by the options: aclnn's code and message
            if debug:
                raise
            self._fail(str(exc), USAGE_ERROR, as_json, kind="invalid", code=exc.code)
        except BackendUnavailable as exc:
            if debug:
                raise
            self._fail(str(exc), FAILURE, as_json, kind="unavailable")
        except OutputTooLarge as exc:  # a call that would not fit in memory, refused before allocating
            if debug:
                raise
            self._fail(str(exc), FAILURE, as_json, kind="memory")
        except CacheDirError as exc:  # $LOSSGRAD_CACHE unusable: the user's setting, named
            if debug:
                raise
            self._fail(str(exc), USAGE_ERROR, as_json, kind="usage")
        except OSError as exc:
            if debug:
                raise
            where = f": {exc.filename}" if exc.filename else ""
            self._fail(f"{exc.strerror or exc}{where}", FAILURE, as_json, kind="os")
        except Exception as exc:  # noqa: BLE001 - the last resort: one line, the traceback behind --debug
            if debug:
                raise
            self._fail(f"{type(exc).__name__}: {exc} (run `lossgrad --debug ...` for the traceback)", FAILURE,
                       as_json, kind="internal")
        sys.exit(rv if isinstance(rv, int) else 0)

    @staticmethod
    def _fail(message: str, status: int, as_json: bool, kind: str, code: int | None = None) -> None:
        line = _one_line(message)
        if as_json:
            report: dict[str, Any] = {"error": line, "kind": kind, "exit_status": status}
            if code is not None:
                report["code"] = code
            click.echo(json.dumps(report))
        else:
            click.echo(f"lossgrad: error: {line}", err=True)
        sys.exit(status)


class _OpName(click.ParamType):
    """An op by any of its names (registry.get_op: l1, l1_loss_backward, aclnnL1LossBackward, ...)."""

    name = "op"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        try:
            return get_op(value).name
        except KeyError as exc:
            self.fail(exc.args[0], param, ctx)


class _SocName(click.ParamType):
    """A SoC version or alias (socs.get_soc); with many=True a comma-separated list."""

    name = "soc"

    def __init__(self, many: bool = False) -> None:
        self.many = many

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if not isinstance(value, str):
            return value
        parts = [p.strip() for p in value.split(",")] if self.many else [value]
        try:
            names = tuple(get_soc(p).name for p in parts)
        except LossGradError as exc:
            self.fail(exc.message, param, ctx)
        return names if self.many else names[0]


OP = _OpName()
OP_HELP = f"{short_names()} (or the full or aclnn name)"


@click.group(cls=_Main)
@click.version_option(package_name="ascend-lossgrad")
@click.option("--debug", is_flag=True, help="Show the Python traceback of an error.")
def main(debug: bool) -> None:
    """Ascend C loss-backward kernels: generate, build, run and verify them."""
    from . import progress
    progress.enable()  # long work (kernel compiles, big twin runs) says so on stderr, into a log too


def _given(param: str) -> bool:
    """Whether the user gave this option of the running command (not its default)."""
    ctx = click.get_current_context()
    return ctx.get_parameter_source(param) not in (None, click.core.ParameterSource.DEFAULT)


def _table_progress(path: str) -> "Callable[[int, int], None]":
    """verify's notes while a large case table is checked (about once a second)."""
    def show(done: int, total: int) -> None:
        click.echo(f"lossgrad: checking {path}: {done:,} of {total:,} rows", err=True)
    return show


def _progress(stream):
    t0 = time.perf_counter()

    # A redrawn bar on a terminal; in a log (CI, `| tee`) one plain line per tenth, so the log stays readable.
    tty = stream.isatty()

    def show(done: int, total: int, failed: int) -> None:
        if done != total and done % max(1, total // (200 if tty else 10)):
            return
        status = f"{done}/{total} cases, {failed} failed, {time.perf_counter() - t0:.1f} s"
        if tty:
            width = 30
            fill = width * done // total
            stream.write(f"\r[{'=' * fill}{' ' * (width - fill)}] {status}" + ("\n" if done == total else ""))
        else:
            stream.write(status + "\n")
        stream.flush()
    return show


@main.command()
@click.option("--soc", "socs", multiple=True, type=_SocName(many=True),
              help="SoC(s) to verify, repeated or comma-separated (default: one part per architecture).")
@click.option("--op", "ops", multiple=True, type=OP, help=f"Restrict to these ops: {OP_HELP}.")
@click.option("--full", is_flag=True, help="The whole matrix instead of the quick default subset.")
@click.option("--cases", "case_file", type=click.Path(exists=True, dir_okay=False),
              help="Run the cases of a CSV case table instead of the generated matrix.")
@click.option("--export-cases", type=click.Path(dir_okay=False), help="Write the selected cases as a CSV table.")
@click.option("--backend", default="twin", type=click.Choice(list(BACKENDS)),
              show_default=True)
@click.option("-j", "--jobs", default=os.cpu_count() or 2, show_default=True, type=click.IntRange(min=1),
              help="Cases run concurrently.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report instead of the table.")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="Run only the first N cases.")
@click.option("--auto-sync", "auto_sync", type=click.Choice(["on", "off"]), default="on", show_default=True,
              help="Twin: model bisheng --cce-auto-sync (on: S<->V/MTE2/MTE3 sync inserted by the compiler; "
                   "off: the kernel must synchronise them itself).")
@click.option("--fuzz", "fuzz_n", type=click.IntRange(min=1), default=None,
              help="Instead of the matrix: N random valid calls per SoC (docs/verify.md, the fuzz search); failures "
                   "are shrunk to minimal reproducers.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="The fuzz search's seed (default: a fresh one, printed).")
@click.option("--shrink", "shrink_n", type=click.IntRange(min=0), default=3, show_default=True,
              help="Fuzz failures shrunk to a minimal reproducer (the first of each kind of failure).")
@click.option("--torch-oracle/--no-torch-oracle", "torch_oracle", default=True, show_default=True,
              help="Fuzz: also compare one call in 8 (float64 golden) with PyTorch's autograd, when torch is "
                   "installed.")
def verify(socs: tuple[tuple[str, ...], ...], ops: tuple[str, ...], full: bool, case_file: str | None,
           export_cases: str | None, backend: str, jobs: int, as_json: bool, limit: int | None,
           auto_sync: str, fuzz_n: int | None, seed: int | None, shrink_n: int, torch_oracle: bool) -> None:
    """Run the verification matrix and compare with the golden model (CANN's precision standard)."""
    from .runners.twin import AUTO_SYNC_ENV
    os.environ[AUTO_SYNC_ENV] = auto_sync  # read by the twin runner of every case (threads and workers alike)
    from .runners import require_backend
    from .verify import default_cases, read_csv, run_cases, summary_json, worst
    from .verify.run import note_writer
    from .verify.cases import CaseTableError, printable

    if case_file and full:
        raise click.UsageError("--full selects the generated matrix and --cases runs a case table: give one of them")
    if backend != "twin" and _given("auto_sync"):
        raise click.UsageError(f"--auto-sync models bisheng's switch on the twin; --backend {backend} runs what CANN "
                               "built (drop --auto-sync)")
    names = list(dict.fromkeys(n for group in socs for n in group)) or list(VERIFY_DEFAULT_SOCS)
    if fuzz_n is None and seed is not None:
        raise click.UsageError("--seed is the fuzz search's: give --fuzz N too")
    if fuzz_n is not None and (full or case_file):
        raise click.UsageError("--fuzz draws its own calls: it does not combine with "
                               + ("--full" if full else "--cases"))
    if fuzz_n is not None:
        from .verify import fuzz
        if seed is None:
            seed = fuzz.fresh_seed()
        from .verify.oracle import torch_available
        cases = list(fuzz.fuzz_cases(fuzz_n, seed, names, ops or None))
        oracle = fuzz.oracle_sample if torch_oracle and torch_available() else None
        click.echo(f"fuzz: {fuzz_n} random calls per SoC, seed {seed} (the same calls again: lossgrad verify "
                   f"{fuzz.command_args(fuzz_n, seed, names, ops, auto_sync)})"
                   + ("; one in 8 also against PyTorch's autograd" if oracle else ""), err=True)
    elif case_file:
        try:
            cases = read_csv(case_file, progress=_table_progress(case_file))
        except CaseTableError as exc:
            raise click.UsageError(str(exc)) from None
        if socs:
            cases = [c for c in cases if c.soc in names]
        if ops:
            cases = [c for c in cases if c.op in ops]
    else:
        cases = default_cases(names, full=full, ops=ops or None)
    if limit is not None:
        cases = cases[:limit]
    if not cases:  # never report success having verified nothing
        refused = [f"{op} on {soc}" for op in (ops or []) for soc in names if not runs_on(op, soc)]
        why = ("the case table has no rows" if case_file and not ops and not socs and limit is None
               else "--limit 0" if limit == 0
               else f"aclnn refuses every dtype of {', '.join(refused)}" if refused and not case_file
               else "the --op/--soc filters select none of its cases")
        raise click.ClickException(f"no case to verify: {why}")
    if export_cases:
        from .outputs import write_new
        from .verify.cases import csv_text
        text = csv_text(cases)
        if not Path(export_cases).parent.is_dir():
            raise click.ClickException(f"--export-cases: directory {Path(export_cases).parent} does not exist")

        def write(tmp: str) -> None:
            with open(tmp, "w", newline="") as fh:
                fh.write(text)
        try:
            write_new(export_cases, write)
        except FileExistsError as exc:
            raise click.ClickException(str(exc.strerror)) from None
        if as_json:
            click.echo(json.dumps({"exported": len(cases), "path": export_cases}))
        else:
            click.echo(f"wrote {len(cases)} cases to {export_cases}", err=True)
        return
    backend = require_backend(backend)  # once, up front: no case runs on a backend that cannot run here
    t0 = time.perf_counter()
    results = run_cases(cases, backend=backend, jobs=jobs, progress=_progress(sys.stderr),
                        notes=note_writer(sys.stderr), oracle=oracle if fuzz_n is not None else None)
    wall = time.perf_counter() - t0
    summary = summary_json(results, wall)
    shrunk = []
    if fuzz_n is not None:
        from .verify import fuzz
        shrunk = fuzz.shrink_failures(results, backend, shrink_n, note_writer(sys.stderr))
        checked = sum(1 for c in cases if oracle is not None and oracle(c))
        summary["fuzz"] = fuzz.report_json(fuzz_n, seed, names, ops, auto_sync, shrunk, checked)
    if as_json:
        click.echo(json.dumps(summary, indent=1, allow_nan=False))
    else:
        table = worst(results)
        w = max([26, *(len(op) + 1 for op, _ in table)])  # the op column fits the longest name in the report
        click.echo(f"{'':<{w + 17}}{'judged (fp32-order golden)':>26}{'vs float64 golden':>24}")
        click.echo(f"{'op':<{w}}{'dtype':<10}{'cases':>7}{'MERE':>11}{'MARE':>11}{'failed':>7}{'MERE':>12}{'MARE':>12}")
        for (op, d), row in table.items():
            click.echo(f"{op:<{w}}{d:<10}{int(row['cases']):>7}{row['mere']:>11.3g}{row['mare']:>11.3g}"
                       f"{int(row['failed']):>7}{row['mere64']:>12.3g}{row['mare64']:>12.3g}")
        overflowed = [f"{op} {d}" for (op, d), row in table.items()
                      if max(row["mere64"], row["mare64"]) == float("inf")]
        if overflowed:
            click.echo(f"inf vs float64 ({', '.join(overflowed)}): aclnn's operation order overflows float32 (or a "
                       f"16-bit intermediate) where the exact result does not; the kernels follow aclnn, so they "
                       f"are judged against the float32-order golden, which overflows the same way "
                       f"(docs/verify.md, docs/semantics.md)")
        for r in results:
            if r.failed:
                detail = r.error or (r.comparison.describe() if r.comparison else "")
                click.echo(f"FAIL {printable(r.case.id)}: {printable(detail)}")
        for item in shrunk:
            click.echo(fuzz.describe_shrunk(item, auto_sync))
        if summary["undetermined"]:
            click.echo(f"{summary['undetermined']} case(s) not judged: their outputs depend on whether float32 "
                       f"saturates on 310P/910, which public sources leave open (docs/twin.md, docs/verify.md)")
        click.echo(f"{len(results)} cases on {backend}, {summary['failed']} failed, {wall:.1f} s "
                   f"({', '.join(sorted({r.case.soc for r in results}))})"
                   + (f"; fuzz seed {seed}" if fuzz_n is not None else ""))
    sys.exit(0 if summary["passed"] else 1)


def _dtype(value: str, option: str) -> Any:
    from . import dtypes as dt
    try:
        return dt.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None


def _shape(text: str, option: str) -> tuple[int, ...]:
    try:
        return parse_shape(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None


def _reduction(text: str) -> "str | int":
    """A reduction name, or aclnn's integer (0 none, 1 mean, 2 sum, 3 batchmean); anything else is a name, which
    validation refuses with 161002 when it is none (so "-+1" or "²" are usage errors, never a crash)."""
    try:
        return parse_int(text)
    except ValueError:
        return text.strip()


def _optional_shape_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """One --<role> shape option per optional role (opspec.ROLES): --weight, --pos-weight; default: absent."""
    for role in reversed([r for r in ROLES if not r.required]):
        command = click.option(f"--{role.name.replace('_', '-')}", f"{role.name}_shape", default=None,
                               help=f"{role.name} shape, for an op with that optional input (default: absent).")(
                                   command)
    return command


@main.command()
@click.argument("op", type=OP)
@click.option("--grad", "grad_shape", default="()", show_default=True, help="gradOutput shape, e.g. '(1024,)'.")
@click.option("--self", "self_shape", default="(1024,)", show_default=True)
@click.option("--target", "target_shape", default=None, help="Default: self's shape.")
@_optional_shape_options
@click.option("--dtype", default="float32", show_default=True, help="Input dtype (all three).")
@click.option("--out-dtype", default=None)
@click.option("--reduction", default="mean", show_default=True, help="none/mean/sum/batchmean or aclnn's 0-3.")
@click.option("--beta", type=float, default=None)
@click.option("--log-target", is_flag=True, default=False)
@click.option("--soc", default=None, type=_SocName(), help="SoC version or product-line alias (default: Ascend910B1).")
@click.option("--json", "as_json", is_flag=True)
def tiling(op: str, grad_shape: str, self_shape: str, target_shape: str | None, dtype: str, out_dtype: str | None,
           reduction: str, beta: float | None, log_target: bool, soc: str | None, as_json: bool,
           **optional: str | None) -> None:
    """Print the tiling an op gets for shapes, dtype and SoC (OP: a short, full or aclnn name; see --help)."""
    import numpy as np

    from .tiling import plan_call
    from .validation import validate

    spec = get_op(op)
    d = _dtype(dtype, "--dtype").np_dtype
    shapes: list[tuple[int, ...] | None] = [
        _shape(s, o) for s, o in ((grad_shape, "--grad"), (self_shape, "--self"),
                                  (target_shape or self_shape, "--target" if target_shape else "--self"))]
    for key, text in optional.items():  # --weight, --pos-weight: only for an op that has the input
        role = key.removesuffix("_shape")
        flag = f"--{role.replace('_', '-')}"
        if text is not None and role not in spec.roles:
            raise click.BadParameter(f"{spec.name} has no {role} input", param_hint=flag)
    for i in spec.inputs[3:]:
        text = optional.get(f"{i.role}_shape")
        shapes.append(None if text is None else _shape(text, f"--{i.role.replace('_', '-')}"))
    # Shape-only arrays: one element seen through the whole shape, so a huge shape costs nothing (the tiling
    # reads shapes and dtypes, never data).
    try:
        arrays = [None if shape is None else np.broadcast_to(np.zeros((), d), shape) for shape in shapes]
    except ValueError as exc:  # more bytes than a 64-bit address space holds: no such tensor can exist
        raise click.BadParameter(f"{shapes}: {exc}", param_hint="--grad/--self/--target") from None
    attrs: dict[str, object] = {}
    if beta is not None:
        attrs["beta"] = beta
    if log_target:
        attrs["log_target"] = True
    call = validate(op, *arrays, _reduction(reduction), attrs, out_dtype=out_dtype, soc=soc)
    if not call.launch:
        click.echo("no kernel launch: aclnn returns early for empty inputs")
        return
    p = plan_call(call)
    rank = int(p.fields["rank"])
    info = {"op": op, "soc": call.soc.name, "block_dim": p.block_dim, "tiling_key": p.tiling_key,
            "modes": dict(p.modes), "ub_bytes": p.ub_bytes, "ub_budget": p.ub_budget,
            "notes": list(p.notes), "tiling_data_bytes": len(p.data),
            "fields": {k: (list(v[:rank]) if isinstance(v, tuple) else v) for k, v in p.fields.items()}}
    if as_json:
        click.echo(json.dumps(info, indent=1))
        return
    for k, v in info.items():
        if k != "fields":
            click.echo(f"{k:<18} {v}")
    click.echo("LossGradTilingData:")
    for k, v in info["fields"].items():
        click.echo(f"  {k:<14} {v}")


@main.command()
@click.option("--op", "ops", multiple=True, type=OP, help=f"Default: all ops ({OP_HELP}).")
@click.option("--dtypes", default=None,
              help="grad;self;target;out dtypes for a concrete kernel (default: CANN DTYPE_ macros).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory to write into: new, empty, or one lossgrad created (it keeps a marker file there).")
@click.option("--op-host", is_flag=True, help="Also render the op_host sources (needs lossgrad.cann).")
@click.option("--same-shape-only", is_flag=True,
              help="Render the same-shape path alone (its class and tiling keys): what a reader follows for a call "
                   "whose inputs all have the output's shape. It runs such calls and faults on any other key.")
def gen(ops: tuple[str, ...], dtypes: str | None, out_dir: str, op_host: bool, same_shape_only: bool) -> None:
    """Render the kernel sources (and optionally the op_host files) into a directory."""
    from . import codegen
    from . import dtypes as dt
    from .cann.outdir import UnsafeOutputDir, claim

    concrete = None
    if dtypes:
        try:
            concrete = dict(zip(("grad", "self", "target", "out"), map(dt.parse, parse_dtypes(dtypes))))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--dtypes") from exc
        wrong = sorted({d.label for d in concrete.values() if d not in dt.KERNEL_DTYPES})
        if wrong:  # no op's kernel is instantiated with these: the rendered source could never run
            raise click.BadParameter(f"{', '.join(wrong)}: the kernels take "
                                     f"{', '.join(d.label for d in dt.KERNEL_DTYPES)} only (aclnn casts other "
                                     f"inputs first)", param_hint="--dtypes")
    try:
        claim(Path(out_dir), "lossgrad gen")  # never writes into a directory of someone else's files
    except UnsafeOutputDir as exc:
        raise click.ClickException(str(exc)) from exc
    chosen = list(ops) or list(OPS)
    written = [codegen.write_kernel(out_dir, op, None if concrete is None else get_op(op).absent_as_self(concrete),
                                    same_shape_only) for op in chosen]
    for p in written:
        click.echo(str(p))
    click.echo(str(Path(out_dir) / codegen.TILING_HEADER))
    if op_host:
        from .cann.op_host import write_host_files
        for p in write_host_files(Path(out_dir), [OPS[o] for o in chosen]):
            click.echo(str(p))


@main.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--time", "show_time", is_flag=True,
              help="The time model's cost parameters per SoC (source, confidence).")
def socs(as_json: bool, show_time: bool) -> None:
    """The SoC table the tiling uses (each figure with its source and confidence)."""
    from .timing.params import params_for, params_record
    records = [soc_record(s) for s in SOCS.values()]
    if as_json:
        for r in records:
            r["time_params"] = params_record(params_for(r["name"]))
        click.echo(json.dumps(records, indent=1))
        return
    if show_time:
        for s in SOCS.values():
            click.echo(f"{s.name} (time model)")
            for name, f in params_for(s).fields().items():  # whole values: a cut one would read as another
                click.echo(f"  {name:<26}{f.confidence:<8}{f.value!s}  [{f.source}]")
            for note in params_for(s).notes:
                click.echo(f"  note: {note}")
        return
    click.echo(f"{'SoC':<18}{'line':<6}{'arch':<6}{'cores':>6}{'UB/kernel':>11}{'L2 MB':>8}{'BW GB/s':>9}"
               f"{'MHz':>6}  pad bf16io")
    for r in records:
        def v(k: str, r: dict = r) -> object:
            x = r[k]
            return x["value"] if isinstance(x, dict) else x  # a Fact's value
        l2 = v("l2_bytes")
        bw = v("hbm_bandwidth")
        click.echo(f"{r['name']:<18}{r['line']:<6}{r['npu_arch']:<6}{v('vector_cores'):>6}{v('ub_kernel_bytes'):>11}"
                   f"{(l2 // (1 << 20)) if l2 else '-':>8}{(bw / 1e9) if bw else '-':>9}{v('clock_mhz') or '-':>6}"
                   f"  {'y' if r['datacopy_pad'] else 'n':>3} {'y' if r['bf16_io'] else 'n':>4}")
    from .socs import ALIASES, AMBIGUOUS
    click.echo("\nAliases (case-insensitive, as are SoC versions except the ambiguous spelling below):")
    for target in dict.fromkeys(ALIASES.values()):
        click.echo(f"  {', '.join(aliases_of(target)):<34} -> {target}")
    for key, meaning in AMBIGUOUS.items():
        click.echo(f"  {key!r} is refused as ambiguous: {meaning}")
    click.echo("Sources and confidence of every figure: lossgrad socs --json; time-model parameters: --time")


@main.group(invoke_without_command=True)
@click.pass_context
def cache(ctx: click.Context) -> None:
    """The kernel cache: where it is and what it holds (`lossgrad cache clean` empties it)."""
    if ctx.invoked_subcommand is not None:
        return
    from .kernel_cache import parts
    from .memory import format_bytes
    from .twin.build import cache_root
    root = cache_root()
    found = parts(root)
    click.echo(f"kernel cache: {root} ($LOSSGRAD_CACHE, else $XDG_CACHE_HOME/lossgrad, else ~/.cache/lossgrad)")
    for p in found:
        click.echo(f"  {p.name:<10}{format_bytes(p.bytes):>11}  {p.entries:>5} entries  {p.what}")
    total = sum(p.bytes for p in found)
    click.echo(f"  {'total':<10}{format_bytes(total):>11}  (safe to delete: `lossgrad cache clean`; rebuilt as needed)")


@cache.command("clean")
def cache_clean() -> None:
    """Remove everything lossgrad cached (compiled kernels, precompiled headers, rendered sources, CANN builds)."""
    from .kernel_cache import clean
    from .memory import format_bytes
    from .twin.build import cache_root
    root = cache_root()
    freed = clean(root)
    click.echo(f"removed the kernel cache in {root}: {format_bytes(freed)} freed")


def _parse_shape_triple(text: str) -> "tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]":
    parts = [p for p in text.split(";")]
    if len(parts) != 3:
        raise click.BadParameter(f"{text!r}: give the three shapes as 'GRAD;SELF;TARGET', "
                                 "e.g. '();(4096,1024);(1024,)'",
                                 param_hint="--shapes")
    try:
        return tuple(parse_shape(p) for p in parts)  # type: ignore[return-value]
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--shapes") from None


@main.command()
@click.option("--backend", default="twin", type=click.Choice(["twin", "sim", "npu"]), show_default=True)
@click.option("--op", "ops", multiple=True, type=OP, help=f"Default: all ops ({OP_HELP}).")
@click.option("--elements", default=twin_bench.DEFAULT_ELEMENTS, show_default=True,
              type=click.IntRange(min=twin_bench.MIN_ELEMENTS), help="Output elements per built-in scenario.")
@click.option("--soc", "socs", multiple=True,
              help=f"SoC(s), comma-separated or repeated; 'default' = every default SoC "
                   f"({', '.join(VERIFY_DEFAULT_SOCS)}). Default: {DEFAULT_SOC}.")
@click.option("--scenarios", "scenario_set", default="default", show_default=True,
              type=click.Choice(["default", "stress", "training"]),
              help="default: same shapes, row and column broadcast (float32 and a float16 gradOutput); stress: the "
                   "broadcast paths a reviewer checks, each beside the same call without broadcast; training: "
                   "(8192,4096) and (32,1024,1024), same shapes, row-broadcast target and scalar gradOutput, in "
                   "every dtype the op supports on the SoC (or --dtype), each row judged against the roofline "
                   "bound (1.2x; Atlas 910 1.5x) and its same-shape call.")
@click.option("--shapes", "shape_sets", multiple=True,
              help="Run these shapes instead of the built-in scenarios: 'GRAD;SELF;TARGET', e.g. "
                   "'();(4096,1024);(1024,)'. Repeatable.")
@click.option("--dtype", default="float32", show_default=True,
              help="Input dtype (all three inputs). Without it the default scenarios run float32 and a float16 "
                   "gradOutput beside float32 self/target.")
@click.option("--reduction", default="none", show_default=True,
              help="Reduction for --shapes and the default scenarios (none/mean/sum/...); the stress cases fix "
                   "their own.")
@click.option("--timing/--no-timing", default=True, show_default=True, help="Model the time (the twin's time model).")
@click.option("--aclnn/--no-aclnn", "with_aclnn", default=True, show_default=True,
              help="Also model aclnn's composition of each call (about half the run time).")
@click.option("--trace", "trace_path", default=None, type=click.Path(dir_okay=False),
              help="Write a timeline of our launches (Chrome trace JSON: open in Perfetto or chrome://tracing).")
@click.option("--trace-zero-length", is_flag=True,
              help="Keep the zero-length events (flags and barriers the model prices at 0) in --trace; by default "
                   "they are dropped (more than half of all events, and nothing to see).")
@click.option("--plot", "plot_path", default=None, type=click.Path(dir_okay=False),
              help="Draw a roofline chart (bytes moved vs modelled time; .png, .svg, .pdf, ...); needs the [plot] "
                   "extra (matplotlib).")
@click.option("--reps", default=20, show_default=True, type=click.IntRange(min=1), help="Timed repetitions (sim/npu).")
@click.option("--json", "as_json", is_flag=True)
def bench(backend: str, ops: tuple[str, ...], elements: int, socs: tuple[str, ...], scenario_set: str,
          shape_sets: tuple[str, ...], dtype: str, reduction: str, timing: bool, with_aclnn: bool,
          trace_path: str | None,
          trace_zero_length: bool, plot_path: str | None, reps: int, as_json: bool) -> None:
    """Performance figures on the twin: counters and modelled time (bound pipe, % of the memory roofline) of our
    kernels beside aclnn's composition of passes; device or simulator timings with CANN."""
    import math

    import numpy as np

    from .dtypes import DType

    soc_names: list[str] = []
    for group in socs:
        for part in group.split(","):
            if part.strip().lower() == "default":
                soc_names.extend(VERIFY_DEFAULT_SOCS)
            else:
                soc_names.append(_SocName().convert(part.strip(), None, click.get_current_context()))
    soc_names = list(dict.fromkeys(soc_names)) or [DEFAULT_SOC]
    _refuse_ignored_bench_options(backend, bool(shape_sets), scenario_set)
    if backend != "twin":
        from .cann.bench import bench_on_cann
        from .runners import require_backend
        from .validation import validate
        require_backend(backend)  # the missing-CANN message, before anything is prepared
        calls = [validate(op, *[np.ones(elements, np.float32)] * 3, "none", soc=soc_names[0]) for op in (ops or OPS)]
        results = [r.as_dict() for r in bench_on_cann(calls, backend, reps=reps)]
        click.echo(json.dumps(results, indent=1) if as_json else "\n".join(map(str, results)))
        return
    if (trace_path or plot_path) and not timing:
        raise click.UsageError("--trace and --plot need the time model (drop --no-timing)")
    if plot_path and not with_aclnn:
        raise click.UsageError("--plot joins ours to aclnn's composition: drop --no-aclnn")
    if trace_zero_length and not trace_path:
        raise click.UsageError("--trace-zero-length shapes the --trace file: give --trace too")
    _check_bench_outputs(trace_path, plot_path)  # before the run: a bad path or format costs nothing
    from . import dtypes as dt
    try:
        in_dtype = dt.parse(dtype)
    except (ValueError, TypeError):
        in_dtype = None
    if in_dtype not in (DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16):
        raise click.BadParameter(f"{dtype!r}: expected float32, float16 or bfloat16", param_hint="--dtype")
    red = _reduction(reduction)
    triples = [_parse_shape_triple(t) for t in shape_sets]
    planned: dict[str, list[twin_bench.Case]] = {}
    chosen = list(ops) or None
    for soc in soc_names:
        if triples:
            planned[f"{soc}: --shapes, {in_dtype.label}, reduction {reduction}"] = twin_bench.shape_cases(
                triples, chosen, soc, in_dtype, red)
        elif scenario_set == "stress":
            planned[f"{soc}: stress cases, {in_dtype.label}"] = twin_bench.stress_cases(chosen, soc, in_dtype)
        elif scenario_set == "training":
            only = in_dtype if _given("dtype") else None
            planned[f"{soc}: training shapes, {only.label if only else 'every dtype'}, reduction none"] = \
                twin_bench.training_cases(chosen, soc, only)
        elif _given("dtype"):
            planned[f"{soc}: {in_dtype.label}, {elements} elements, reduction {reduction}"] = \
                twin_bench.default_cases(chosen, elements, soc, in_dtype, red)
        else:
            planned[f"{soc}: float32, {elements} elements, reduction {reduction}"] = twin_bench.default_cases(
                chosen, elements, soc, DType.FLOAT32, red)
            planned[f"{soc}: float16 gradOutput, float32 self/target, reduction {reduction}"] = \
                twin_bench.default_cases(chosen, elements, soc, DType.FLOAT32, red, grad_dtype=DType.FLOAT16)
    every = [c for cases in planned.values() for c in cases]
    try:
        twin_bench.check(every)  # every call, before the first runs: a refusal names its op, scenario and SoC
    except twin_bench.BenchError as exc:
        raise click.UsageError(str(exc)) from None
    if not every:
        raise click.UsageError("no case to run: aclnn accepts none of the chosen ops in these dtypes on the chosen "
                               "SoCs (--op, --dtype, --soc)")
    sides = 2 if with_aclnn else 1
    step = iter(range(1, sides * len(every) + 1))

    def tell(case: twin_bench.Case, side: str) -> None:
        n = next(step)
        elements_ = math.prod(np.broadcast_shapes(*(s for s in case.shapes if s is not None)))
        click.echo(f"lossgrad: bench {n}/{sides * len(every)}: {case.label()}: {side} ({elements_:,} elements)",
                   err=True)

    sections = {title: twin_bench.run_cases(cases, timing, progress=tell, with_aclnn=with_aclnn)
                for title, cases in planned.items()}
    all_rows = [r for rows in sections.values() for r in rows]
    misses = twin_bench.training_misses(all_rows) if scenario_set == "training" and timing else []
    if trace_path:
        from .outputs import write_replace
        doc = {"traceEvents": twin_bench.trace_events(all_rows, zero_length=trace_zero_length),
               "displayTimeUnit": "ns"}

        def write_trace(tmp: str) -> None:
            with open(tmp, "w") as fh:
                json.dump(doc, fh)
        write_replace(trace_path, write_trace)
    if plot_path:
        from .outputs import write_replace
        write_replace(plot_path, lambda tmp: twin_bench.plot_roofline(all_rows, tmp, fmt=_plot_format(plot_path)))
    if as_json:
        def row_doc(r: twin_bench.Row) -> dict:
            d = r.as_dict()
            if scenario_set == "training":
                d["roof_ratio_bound"] = twin_bench.roof_ratio(r.soc)
                d["misses"] = [m for row, m in misses if row is r]
            return d
        click.echo(json.dumps({k: [row_doc(r) for r in v] for k, v in sections.items()}, indent=1))
        return
    click.echo("modelled time: the twin's pipe-level time model (docs/timing.md), not a measurement; band = where "
               "the held-out published timings of the launch's regime fell (10th-90th percentile); "
               "%roof = the HBM time of the call's minimum GM bytes (reads; writes beyond L2) / modelled time (its "
               "band from the time's)")
    for soc in soc_names:
        click.echo(f"{soc}: " + twin_bench.buffering_note(soc, list(ops) or None))
        for note in twin_bench.timing_notes(soc) if timing else ():
            click.echo(f"{soc}: note: {note}")
    for title, rows in sections.items():
        click.echo(f"\n{title}:  ours" + (" | aclnn composition (BroadcastTo/Cast/ReduceSum passes + kernel, or l0 "
                   "ops where aclnn has no kernel; one launch each)" if with_aclnn else ""))
        w = max([24] + [len(r.op) + 1 for r in rows])  # the longest op name of the section, and a space
        ours_head = (f"{'op':<{w}}{'scenario':<34}{'B/elem':>7}{'rep/el':>8}{'api/el':>8}{'dma/el':>8}{'us':>9}"
                     f"{'band us':>16}{'bound':>8}{'%roof':>11}")
        click.echo(ours_head + (f" |{'B/elem':>7}{'rep/el':>8}{'us':>9}{'band us':>16}{'bound':>8}{'%roof':>11}"
                                f"{'launch':>7}{'speedup':>8}" if with_aclnn else ""))
        for r in rows:
            d = r.as_dict()
            o, a = d["ours"], d["aclnn_composition"]

            def num(x: Any, fmt: str) -> str:
                return "-" if x is None else format(x, fmt)

            def rng(x: Any, fmt: str) -> str:
                return "-" if x is None else f"{x[0]:{fmt}}-{x[1]:{fmt}}"

            def pct(side: dict) -> str:
                if side["pct_roofline"] is None:
                    return "-"
                b = side["pct_roofline_band"]
                return f"{side['pct_roofline']:.0f}" + ("" if b is None else f"({b[0]:.0f}-{b[1]:.0f})")

            label = r.scenario if scenario_set != "training" else f"{r.dtypes[1]} {r.scenario}"
            line = (f"{r.op:<{w}}{label[:33]:<34}{o['gm_bytes_per_elem']:>7.2f}"
                    f"{o['vec_instr_per_elem']:>8.3f}{o['api_calls_per_elem']:>8.4f}{o['dma_per_elem']:>8.4f}"
                    f"{num(o['modelled_us'], '.1f'):>9}{rng(o['band_us'], '.1f'):>16}{o['bound'] or '-':>8}"
                    f"{pct(o):>11}")
            if a is not None:
                line += (f" |{a['gm_bytes_per_elem']:>7.2f}{a['vec_instr_per_elem']:>8.3f}"
                         f"{num(a['modelled_us'], '.1f'):>9}{rng(a['band_us'], '.1f'):>16}{a['bound'] or '-':>8}"
                         f"{pct(a):>11}{a['launches']:>7}{num(d['speedup'], '.2f'):>8}")
            click.echo(line)
    if scenario_set == "training" and timing:
        held = len(all_rows) - len({id(r) for r, _ in misses})
        click.echo(f"\ntraining bounds: {held} of {len(all_rows)} rows hold (modelled time within the SoC's bound of "
                   "the roofline, broadcast calls no slower than their same-shape call)")
        for r, why in misses:
            click.echo(f"  MISS {r.soc} {r.op} {r.dtypes[1]} {r.scenario}: {why}")
    if trace_path:
        click.echo(f"\ntimeline: {trace_path} (Chrome trace JSON; open in https://ui.perfetto.dev or chrome://tracing)")
    if plot_path:
        click.echo(f"roofline chart: {plot_path}")


_TWIN_ONLY = ("scenario_set", "shape_sets", "dtype", "reduction", "timing", "with_aclnn", "trace_path",
              "trace_zero_length", "plot_path")


def _refuse_ignored_bench_options(backend: str, shapes: bool, scenario_set: str) -> None:
    """No option may be silently ignored: each combination that would drop one is a usage error naming it."""
    flag = {"scenario_set": "--scenarios", "shape_sets": "--shapes", "dtype": "--dtype", "reduction": "--reduction",
            "timing": "--timing/--no-timing", "with_aclnn": "--aclnn/--no-aclnn", "trace_path": "--trace",
            "trace_zero_length": "--trace-zero-length",
            "plot_path": "--plot", "elements": "--elements", "reps": "--reps"}
    if backend != "twin":
        given = [flag[p] for p in _TWIN_ONLY if _given(p)]
        if given:
            raise click.UsageError(f"{', '.join(given)}: twin options; --backend {backend} times --elements "
                                   "float32 elements per op (drop them, or use --backend twin)")
        return
    if _given("reps"):
        raise click.UsageError("--reps: the twin's modelled time does not vary between runs (it is for --backend "
                               "sim/npu)")
    if shapes and _given("scenario_set"):
        raise click.UsageError("--shapes runs the given shapes instead of the built-in scenarios: drop --scenarios")
    if (shapes or scenario_set in ("stress", "training")) and _given("elements"):
        raise click.UsageError("--elements sizes the default scenarios; --shapes and --scenarios stress/training fix "
                               "their own sizes")
    if scenario_set == "stress" and not shapes and _given("reduction"):
        raise click.UsageError("--reduction: the stress cases fix their own (sum for KL, none otherwise)")
    if scenario_set == "training" and not shapes and _given("reduction"):
        raise click.UsageError("--reduction: the training cases run reduction none")


def _plot_format(path: str) -> str:
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    return ext or "png"


def _check_bench_outputs(trace_path: str | None, plot_path: str | None) -> None:
    """--trace and --plot checked before the run: a missing directory, a directory as the file, an unwritable place,
    a chart format matplotlib cannot write and a missing matplotlib are refused at once, not after the benchmark."""
    from .outputs import check_target
    for path, option in ((trace_path, "--trace"), (plot_path, "--plot")):
        if path:
            try:
                check_target(path, option)
            except ValueError as exc:
                raise click.ClickException(str(exc)) from None
    if plot_path:
        try:
            from matplotlib.figure import Figure
        except ImportError:
            raise click.ClickException(twin_bench.PLOT_EXTRA_MESSAGE) from None
        formats = Figure().canvas.get_supported_filetypes()
        fmt = _plot_format(plot_path)
        if fmt not in formats:
            raise click.BadParameter(f"{plot_path}: matplotlib cannot write .{fmt} charts; use one of "
                                     f"{', '.join('.' + f for f in sorted(formats))}", param_hint="--plot")
    if trace_path and plot_path and os.path.realpath(trace_path) == os.path.realpath(plot_path):
        raise click.UsageError("--trace and --plot name the same file")


try:  # `lossgrad build` lives with the CANN integration
    from .cann.cli_build import build as _build_command
    for _param in _build_command.params:  # an unknown SoC is a usage error at parse time, as for the other commands
        if _param.name == "soc":
            _param.type = _SocName()
    main.add_command(_build_command)
except ImportError:  # pragma: no cover - only while that module is absent
    pass


if __name__ == "__main__":  # pragma: no cover
    main()
