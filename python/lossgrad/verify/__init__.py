"""`lossgrad verify`: the verification matrix (cases.py), inputs (data.py), the fuzz search (fuzz.py), execution and
judgement (run.py)."""
from .cases import Case, default_cases, read_csv, write_csv
from .data import inputs
from .run import CaseResult, run_case, run_cases, summary_json, worst

__all__ = ["Case", "CaseResult", "default_cases", "inputs", "read_csv", "write_csv", "run_case", "run_cases",
           "summary_json", "worst"]
