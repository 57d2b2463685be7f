"""The docs' generated op tables (python/lossgrad/docs_tables.py) match the op folders."""
from __future__ import annotations

from pathlib import Path

import pytest

from lossgrad import docs_tables
from lossgrad.project_files import CHECKOUT_ROOT
from lossgrad.registry import OPS


def test_the_generated_tables_are_up_to_date() -> None:
    if not (CHECKOUT_ROOT / "README.md").is_file():
        pytest.skip("needs a source checkout")
    assert docs_tables.stale() == [], "run python -m lossgrad.docs_tables"


def test_every_op_has_its_row_from_its_folder() -> None:
    table = docs_tables.readme_ops_table().splitlines()
    assert len(table) == 2 + len(OPS)
    for op, row in zip(OPS.values(), table[2:]):
        assert row.startswith(f"| `{op.name}(grad_output, self, target, reduction=") and op.aclnn in row
        assert f"`{op.formula}`" in row
        assert all(f'{a.name}={a.default!r}'.replace("'", '"') in row for a in op.attrs)


def test_a_stale_or_broken_block_is_reported(tmp_path: Path) -> None:
    block = docs_tables.readme_ops_table()
    doc = f"intro\n{docs_tables.BEGIN}\n{block}\n{docs_tables.END}\noutro\n"
    assert docs_tables._with_block(doc, block, tmp_path) == doc
    stale = doc.replace(block.splitlines()[-1] + "\n", "")  # one op's row missing
    assert docs_tables._with_block(stale, block, tmp_path) == doc  # the check compares with this
    with pytest.raises(ValueError, match="one generated block"):
        docs_tables._with_block(doc.replace(docs_tables.END, ""), block, tmp_path)
