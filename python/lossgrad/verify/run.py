"""Run verification cases on a backend and judge them against the golden model by CANN's precision standard."""
from __future__ import annotations

import concurrent.futures as cf
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from ..golden import compute_call
from ..precision import Comparison, compare
from ..runners import run
from ..validation import validate
from .cases import Case
from .data import make_inputs


@dataclass(frozen=True)
class CaseResult:
    case: Case
    passed: bool
    comparison: Comparison | None     # against the judging reference
    comparison64: Comparison | None   # against the float64 golden, for information
    error: str | None
    seconds: float
    reference: str
    standard: str


def reference_mode(case: Case) -> str:
    """The judging reference. By default the dtype-faithful golden ("float32"): inputs upcast to float32 and evaluated
    in float32 in aclnn's operation order, then rounded once - how CANN's own golden scripts verify these ops
    (ops_semantics §1.7, §2.8, §3.7, §4.7). It makes float32 intermediate overflow and the double rounding of
    float16/bfloat16 results part of the expectation; the float64 golden's metrics are reported beside it."""
    return "float32" if case.reference == "auto" else case.reference


def run_case(case: Case, backend: str = "twin") -> CaseResult:
    t0 = time.perf_counter()
    ref = reference_mode(case)
    standard = "experimental" if case.standard == "auto" else case.standard
    try:
        g, s, t = make_inputs(case)
        call = validate(case.op, g, s, t, case.reduction, case.attrs, out_dtype=case.dtypes[3], soc=case.soc)
        expected = compute_call(call, ref)
        actual = run(call, backend)
        if actual.shape != expected.shape or actual.dtype != expected.dtype:
            raise AssertionError(f"result {actual.shape} {actual.dtype} != golden {expected.shape} {expected.dtype}")
        cmp = compare(actual, expected, call.out_dtype, standard, case.threshold_scale, small_values=True)
        cmp64 = cmp if ref == "float64" else compare(actual, compute_call(call, "float64"), call.out_dtype, standard,
                                                     small_values=True)
        return CaseResult(case, cmp.passed, cmp, cmp64, None, time.perf_counter() - t0, ref, standard)
    except Exception as exc:  # a failing case is a result, not a crash of the whole run
        return CaseResult(case, False, None, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0, ref,
                          standard)


def run_cases(cases: Iterable[Case], backend: str = "twin", jobs: int = 2,
              progress: Callable[[int, int, int], None] | None = None) -> list[CaseResult]:
    """Run cases concurrently (the twin releases the GIL inside kernels and compiles in subprocesses)."""
    todo = list(cases)
    results: list[CaseResult | None] = [None] * len(todo)
    failed = 0
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(run_case, c, backend): i for i, c in enumerate(todo)}
        for done, fut in enumerate(cf.as_completed(futures), start=1):
            r = fut.result()
            results[futures[fut]] = r
            failed += not r.passed
            if progress:
                progress(done, len(todo), failed)
    return [r for r in results if r is not None]


def worst(results: Iterable[CaseResult]) -> dict[tuple[str, str], dict[str, float]]:
    """Per (op, output dtype): case count, failures, worst MERE and MARE (judged, and against float64)."""
    table: dict[tuple[str, str], dict[str, float]] = {}
    for r in results:
        key = (r.case.op, r.case.dtypes[3])
        row = table.setdefault(key, {"cases": 0, "failed": 0, "mere": 0.0, "mare": 0.0, "mere64": 0.0,
                                     "mare64": 0.0})
        row["cases"] += 1
        row["failed"] += not r.passed
        for cmp, suffix in ((r.comparison, ""), (r.comparison64, "64")):
            if cmp is not None and cmp.count:
                row["mere" + suffix] = max(row["mere" + suffix], cmp.mere)
                row["mare" + suffix] = max(row["mare" + suffix], cmp.mare)
    return dict(sorted(table.items()))


def summary_json(results: list[CaseResult], wall: float) -> dict[str, object]:
    return {
        "passed": all(r.passed for r in results),
        "cases": len(results),
        "failed": sum(not r.passed for r in results),
        "wall_seconds": round(wall, 3),
        "worst": [{"op": op, "dtype": d, **{k: (int(v) if k in ("cases", "failed") else v) for k, v in row.items()}}
                  for (op, d), row in worst(results).items()],
        "results": [{
            "id": r.case.id, "passed": r.passed, "error": r.error, "seconds": round(r.seconds, 4),
            "reference": r.reference, "standard": r.standard,
            "mere": None if r.comparison is None else r.comparison.mere,
            "mare": None if r.comparison is None else r.comparison.mare,
            "mere64": None if r.comparison64 is None else r.comparison64.mere,
            "mare64": None if r.comparison64 is None else r.comparison64.mare,
            "mixed_ratio": None if r.comparison is None else r.comparison.mixed_ratio,
            "special_mismatches": None if r.comparison is None else r.comparison.special_mismatches,
        } for r in results],
    }
