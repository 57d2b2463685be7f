"""Verification cases: the default matrix and a CSV case-table format users can extend.

A case names everything needed to reproduce one run: op, SoC, the three input shapes, input and output dtypes,
reduction, attributes, the value distribution and its seed, and how to judge it (precision standard, reference mode,
per-case threshold scale) - like the rows of ops-nn's case tables.
"""
from __future__ import annotations

import csv
import itertools
from dataclasses import dataclass, field
from typing import Iterable

from ..dtypes import DType
from ..registry import OPS, OpSpec, OutputShape, Promotion
from ..socs import VERIFY_DEFAULT_SOCS, get_soc
from ..validation import broadcast_shapes

Shape = tuple[int, ...]

VALUE_RANGES = ("uniform", "normal", "special", "ties", "huge", "denormal")


@dataclass(frozen=True)
class Case:
    op: str
    soc: str
    shapes: tuple[Shape, Shape, Shape]            # grad, self, target
    dtypes: tuple[str, str, str, str]             # grad, self, target, out
    reduction: str
    beta: float | None = None
    log_target: bool | None = None
    values: str = "uniform"
    seed: int = 0
    standard: str = "auto"      # experimental | mixed | auto (= experimental)
    reference: str = "auto"     # float64 | float32 | auto (= float32, the dtype-faithful golden; verify.run)
    threshold_scale: float = 1.0
    tag: str = field(default="", compare=False)  # the shape pattern's name, for reports
    id: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.id:
            attrs = "" if self.beta is None else f"/beta={self.beta:g}"
            attrs += "" if self.log_target is None else f"/log_target={int(self.log_target)}"
            ident = (f"{self.op}/{self.soc}/{'.'.join(self.dtypes[:3])}>{self.dtypes[3]}/{self.reduction}{attrs}/"
                     f"{self.tag or 'x'.join(map(str, self.shapes[1]))}/{self.values}")
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

# KL only: self broadcast against target, so contributions are summed back to self's shape.
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


# ---- dtype combinations ------------------------------------------------------------------------------------------

def dtype_combos(op: OpSpec, npu_arch: int, full: bool) -> list[tuple[str, str, str, str]]:
    """(grad, self, target, out) combinations the op accepts on the architecture."""
    supported = [d.label for d in op.supported_dtypes(npu_arch)]
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
        if op.output_shape is OutputShape.SELF:
            shapes.update(SHAPES_KL_REDUCE if full else {k: SHAPES_KL_REDUCE[k] for k in QUICK_KL_SHAPES})
            shapes = {k: v for k, v in shapes.items() if _kl_ok(v)}
        for dts in dtype_combos(op, soc.arch.npu_arch, full):
            for red in _reductions(op, full):
                for beta, log_target in _attr_variants(op, full):
                    for tag, shp in shapes.items():
                        big = tag in ("n1e6+3", "row_wide", "kl_self_col_big")
                        ranges = ["uniform"]
                        if tag in ("n33", "n4103", "bcast8", "kl_self_col") and (full or tag == "n33"):
                            ranges = list(VALUE_RANGES) if full else ["uniform", "special", "ties", "huge"]
                        if big and not full and (dts[0] != dts[3] or red != "none" or beta == 0.0 or log_target):
                            continue  # the quick matrix runs its 10^6-element cases once per op, dtype and SoC
                        for values in ranges:
                            seed = len(cases)
                            cases.append(Case(op=name, soc=soc.name, shapes=shp, dtypes=dts, reduction=red,
                                              beta=beta, log_target=log_target, values=values, seed=seed, tag=tag))
    return cases


# ---- CSV case tables -------------------------------------------------------------------------------------------------

CSV_COLUMNS = ("id", "op", "soc", "grad_shape", "self_shape", "target_shape", "dtypes", "reduction", "beta",
               "log_target", "values", "seed", "standard", "reference", "threshold_scale")


def _shape_text(s: Shape) -> str:
    return "(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def parse_shape(text: str) -> Shape:
    """"(2, 3)", "2,3", "[2,3]" -> (2, 3); "()" or "" -> ()."""
    t = text.strip().strip("()[] ")
    return tuple(int(x) for x in t.split(",") if x.strip()) if t else ()


def write_csv(cases: Iterable[Case], path: str) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for c in cases:
            w.writerow([c.id, c.op, c.soc, *(_shape_text(s) for s in c.shapes), ";".join(c.dtypes), c.reduction,
                        "" if c.beta is None else repr(c.beta), "" if c.log_target is None else int(c.log_target),
                        c.values, c.seed, c.standard, c.reference, c.threshold_scale])


def parse_dtypes(text: str) -> tuple[str, str, str, str]:
    """"grad;self;target;out", or one dtype for all four."""
    dts = tuple(x.strip() for x in text.split(";"))
    if len(dts) == 1:
        dts = dts * 4
    if len(dts) != 4:
        raise ValueError(f"dtypes {text!r}: give grad;self;target;out (or one dtype for all)")
    return dts  # type: ignore[return-value]


def read_csv(path: str) -> list[Case]:
    """Rows of a case table; empty cells take the defaults (beta 1.0 for SmoothL1, log_target 0 for KL, ...)."""
    out: list[Case] = []
    with open(path, newline="") as fh:
        for n, row in enumerate(csv.DictReader(fh), start=2):
            try:
                op = OPS[row["op"].strip()]
                dts = parse_dtypes(row["dtypes"])
                names = {a.name for a in op.attrs}
                beta = float(row["beta"]) if row.get("beta", "").strip() else (1.0 if "beta" in names else None)
                lt = row.get("log_target", "").strip()
                log_target = bool(int(lt)) if lt else (False if "log_target" in names else None)
                case = Case(op=op.name, soc=get_soc(row["soc"].strip()).name,
                            shapes=tuple(parse_shape(row[k]) for k in ("grad_shape", "self_shape", "target_shape")),
                            dtypes=dts, reduction=row["reduction"].strip() or "mean", beta=beta, log_target=log_target,
                            values=(row.get("values") or "uniform").strip(), seed=int(row.get("seed") or 0),
                            standard=(row.get("standard") or "auto").strip(),
                            reference=(row.get("reference") or "auto").strip(),
                            threshold_scale=float(row.get("threshold_scale") or 1.0),
                            id=(row.get("id") or "").strip())
            except (KeyError, ValueError) as exc:
                raise ValueError(f"{path}:{n}: {exc}") from exc
            out.append(case)
    return out
