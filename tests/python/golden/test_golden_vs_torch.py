"""The float64 golden model against PyTorch CPU autograd (a test-only oracle) on seeded generated cases.

The oracle (each op folder's test_facts.ORACLE) upcasts the inputs to float64, runs torch's forward loss,
backpropagates grad_output, and rounds once (half to even) to the output dtype with the test's own
rounding (`golden_oracle.rne_round`). Where aclnn and PyTorch define the op differently, the oracle is built to
aclnn's definition explicitly (no tolerance is loosened for it); see `golden_oracle.py` and docs/semantics.md:

(i)   MSE and SmoothL1 mean divide by numel(self) as passed; torch divides by numel of the broadcast (expanded)
      loss. The oracle rescales torch's mean gradient by numel(broadcast) / numel(self).
(ii)  L1 mean divides by numel of the broadcast output; the oracle expands self and target to broadcast(grad, self,
      target) before the torch call (as CANN's own golden does), so torch's mean divides by the same count.
      aclnn's output is per element of that broadcast (no sum back to self's shape) for L1/MSE/SmoothL1, so the
      oracle differentiates with respect to the expanded self.
(iii) SmoothL1 beta = 0: aclnn's function is L1's sign (0 at x == 0); torch's smooth_l1 kernel gives -1 there, so
      the oracle uses torch's L1 gradient (F.smooth_l1_loss does the same for beta == 0).
(iv)  KL: the output has self's shape and the contributions are summed over the broadcast axes (autograd does this
      with a self-shaped leaf); mean divides by numel(broadcast(self, target)) as torch's kl_div 'mean' does;
      batchmean divides by dim 0 of broadcast(self, target) in aclnn but by self.size(0) in torch, so the oracle
      takes torch's 'sum' and divides by aclnn's divisor.
(v)   sign(NaN): aclnn's sign is two comparisons, so a NaN self - target gives 0. The oracle sets self = target = 0
      at those positions instead of relying on torch's sgn(NaN) (which has changed between versions).
Also: aclnn multiplies a non-scalar gradOutput elementwise even for mean/sum; torch needs a scalar there, so for
such cases the oracle reduces the grad-weighted unreduced loss with torch's own mean/sum.
"""
from __future__ import annotations

import math
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is the test-only oracle for the golden model (pip install torch)")

sys.path.insert(0, str(Path(__file__).parent))
from golden_cases import OPS, Case, generate  # noqa: E402
from golden_oracle import rne_round, torch_reference  # noqa: E402

import lossgrad.golden as golden  # noqa: E402
from lossgrad.dtypes import parse as parse_dtype  # noqa: E402
from lossgrad.registry import OutputShape, get_op  # noqa: E402
from lossgrad.precision import THRESHOLDS, compare  # noqa: E402
from lossgrad.validation import validate  # noqa: E402

CASES_PER_OP = 550
CHUNKS = 8
# float64 golden vs float64 torch: only exact ties round apart (measured: >= 0.998 per chunk)
MIN_EXACT_FRACTION = 0.995


def _promote(a: str, b: str) -> str:
    """aclnn's promotion for the dtypes the generator uses (deduction_relationship.md), restated for the test."""
    if a == b:
        return a
    if "int32" in (a, b):
        return b if a == "int32" else a
    return "float32"  # f16+bf16 and anything with f32


def expected_out(case: Case) -> tuple[tuple[int, ...], str]:
    g, s, t = (str(x.dtype) for x in (case.grad, case.self_, case.target))
    spec = get_op(case.op)
    if spec.output_shape is OutputShape.SELF:
        return case.self_.shape, case.out_dtype or s
    if spec.output_shape is OutputShape.TARGET:
        return case.target.shape, case.out_dtype or t
    present = [x for x in case.tensors if x is not None]
    shape = tuple(np.broadcast_shapes(*(x.shape for x in present)))
    default = _promote(_promote(g, s), t)
    for x in present[3:]:
        default = _promote(default, str(x.dtype))
    default = {"self": s, "target": t}.get(spec.default_out_dtype, default)
    return shape, case.out_dtype or default


@dataclass
class Tally:
    cases: int = 0
    elements: int = 0
    exact: int = 0
    worst_mere: float = 0.0
    worst_mare: float = 0.0
    failures: list[str] = field(default_factory=list)


def _same_specials(a: np.ndarray, b: np.ndarray) -> bool:
    return (np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(np.isposinf(a), np.isposinf(b))
            and np.array_equal(np.isneginf(a), np.isneginf(b)))


def _max_ulp(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in units in the last place between two arrays of one float dtype (NaN/Inf excluded)."""
    ints = {2: np.int16, 4: np.int32}[a.dtype.itemsize]
    finite = np.isfinite(a.astype(np.float64)) & np.isfinite(b.astype(np.float64))
    if not finite.any():
        return 0
    x, y = (v[finite].view(ints).astype(np.int64) for v in (np.ascontiguousarray(a), np.ascontiguousarray(b)))
    bias = 1 << (8 * a.dtype.itemsize - 1)
    x, y = (np.where(v < 0, -bias - v, v) for v in (x, y))  # sign-magnitude -> monotone integers
    return int(np.abs(x - y).max())


def check_case(case: Case, tallies: dict[tuple[str, str], Tally]) -> None:
    shape, out_label = expected_out(case)
    tally = tallies[(case.op, out_label)]
    tally.cases += 1
    fn = getattr(golden, case.op)
    got = fn(*case.tensors, case.reduction, **case.golden_kwargs())
    if got.shape != shape or str(got.dtype) != out_label:
        tally.failures.append(f"{case.ident}: got {got.shape} {got.dtype}, expected {shape} {out_label}")
        return
    ref = rne_round(torch_reference(case.op, *case.tensors, case.reduction_label, **case.attrs), out_label)
    a, r = got.astype(np.float64), ref.astype(np.float64)
    result = compare(a, r, out_label)
    tally.elements += a.size
    tally.exact += int(np.count_nonzero((a == r) | (np.isnan(a) & np.isnan(r))))
    tally.worst_mere = max(tally.worst_mere, result.mere)
    tally.worst_mare = max(tally.worst_mare, result.mare)
    if not result.passed or not _same_specials(a, r):
        tally.failures.append(f"{case.ident}: {result.describe()}\n  golden={a.ravel()[:8]}\n  torch ={r.ravel()[:8]}")
    elif (ulps := _max_ulp(got, ref)) > 1:  # both exact math rounded once: only a tie can round apart, by one ulp
        tally.failures.append(f"{case.ident}: {ulps} ulp apart\n  golden={a.ravel()[:8]}\n  torch ={r.ravel()[:8]}")
    if case.profile in ("normal", "grid") and a.size:
        # the dtype-faithful float32 mode must meet the same standard where nothing overflows float32. It rounds
        # what aclnn rounds: the result of aclnn's kernel (KL: each term, then their sum) is in aclnn's kernel dtype
        # before the Cast to out's dtype, so it is judged by the coarser of that dtype's and out's thresholds (torch
        # here is exact math), and KL with float16 terms that are summed (self broadcast) by the mixed-tolerance
        # standard: a cancelling sum of float16-rounded terms is off by float16 ulps of the terms, which no relative
        # bound on the small sum can hold.
        faithful = fn(*case.tensors, case.reduction, compute="float32", **case.golden_kwargs())
        kw = case.golden_kwargs()
        out_dtype = kw.pop("out_dtype")
        call = validate(case.op, *case.tensors, case.reduction, kw, out_dtype=out_dtype)
        kernel = golden.aclnn_kernel_dtype(call).label
        judge = max(out_label, kernel, key=lambda d: THRESHOLDS[parse_dtype(d)])
        standard = "experimental"
        if get_op(case.op).output_shape is OutputShape.SELF and kernel == "float16" and \
                case.self_.shape != np.broadcast_shapes(case.self_.shape, case.target.shape):
            standard = "mixed"
        if kernel == "float16" and a.dtype != np.float16 and np.any(beyond := np.abs(r) > 65504.0):
            # aclnn's kernel result is float16 before the Cast to out: exact values beyond float16's range are Inf
            # there (BCE's clamped 1e12-scale quotients), the kernel's overflow, not a rounding to judge
            assert np.all(np.isinf(faithful[beyond])), case.ident
            faithful, r = faithful[~beyond], r[~beyond]
        f32 = compare(faithful, r, judge, standard)
        if not f32.passed and kernel == "float16":
            # a result below float16's smallest normal (2^-14; soft margin's exp(-self * target) reaches there in the
            # normal profile) is rounded to a spacing of 2^-24 in the kernel, so no relative bound holds for it: the
            # normal results are judged as above and the subnormal ones by the absolute part of the mixed standard.
            normal = ~(np.abs(r) < 2.0 ** -14)
            f32 = compare(faithful[normal], r[normal], judge, standard)
            if f32.passed:
                f32 = compare(faithful, r, judge, "mixed")
        if not f32.passed:
            tally.failures.append(f"{case.ident} [compute=float32]: {f32.describe()}")


def run_chunk(op: str, chunk: int) -> dict[tuple[str, str], Tally]:
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    for case in generate(op, CASES_PER_OP)[chunk::CHUNKS]:
        check_case(case, tallies)
    return tallies


@pytest.mark.parametrize("chunk", range(CHUNKS))
@pytest.mark.parametrize("op", OPS)
def test_golden_matches_torch(op: str, chunk: int) -> None:
    tallies = run_chunk(op, chunk)
    failures = [f for t in tallies.values() for f in t.failures]
    assert not failures, f"{len(failures)} failing cases:\n" + "\n".join(failures[:10])
    elements = sum(t.elements for t in tallies.values())
    exact = sum(t.exact for t in tallies.values())
    assert elements > 0
    assert exact / elements >= MIN_EXACT_FRACTION, f"only {exact}/{elements} elements bit-identical after rounding"


def test_generated_cases_cover_the_matrix() -> None:
    cases = [c for op in OPS for c in generate(op, CASES_PER_OP)]
    assert len(cases) >= 2000
    def seen(pred) -> int:  # noqa: E306
        return sum(1 for c in cases if pred(c))
    for op in OPS:
        reductions = {c.reduction_label for c in cases if c.op == op}
        assert reductions == {r.name.lower() for r in get_op(op).reductions}, op
    for label in ("float32", "float16", "bfloat16"):
        assert seen(lambda c: str(c.self_.dtype) == label) > 100
        assert seen(lambda c: c.out_dtype == label) > 100
    assert seen(lambda c: len({str(c.grad.dtype), str(c.self_.dtype), str(c.target.dtype)}) > 1) > 100
    assert seen(lambda c: c.grad.ndim == 0 and c.self_.ndim > 0) > 50
    assert seen(lambda c: c.grad.shape == (1,)) > 50
    assert seen(lambda c: c.grad.ndim == c.self_.ndim == c.target.ndim == 0) > 20
    assert seen(lambda c: max(c.grad.ndim, c.self_.ndim, c.target.ndim) == 8) > 50
    assert seen(lambda c: min(c.grad.size, c.self_.size, c.target.size) == 0) > 50
    self_shaped = {op for op in OPS if get_op(op).output_shape is OutputShape.SELF}
    assert all(seen(lambda c: c.op == op and c.self_.size and not c.target.size) > 5 for op in self_shaped)
    assert seen(lambda c: c.self_.shape != np.broadcast_shapes(c.self_.shape, c.target.shape)) > 200
    assert seen(lambda c: any(not a.flags.c_contiguous for a in (c.grad, c.self_, c.target))) > 300
    assert seen(lambda c: any(0 in a.strides and a.size > 1 for a in (c.grad, c.self_, c.target))) > 50
    for profile in ("special", "huge", "tiny", "grid"):
        assert seen(lambda c: c.profile == profile) > 150
    for op in OPS:
        for a in get_op(op).attrs:
            values = (True, False) if a.kernel_type == "Bool" else (1.0, 0.5, 2.0 ** -20, 0.0)
            for v in values:
                assert seen(lambda c: c.op == op and c.attrs[a.name] == v) > (150 if a.kernel_type == "Bool" else 50)


def summary() -> str:
    """Per op and output dtype: cases, worst MERE/MARE, bit-identical fraction (run this file as a script)."""
    totals: dict[tuple[str, str], Tally] = defaultdict(Tally)
    for op in OPS:
        for chunk in range(CHUNKS):
            for key, t in run_chunk(op, chunk).items():
                acc = totals[key]
                acc.cases += t.cases
                acc.elements += t.elements
                acc.exact += t.exact
                acc.worst_mere = max(acc.worst_mere, t.worst_mere)
                acc.worst_mare = max(acc.worst_mare, t.worst_mare)
                acc.failures += t.failures
    lines = [f"{'op':26} {'out':9} {'cases':>5} {'elements':>8} {'identical':>9} {'worst MERE':>11} {'worst MARE':>11}"]
    for (op, label), t in sorted(totals.items()):
        ident = t.exact / t.elements if t.elements else math.nan
        lines.append(f"{op:26} {label:9} {t.cases:5d} {t.elements:8d} {ident:9.5%} {t.worst_mere:11.3g} "
                     f"{t.worst_mare:11.3g}" + (f"  FAILURES {len(t.failures)}" if t.failures else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
