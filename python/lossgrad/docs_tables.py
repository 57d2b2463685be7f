"""The docs' op tables, generated from the op folders (the registry): README.md's table of public functions.

`python -m lossgrad.docs_tables` rewrites the generated blocks in place; `--check` only reports the ones that differ
(tests/python/test_docs_tables.py runs the check). A block sits between BEGIN and END marker lines; everything
outside the markers is left as written.
"""
from __future__ import annotations

import inspect
import sys
from pathlib import Path

from .registry import OPS, OpSpec
from .wrappers import signature

BEGIN = "<!-- generated from the op folders by `python -m lossgrad.docs_tables`: edit the folders, not this table -->"
END = "<!-- end of generated table -->"


def _call(op: OpSpec) -> str:
    """The public function's positional call (its keyword-only options are documented once, below the table)."""
    params = [p for p in signature(op, {}).parameters.values() if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    text = ", ".join(p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}" for p in params)
    return f"{op.name}({text})".replace("'", '"')


def readme_ops_table() -> str:
    rows = ["| Python (`lossgrad.`) | aclnn | formula |", "|---|---|---|"]
    rows += [f"| `{_call(op)}` | {op.aclnn} | `{op.formula}` |" for op in OPS.values()]
    return "\n".join(rows)


def _blocks() -> dict[Path, str]:
    from .project_files import CHECKOUT_ROOT
    return {CHECKOUT_ROOT / "README.md": readme_ops_table()}


def _with_block(text: str, block: str, path: Path) -> str:
    lines = text.split("\n")
    if lines.count(BEGIN) != 1 or lines.count(END) != 1 or lines.index(BEGIN) > lines.index(END):
        raise ValueError(f"{path}: expected one generated block between the lines {BEGIN!r} and {END!r}")
    begin, end = lines.index(BEGIN), lines.index(END)
    return "\n".join(lines[:begin + 1] + block.split("\n") + lines[end:])


def stale() -> list[Path]:
    """The documents whose generated block differs from the registry."""
    return [p for p, block in _blocks().items() if _with_block(p.read_text(), block, p) != p.read_text()]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        out_of_date = stale()
        for p in out_of_date:
            print(f"{p}: the generated op table is out of date; run python -m lossgrad.docs_tables", file=sys.stderr)
        return 1 if out_of_date else 0
    if argv:
        print("usage: python -m lossgrad.docs_tables [--check]", file=sys.stderr)
        return 2
    for p, block in _blocks().items():
        new = _with_block(p.read_text(), block, p)
        if new != p.read_text():
            p.write_text(new)
            print(f"updated {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
