"""Verification cases: the default matrix and a CSV case-table format users can extend.

A case names everything needed to reproduce one run: op, SoC, the input shapes, input and output dtypes,
reduction, attributes, the value distribution and its seed, and how to judge it (precision standard, reference mode,
per-case threshold scale) - like the rows of ops-nn's case tables.
"""
from __future__ import annotations

import csv
import difflib
import io
import itertools
import os
import re
import time
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..dtypes import DType
from ..registry import OPS, ROLES, Check, OpSpec, OutputShape, Promotion, get_op
from ..socs import VERIFY_DEFAULT_SOCS, get_soc
from ..validation import broadcast_shapes

Shape = tuple[int, ...]

VALUE_RANGES = ("uniform", "normal", "special", "ties", "huge", "denormal")  # the matrix's value distributions
# Every distribution a case may name (data.py): the matrix's, and the fuzz search's signed zeros and scaled values.
VALUE_KINDS = VALUE_RANGES + ("zeros", "scaled")
# How an input array lies in memory (data.layout): C-contiguous; every other element of a wider last axis; negative
# strides on every axis; axes in reversed memory order (a transpose); a stride-0 broadcast view along its first axis
# of extent > 1. The values are the same for every layout but the broadcast view (constant along that axis).
LAYOUTS = ("c", "s", "n", "t", "b")


@dataclass(frozen=True)
class Case:
    op: str
    soc: str
    # The op's tensors in aclnn's order (gradOutput, self, target, then an optional input: None when the call leaves
    # it out); dtypes the same, then out ("" for an absent input).
    shapes: tuple[Shape | None, ...]
    dtypes: tuple[str, ...]
    reduction: str
    beta: float | None = None
    log_target: bool | None = None
    values: str = "uniform"
    seed: int = 0
    standard: str = "auto"      # experimental | mixed | auto (= experimental)
    reference: str = "auto"     # float64 | float32 | auto (= float32, the dtype-faithful golden; verify.run)
    threshold_scale: float = 1.0
    layouts: tuple[str, ...] = ()  # per tensor (LAYOUTS); () = every one "c"
    ub_budget: int = 0          # UB bytes the tiling may plan for (lossgrad.tiling.knobs); 0: the SoC's
    fold_tiles: int = 0         # KL's fold length (lossgrad.tiling.knobs); 0: the default
    tag: str = field(default="", compare=False)  # the shape pattern's name, for reports
    id: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.layouts:
            object.__setattr__(self, "layouts", ("c",) * len(self.shapes))
        if not self.id:
            attrs = "" if self.beta is None else f"/beta={self.beta:g}"
            attrs += "" if self.log_target is None else f"/log_target={int(self.log_target)}"
            extra = "" if set(self.layouts) == {"c"} else f"/layouts={''.join(self.layouts)}"
            extra += f"/ub={self.ub_budget}" if self.ub_budget else ""
            extra += f"/fold={self.fold_tiles}" if self.fold_tiles else ""
            ins = ".".join(d or "-" for d in self.dtypes[:-1])
            ident = (f"{self.op}/{self.soc}/{ins}>{self.dtypes[-1]}/{self.reduction}{attrs}/"
                     f"{self.tag or 'x'.join(map(str, self.shapes[1] or ()))}/{self.values}{extra}")
            object.__setattr__(self, "id", ident)

    @property
    def attrs(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.beta is not None:
            out["beta"] = self.beta
        if self.log_target is not None:
            out["log_target"] = self.log_target
        return out


# ---- shape patterns ------------------------------------------------------------------------------------------------

def _same(shape: Shape) -> tuple[Shape, Shape, Shape]:
    return shape, shape, shape


SHAPES_ALL: dict[str, tuple[Shape, Shape, Shape]] = {
    "n1": _same((1,)),
    "n31": _same((31,)),
    "n32": _same((32,)),
    "n33": _same((33,)),
    "n1023": _same((1023,)),
    "n4103": _same((4096 + 7,)),
    "n1e6+3": _same((10 ** 6 + 3,)),
    "cores_tail": _same((7, 13, 1031)),
    "rank8": _same((2, 3, 2, 5, 2, 3, 2, 7)),
    "d0": _same(()),
    "empty": ((0, 3), (0, 3), (0, 3)),
    "empty_bcast": ((1, 0, 4, 1), (4, 1), (1, 4, 2)),
    "grad_0d": ((), (513, 129), (513, 129)),
    "grad_1": ((1,), (300, 77), (300, 77)),
    "row": ((512, 1000), (512, 1000), (1000,)),
    "row_wide": ((16, 50000), (16, 50000), (50000,)),
    "col": ((1000, 1), (1000, 1000), (1000, 1000)),
    "col_odd": ((2049, 129), (2049, 1), (2049, 129)),
    "outer": ((), (300, 1), (1, 400)),
    "bcast8": ((2, 1, 3, 1, 5, 1, 7, 1), (1, 4, 1, 6, 1, 8, 1, 2), (2, 4, 3, 6, 5, 8, 7, 2)),
    "batch": ((), (8, 64, 691), (1, 64, 691)),
}

# KL (and KlDivTarget, with self and target traded): self broadcast against target, so contributions are summed
# back to self's shape.
SHAPES_KL_REDUCE: dict[str, tuple[Shape, Shape, Shape]] = {
    "kl_self_col": ((1,), (3, 1), (3, 5)),
    "kl_self_col_big": ((), (1000, 1), (1000, 1000)),
    "kl_self_row": ((), (1, 4096), (64, 4096)),
    "kl_self_scalar": ((), (1,), (100, 100)),
    "kl_self_mixed": ((4, 5, 6), (4, 1, 6), (1, 5, 6)),
}

QUICK_SHAPES = ("n33", "n4103", "n1e6+3", "grad_0d", "row", "col", "bcast8", "d0", "empty")
QUICK_KL_SHAPES = ("kl_self_col", "kl_self_mixed")


def _kl_ok(shapes: tuple[Shape, Shape, Shape]) -> bool:
    """gradOutput must broadcast into broadcast(self, target) for KL."""
    st = broadcast_shapes(shapes[1], shapes[2])
    return st is not None and broadcast_shapes(shapes[0], st) == st


def _self_absorbing(shapes: tuple[Shape, Shape, Shape], target_is_self: bool) -> tuple[Shape, Shape, Shape]:
    """A pattern for an op whose inputs broadcast into self (BCE): self takes the broadcast shape, so gradOutput's
    and target's broadcasts stay as the pattern has them (target takes self's shape too where aclnn requires it:
    Check.TARGET_IS_SELF, BCEWithLogits)."""
    full = broadcast_shapes(broadcast_shapes(shapes[0], shapes[1]) or (), shapes[2])
    assert full is not None, shapes
    return shapes[0], full, full if target_is_self else shapes[2]


# ---- dtype combinations ------------------------------------------------------------------------------------------

def dtype_combos(op: OpSpec, npu_arch: int, full: bool) -> list[tuple[str, str, str, str]]:
    """(grad, self, target, out) combinations the op accepts on the architecture."""
    supported = [d.label for d in op.supported_dtypes(npu_arch)]
    if not supported:  # aclnn refuses every dtype on the part (KlDivTarget on 310P/910): nothing to verify there
        return []
    uniform = [(d, d, d, d) for d in supported]
    out: list[tuple[str, str, str, str]] = list(uniform)
    has_bf16 = DType.BFLOAT16.label in supported
    f32, f16, bf16 = DType.FLOAT32.label, DType.FLOAT16.label, DType.BFLOAT16.label
    if op.promotion is Promotion.SAME_AS_SELF:
        mixed = [(f16, f16, f16, f32)] + ([(f32, f32, f32, f16)] if full else [])
    else:
        mixed = [(f16, f32, f16, f32)]
        if full:
            mixed += [(f32, f32, f32, f16), (f16, f16, f16, f32)]
            if has_bf16:
                mixed += [(bf16, f16, f32, f32), (f16, bf16, bf16, f32), (f32, f32, f32, bf16)]
    if Check.OUT_TARGET_DTYPE in op.checks:  # aclnn's out dtype is target's: the mix moves to target
        mixed = [(g, s, o, o) for g, s, _, o in mixed]
    out += [m for m in mixed if m not in out]
    return out


def _reductions(op: OpSpec, full: bool) -> list[str]:
    reds = [r.label for r in op.reductions]
    if full:
        return reds
    return [r for r in reds if r in ("none", "mean", "batchmean")]


def _attr_variants(op: OpSpec, full: bool) -> list[tuple[float | None, bool | None]]:
    names = {a.name for a in op.attrs}
    if "beta" in names:
        return [(1.0, None), (0.0, None)] + ([(0.5, None), (1e-30, None)] if full else [])
    if "log_target" in names:
        return [(None, False), (None, True)]
    return [(None, None)]


def default_cases(socs: Iterable[str] = VERIFY_DEFAULT_SOCS, full: bool = False,
                  ops: Iterable[str] | None = None) -> list[Case]:
    """The verification matrix: every op x supported dtype (incl. mixed) x reduction x attribute variant x shape
    pattern x value range, per SoC. The quick matrix (default) samples it; full=True runs all of it."""
    cases: list[Case] = []
    op_names = list(ops) if ops else list(OPS)
    for soc_name, name in itertools.product(socs, op_names):
        soc = get_soc(soc_name)
        op = OPS[name]
        shapes = dict(SHAPES_ALL) if full else {k: SHAPES_ALL[k] for k in QUICK_SHAPES}
        if op.reduced_onto:
            shapes.update(SHAPES_KL_REDUCE if full else {k: SHAPES_KL_REDUCE[k] for k in QUICK_KL_SHAPES})
            if op.reduced_onto == "target":  # the same sums, onto target: self and target trade places
                shapes = {k: (v[0], v[2], v[1]) for k, v in shapes.items()}
            shapes = {k: v for k, v in shapes.items() if _kl_ok(v)}
        elif op.output_shape is OutputShape.SELF_ABSORBING:
            same = Check.TARGET_IS_SELF in op.checks
            shapes = {k: _self_absorbing(v, same) for k, v in shapes.items()}
        for dts in dtype_combos(op, soc.arch.npu_arch, full):
            for red in _reductions(op, full):
                for beta, log_target in _attr_variants(op, full):
                    for tag, shp in shapes.items():
                        # 0.5-1M elements each: most of the quick run's time when run for every dtype mix,
                        # reduction and attribute (all of which n33, grad_0d and bcast8 still cover)
                        big = tag in ("n1e6+3", "row", "col", "row_wide", "kl_self_col_big")
                        ranges = ["uniform"]
                        if tag in ("n33", "n4103", "bcast8", "kl_self_col") and (full or tag == "n33"):
                            ranges = list(VALUE_RANGES) if full else ["uniform", "special", "ties", "huge"]
                        if big and not full and (dts[0] != dts[-1] or red != "none" or beta == 0.0 or log_target):
                            continue  # the quick matrix runs its big cases once per op, dtype and SoC
                        for values in ranges:
                            for extra, extra_dts, suffix in _optional_variants(op, shp, dts):
                                seed = len(cases)
                                cases.append(Case(op=name, soc=soc.name, shapes=(*shp, *extra),
                                                  dtypes=(*dts[:-1], *extra_dts, dts[-1]), reduction=red, beta=beta,
                                                  log_target=log_target, values=values, seed=seed, tag=tag + suffix))
    return cases


def _optional_variants(op: OpSpec, shapes: Sequence[Shape], dts: Sequence[str]
                       ) -> list[tuple[tuple[Shape | None, ...], tuple[str, ...], str]]:
    """An op with optional inputs runs each pattern without them and with them (self's shape and dtype, the input an
    op like BCE broadcasts into): (extra shapes, extra dtypes, tag suffix). Other ops: one variant, nothing extra."""
    optional = op.inputs[3:]
    if not optional:
        return [((), (), "")]
    return [((None,) * len(optional), ("",) * len(optional), "/absent"),
            ((shapes[1],) * len(optional), (dts[1],) * len(optional), "/present")]


# ---- CSV case tables -------------------------------------------------------------------------------------------------

# An optional input's shape has its own column after these (opspec.ROLES: weight_shape, pos_weight_shape); empty or
# missing: the call leaves the input out.
OPTIONAL_SHAPE_COLUMNS = tuple(f"{r.name}_shape" for r in ROLES if not r.required)
CSV_COLUMNS = ("id", "op", "soc", "grad_shape", "self_shape", "target_shape", "dtypes", "reduction", "beta",
               "log_target", "values", "seed", "standard", "reference", "threshold_scale", "layouts", "ub_budget",
               "fold_tiles", *OPTIONAL_SHAPE_COLUMNS)


def _shape_text(s: Shape) -> str:
    return "(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


INT64_MAX = 2 ** 63 - 1
_INTEGER = re.compile(r"[+-]?[0-9]+")  # ASCII digits only: int() would also take "²"-like digits and "1_000"


def parse_int(text: str) -> int:
    """A decimal integer as a C int64_t parser reads one (optional sign, ASCII digits); ValueError otherwise."""
    t = text.strip()
    if not _INTEGER.fullmatch(t):
        raise ValueError(f"{text!r} is not an integer")
    return int(t)


_BRACKETS = {"(": ")", "[": "]"}


@lru_cache(maxsize=4096)  # a large case table repeats a few shapes thousands of times
def parse_shape(text: str) -> Shape:
    """"(2, 3)", "2,3", "[2,3]", "(4,)" -> the dims; "()", "[]" or "" -> (). One pair of matching brackets at
    most, dimensions separated by single commas (one trailing comma allowed, as in Python's "(4,)"): "(4,,5)", ",",
    "((4,4))", "(4,5))" and "[4,5)" are refused, never read as another shape. Dimensions are non-negative integers
    whose product, the element count, fits aclnn's int64_t (so does every dimension)."""
    def bad(why: str) -> ValueError:
        return ValueError(f"shape {text!r}: {why}; expected comma-separated integers such as (2,3), (4,) or ()")

    t = text.strip()
    if t[:1] in _BRACKETS:
        if t[-1:] != _BRACKETS[t[0]] or len(t) < 2:
            raise bad(f"{t[0]!r} is not closed by {_BRACKETS[t[0]]!r}")
        t = t[1:-1].strip()
    elif t[-1:] in _BRACKETS.values():
        raise bad(f"{t[-1]!r} closes no bracket")
    if not t:
        return ()
    parts = [p.strip() for p in t.split(",")]
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()  # "(4,)"
    if any(p == "" for p in parts):
        raise bad("an empty dimension")
    try:
        dims = tuple(parse_int(p) for p in parts)
    except ValueError:
        raise bad("a dimension is not an integer") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {text!r}: dimensions must be >= 0")
    numel = 1
    for d in dims:
        numel *= d
    if numel > INT64_MAX or any(d > INT64_MAX for d in dims):
        raise ValueError(f"shape {text!r}: more elements than aclnn's int64_t sizes can describe")
    return dims


_FLOAT = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE)


def parse_float(text: str, what: str) -> float:
    """A decimal number as C's strtod reads one (ASCII digits, an optional exponent, inf or nan); ValueError
    otherwise. Python's float() would also take "0_5" (as 5.0) and non-ASCII digits."""
    t = text.strip()
    if not _FLOAT.fullmatch(t):
        raise ValueError(f"{what} {text!r}: not a number (expected e.g. 0.5, 1e-3 or inf)")
    return float(t)


def printable(text: str) -> str:
    """`text` with control and format characters escaped (\x1b, \u202e, ...): an id from a case table is shown on a
    terminal, where such characters could move the cursor or recolour the line (a FAIL displayed as a PASS)."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") or ch == "\\":
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


def case_reduction(case: "Case") -> "str | int":
    """The case's reduction as the API takes it: a name, or aclnn's integer when the table gives one ("2", KL's
    "-1"), which validation then accepts or refuses exactly as aclnn does."""
    try:
        return parse_int(case.reduction)
    except ValueError:
        return case.reduction


def csv_text(cases: Iterable[Case]) -> str:
    """The cases as a CSV case table (read_csv reads it back)."""
    fh = io.StringIO()
    w = csv.writer(fh)
    w.writerow(CSV_COLUMNS)
    write_csv_rows(w, cases)
    return fh.getvalue()


def write_csv(cases: Iterable[Case], path: str) -> None:
    """The table, written completely or not at all (codegen.write_atomic: a full disk leaves no partial file)."""
    from ..codegen import write_atomic

    write_atomic(Path(path), csv_text(cases))


def write_csv_rows(writer: "csv._writer", cases: Iterable[Case]) -> None:
    """The cases as rows of CSV_COLUMNS."""
    for c in cases:
        by_role = {i.role: s for i, s in zip(get_op(c.op).inputs, c.shapes)}
        optional = ["" if by_role.get(col.removesuffix("_shape")) is None else
                    _shape_text(by_role[col.removesuffix("_shape")]) for col in OPTIONAL_SHAPE_COLUMNS]  # type: ignore
        writer.writerow([c.id, c.op, c.soc, *(_shape_text(s) for s in c.shapes[:3]), ";".join(c.dtypes),
                         c.reduction, "" if c.beta is None else repr(c.beta),
                         "" if c.log_target is None else int(c.log_target), c.values, c.seed, c.standard,
                         c.reference, c.threshold_scale, "".join(c.layouts), c.ub_budget or "", c.fold_tiles or "",
                         *optional])


def parse_dtypes(text: str, roles: Sequence[str] = ("grad", "self", "target")) -> tuple[str, ...]:
    """"grad;self;target;out" (an op with an optional input: one more before out, empty when it is absent), or one
    dtype for all. `roles`: the op's tensors in aclnn's order."""
    dts = tuple(x.strip() for x in text.split(";"))
    if len(dts) == 1:
        dts = dts * (len(roles) + 1)
    if len(dts) != len(roles) + 1:
        raise ValueError(f"dtypes {text!r}: give {';'.join(roles)};out (or one dtype for all)")
    return dts


class CaseTableError(ValueError):
    """A case table that cannot be run: the message names the file and row."""


STANDARDS = ("auto", "experimental", "mixed")
REFERENCES = ("auto", "float32", "float64")
THRESHOLD_SCALE_RANGE = (1e-6, 1e3)  # beyond these, a case passes or fails regardless of the kernel
REQUIRED_COLUMNS = ("op", "soc", "grad_shape", "self_shape", "target_shape", "dtypes", "reduction")


def _choice(row: dict[str, str], key: str, default: str, allowed: Iterable[str]) -> str:
    value = (row.get(key) or "").strip() or default
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(f"{key} {value!r}: expected one of {', '.join(allowed)}")
    return value


def _case_from_row(row: dict[str, str]) -> Case:
    try:
        op = get_op(row["op"])
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    shapes: list[Shape | None] = []
    for i in op.inputs:  # aclnn's order; an optional input's empty column: absent
        text = (row.get(f"{i.role}_shape") or "").strip()
        shapes.append(None if i.optional and not text else parse_shape(row[f"{i.role}_shape"]))
    dts = tuple("" if sh is None else d for d, sh in zip(parse_dtypes(row["dtypes"], [i.role for i in op.inputs]),
                                                       [*shapes, ()]))
    names = {a.name for a in op.attrs}
    beta_text = (row.get("beta") or "").strip()
    if beta_text and "beta" not in names:
        raise ValueError(f"beta: {op.name} has no beta")
    beta = parse_float(beta_text, "beta") if beta_text else (1.0 if "beta" in names else None)
    lt = (row.get("log_target") or "").strip()
    if lt and "log_target" not in names:
        raise ValueError(f"log_target: {op.name} has no log_target")
    if lt not in ("", "0", "1"):
        raise ValueError(f"log_target {lt!r}: expected 0 or 1")
    log_target = (lt == "1") if lt else (False if "log_target" in names else None)
    scale_text = (row.get("threshold_scale") or "").strip()
    scale = parse_float(scale_text, "threshold_scale") if scale_text else 1.0
    lo, hi = THRESHOLD_SCALE_RANGE
    if not lo <= scale <= hi:  # also refuses NaN
        raise ValueError(f"threshold_scale {scale!r}: expected a value in [{lo:g}, {hi:g}]")
    seed_text = (row.get("seed") or "").strip()
    try:
        seed = parse_int(seed_text) if seed_text else 0
    except ValueError:
        raise ValueError(f"seed {seed_text!r}: expected a non-negative integer") from None
    if seed < 0:
        raise ValueError(f"seed {seed}: expected a non-negative integer")
    layouts = (row.get("layouts") or "").strip() or "c" * len(op.inputs)
    if len(layouts) != len(op.inputs) or any(ch not in LAYOUTS for ch in layouts):
        raise ValueError(f"layouts {layouts!r}: expected {len(op.inputs)} of {''.join(LAYOUTS)} (one per tensor, in "
                         "aclnn's order), e.g. ccn")
    budget = parse_int((row.get("ub_budget") or "").strip() or "0")
    if not 0 <= budget < 1 << 32:
        raise ValueError(f"ub_budget {budget}: expected a number of bytes below 2^32 (0: the SoC's)")
    fold = parse_int((row.get("fold_tiles") or "").strip() or "0")
    if not 0 <= fold < 1 << 32:
        raise ValueError(f"fold_tiles {fold}: expected a tile count below 2^32 (0: the default)")
    case = Case(op=op.name, soc=get_soc(row["soc"].strip()).name,
                shapes=tuple(shapes),
                dtypes=dts, reduction=row["reduction"].strip() or "mean", beta=beta, log_target=log_target,
                values=_choice(row, "values", "uniform", VALUE_KINDS), seed=seed,
                standard=_choice(row, "standard", "auto", STANDARDS),
                reference=_choice(row, "reference", "auto", REFERENCES),
                threshold_scale=scale, layouts=tuple(layouts), ub_budget=budget, fold_tiles=fold,
                id=(row.get("id") or "").strip())
    _check_call(case)
    return case


def _check_call(case: Case) -> None:
    """The row must describe a valid call (validation's 161002 otherwise), checked on shape-only arrays. Many rows of
    a large table describe the same call (other values or seeds): each call is validated once per process."""
    key = (case.op, case.soc, case.shapes, case.dtypes, case.reduction, case.beta, case.log_target)
    if key in _valid_calls:
        return
    import numpy as np

    from ..dtypes import parse
    from ..validation import validate

    arrays = [None if shape is None else np.broadcast_to(np.zeros((), parse(d).np_dtype), shape)
              for d, shape in zip(case.dtypes, case.shapes)]
    validate(case.op, *arrays, case_reduction(case), case.attrs, out_dtype=case.dtypes[-1], soc=case.soc)
    _valid_calls.add(key)


_valid_calls: set[tuple] = set()


MAX_TABLE_BYTES = 64 << 20  # a case table is text written by people or by --export-cases (the full matrix: ~5 MB)
MAX_PROBLEMS_SHOWN = 5


TableProgress = Callable[[int, int], None]  # (rows checked, rows in the table)
PROGRESS_EVERY_S = 1.0


def _header(fieldnames: Sequence[str] | None, path: str) -> list[str]:
    """The header's column names (spaces around them dropped), refusing unknown and repeated ones: a misspelled
    optional column ("betta") would otherwise be ignored and its values silently replaced by the default."""
    names = [(n or "").strip() for n in fieldnames or ()]
    problems = []
    for n in dict.fromkeys(names):
        if n not in CSV_COLUMNS:
            close = difflib.get_close_matches(n, CSV_COLUMNS, n=1)
            problems.append(f"unknown column {printable(n)!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        elif names.count(n) > 1:
            problems.append(f"column {n!r} appears {names.count(n)} times")
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        problems.append(f"the header lacks column(s) {', '.join(missing)}")
    if problems:
        raise CaseTableError(f"{path}:1: {'; '.join(problems)} (columns: {','.join(CSV_COLUMNS)})")
    return names


def read_csv(path: str, progress: TableProgress | None = None) -> list[Case]:
    """Rows of a case table; empty cells take the defaults (beta 1.0 for SmoothL1, log_target 0 for KL, ...).

    The table is checked once, completely, before any case runs: its header (every column known, none twice; spaces
    after the commas are fine), every row's columns, values, standard, reference, threshold scale, id (unique) and
    the call it describes (validation on shape-only arrays, with the reduction as run_case passes it: a name, or
    aclnn's integer where aclnn accepts one). Problems raise one CaseTableError naming the file, the first rows at
    fault and how many rows are. A file that is not a UTF-8 CSV text table (binary, a NUL byte: its line is named,
    cells beyond the csv module's limit, larger than MAX_TABLE_BYTES) is a CaseTableError too. `progress(rows
    checked, rows)` is called about once a second while a large table is checked."""
    try:
        size = os.path.getsize(path)
        if size > MAX_TABLE_BYTES:
            raise CaseTableError(f"{path}: {size} bytes; a case table has at most {MAX_TABLE_BYTES} "
                                 f"(split it, or select with --op/--soc/--limit)")
        with open(path, "rb") as fb:
            raw = fb.read()
        nul = raw.find(b"\0")
        if nul >= 0:
            line = raw.count(b"\n", 0, nul) + 1
            raise CaseTableError(f"{path}:{line}: a NUL byte (at byte {nul}); not a text file: expected a CSV case "
                                 "table")
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise CaseTableError(f"{path}:{line}: not UTF-8 text (byte {exc.start}); expected a CSV case table") from None
    out: list[Case] = []
    seen: dict[str, int] = {}
    problems: list[str] = []
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
    rows = max(0, text.count("\n") - 1)
    last_report = time.monotonic()
    try:
        names = _header(next(reader, None), path)
        for n, cells in enumerate(reader, start=2):
            if progress is not None and time.monotonic() - last_report >= PROGRESS_EVERY_S:
                progress(n - 2, rows)
                last_report = time.monotonic()
            if not cells:  # a blank line
                continue
            if len(cells) != len(names):
                problems.append(f"{path}:{reader.line_num}: the row has {len(cells)} cells; the header has "
                                f"{len(names)}")
                continue
            row = dict(zip(names, cells))
            try:
                case = _case_from_row(row)
            except (KeyError, ValueError, OverflowError) as exc:  # LossGradError is a ValueError
                problems.append(f"{path}:{reader.line_num}: {printable(str(exc))}")
                continue
            if case.id in seen:
                problems.append(f"{path}:{reader.line_num}: duplicate id {printable(case.id)!r} (line {seen[case.id]} "
                                "has it)")
                continue
            seen[case.id] = reader.line_num
            out.append(case)
    except csv.Error as exc:  # e.g. a cell beyond csv.field_size_limit()
        raise CaseTableError(f"{path}:{reader.line_num}: not a readable CSV table ({exc})") from None
    if progress is not None and rows >= 1000:
        progress(len(out) + len(problems), len(out) + len(problems))
    if problems:
        more = len(problems) - MAX_PROBLEMS_SHOWN
        raise CaseTableError("; ".join(problems[:MAX_PROBLEMS_SHOWN])
                             + (f"; and {more} more row(s) with problems" if more > 0 else "")
                             + f" ({len(problems)} of {len(problems) + len(out)} rows invalid)")
    return out
