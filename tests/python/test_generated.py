"""Checked-in text generated from the op folders (python/lossgrad/generated.py): README's table and the declarations
type checkers read, current and faithful to the functions the package makes at import time."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lossgrad import generated
from lossgrad.project_files import CHECKOUT_ROOT
from lossgrad.registry import OPS, ROLE


def test_the_generated_blocks_are_up_to_date() -> None:
    if not (CHECKOUT_ROOT / "README.md").is_file():
        pytest.skip("needs a source checkout")
    assert generated.stale() == [], "run python -m lossgrad.generated"


def test_every_op_has_its_readme_row_from_its_folder() -> None:
    table = generated.readme_ops_table().splitlines()
    assert len(table) == 2 + len(OPS)
    for op, row in zip(OPS.values(), table[2:]):
        optional = "".join(f"{ROLE[i.role].param}=None, " for i in op.inputs if i.optional)
        assert row.startswith(f"| `{op.name}(grad_output, self, target, {optional}reduction=") and op.aclnn in row
        assert f"`{op.formula}`" in row
        assert all(f'{a.name}={a.default!r}'.replace("'", '"') in row for a in op.attrs)


def _declared(text: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Execute a generated `if TYPE_CHECKING:` block with TYPE_CHECKING true and return what it defines."""
    body = "\n".join(line[4:] for line in text.splitlines()[1:])  # the block's body, dedented
    scope = dict(namespace)
    exec(compile(body, "<generated>", "exec"), scope)
    return {k: v for k, v in scope.items() if k not in namespace and k != "__builtins__"}


@pytest.mark.parametrize("module, render", [("api", generated.api_declarations),
                                            ("golden", generated.golden_declarations)])
def test_the_declarations_match_the_functions(module: str, render: Any) -> None:
    import importlib

    from lossgrad.dtypes import DType
    from lossgrad.socs import Soc

    real = importlib.import_module(f"lossgrad.{module}").FUNCTIONS
    declared = _declared(render(), {"Any": Any, "np": np, "Soc": Soc, "DType": DType})
    assert list(declared) == list(real)
    for name, f in real.items():
        ours, theirs = inspect.signature(declared[name]), inspect.signature(f)
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name


def test_a_stale_or_broken_block_is_reported(tmp_path: Path) -> None:
    block = generated.BLOCKS[0]
    content = block.render()
    doc = f"intro\n{block.begin}\n{content}\n{block.end}\noutro\n"
    assert generated.with_block(doc, block, content) == doc
    stale = doc.replace(content.splitlines()[-1] + "\n", "")  # one op's row missing
    assert stale != doc and generated.with_block(stale, block, content) == doc
    with pytest.raises(ValueError, match="one generated block"):
        generated.with_block(doc.replace(block.end, ""), block, content)
