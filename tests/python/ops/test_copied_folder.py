"""Copying an op's folder under a new name, with the op's own names changed inside, gives a new working op and
nothing else to edit (docs/contributing.md): the public function, the golden, the torch drop-in, `verify --op`,
`gen --op-host` and the test collection, at the same breadth as the original's; `python -m lossgrad.generated`
regenerates the README table and the typing declarations.

The copy lives in a temporary copy of the checkout (the user's tree is never touched); every check runs in a
subprocess that imports the copied package."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lossgrad.registry import OPS, Check

sys.path.insert(0, str(Path(__file__).parent))
from _checkout import OPS_DIR, add_op_folder, make_checkout, run as _run  # noqa: E402

# The folder copied: the newest op, whose commit was the proof that an op is one folder.
ORIGINAL = list(OPS.values())[-1]
COPY = f"{ORIGINAL.template}_copy"
SOC = "Ascend910B1"


def _camel(snake: str) -> str:
    return "".join(w.capitalize() for w in snake.split("_"))


def _renames() -> list[tuple[str, str]]:
    """The op's own names (SPEC's API, aclnn and op-type names), renamed as a contributor would; what it wraps
    (torch's loss) stays."""
    base = ORIGINAL.name.removesuffix("_backward")
    new_base = base.replace(ORIGINAL.template, COPY, 1)
    assert new_base != base, "the op's API name must contain its short name"
    names = [(ORIGINAL.name, ORIGINAL.name.replace(base, new_base))]
    # a name without the short name (BCEWithLogits' CANN op type SigmoidCrossEntropyWithLogitsGradV2) gets "Copy"
    names += [(n, n.replace(_camel(base), _camel(new_base)) if _camel(base) in n else n + "Copy")
              for n in (ORIGINAL.aclnn, ORIGINAL.custom_op_type, ORIGINAL.cann_op_type)]
    assert all(old != new for old, new in names), names
    return sorted(names, key=lambda n: -len(n[0]))


def _rename(text: str) -> str:
    for old, new in _renames():
        text = re.sub(rf"(?<![.\w]){re.escape(old)}(?!\w)", new, text)  # never torch's F.<loss> / torch.nn.<Loss>
    return text


@pytest.fixture(scope="module")
def copied_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_checkout(tmp_path_factory.mktemp("checkout"))
    copy = add_op_folder(root, root / OPS_DIR / ORIGINAL.template, COPY)
    for path in copy.iterdir():
        if path.suffix in (".py", ".h"):
            path.write_text(_rename(path.read_text()))
    return root


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(root, "-c", "import sys; from lossgrad.cli import main; sys.exit(main())", *args)


def test_the_copy_is_a_new_op_with_the_original_s_behaviour(copied_checkout: Path) -> None:
    new_name = _rename(ORIGINAL.name)
    script = f"""
import json, numpy as np, lossgrad, lossgrad.golden
from lossgrad.registry import OPS, get_op
assert lossgrad.__file__.startswith({str(copied_checkout)!r}), lossgrad.__file__
copy, original = get_op({COPY!r}), get_op({ORIGINAL.template!r})
rng = np.random.default_rng(5)
t_shape = (3, 70) if {Check.TARGET_IS_SELF in ORIGINAL.checks} else (70,)  # BCEWithLogits: self's shape
g, s, t = (rng.standard_normal(shape).astype(np.float32) for shape in ((3, 1), (3, 70), t_shape))
w = original.absent_optional  # the optional inputs, left out
ours = lossgrad.{new_name}(g, s, t, *w, "sum", soc={SOC!r})
theirs = getattr(lossgrad, original.name)(g, s, t, *w, "sum", soc={SOC!r})
golden = lossgrad.golden.{new_name}(g, s, t, *w, "sum")
print(json.dumps({{"ops": list(OPS), "equal": bool(np.array_equal(ours, theirs, equal_nan=True)),
                  "golden_equal": bool(np.array_equal(golden, lossgrad.golden.{ORIGINAL.name}(g, s, t, *w, "sum"),
                                                      equal_nan=True)),
                  "in_all": {new_name!r} in lossgrad.__all__ and {new_name!r} in lossgrad.golden.__all__,
                  "aclnn": copy.aclnn, "custom": copy.custom_op_type}}))
"""
    r = _run(copied_checkout, "-c", script)
    assert r.returncode == 0, r.stderr[-3000:]
    facts = json.loads(r.stdout.strip().splitlines()[-1])
    assert facts["ops"] == [*OPS, new_name]
    assert facts["equal"] and facts["golden_equal"] and facts["in_all"]
    assert facts["aclnn"] == _rename(ORIGINAL.aclnn) != ORIGINAL.aclnn
    assert facts["custom"] == _rename(ORIGINAL.custom_op_type) != ORIGINAL.custom_op_type


def test_the_copy_has_a_torch_drop_in(copied_checkout: Path) -> None:
    pytest.importorskip("torch")
    from lossgrad.registry import op_part

    if op_part(ORIGINAL, "torch_facts").LOSS is None:  # a gradient another op's drop-in takes (KlDivTarget's)
        script = f"""
import torch, lossgrad.torch as lt
out = getattr(lt, {_rename(ORIGINAL.name)!r})(torch.rand(4, 6), torch.rand(4, 6), torch.rand(4, 6) + 0.5, "sum")
assert hasattr(torch.ops.lossgrad, {_rename(ORIGINAL.name)!r}) and {_rename(ORIGINAL.name)!r} in lt.__all__
print("ok", tuple(out.shape) == (4, 6) and bool(torch.isfinite(out).all()))
"""
        r = _run(copied_checkout, "-c", script)
        assert r.returncode == 0, r.stderr[-3000:]
        assert r.stdout.split() == ["ok", "True"]
        return
    function = ORIGINAL.name.removesuffix("_backward").replace(ORIGINAL.template, COPY, 1)
    script = f"""
import torch, lossgrad.torch as lt
x = torch.rand(4, 6, requires_grad=True); y = torch.rand(4, 6)  # probabilities: every loss takes them
getattr(lt, {function!r})(x, y).backward()
assert {function!r} in lt.__all__ and {_camel(function)!r} in lt.__all__
assert hasattr(torch.ops.lossgrad, {_rename(ORIGINAL.name)!r})
print("ok", float(x.grad.abs().sum()) > 0)
"""
    r = _run(copied_checkout, "-c", script)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["ok", "True"]


def test_the_copy_verifies_and_generates(copied_checkout: Path, tmp_path: Path) -> None:
    r = _cli(copied_checkout, "verify", "--op", COPY, "--soc", SOC, "--limit", "6", "--json", "-j", "2")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["cases"] == 6 and report["failed"] == 0 and report["passed"]
    r = _cli(copied_checkout, "gen", "--op", COPY, "--op-host", "--out", str(tmp_path / "gen"))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    names = {p.name for p in (tmp_path / "gen").rglob("*")}
    custom = _rename(ORIGINAL.custom_op_type)
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", custom).lower()
    assert any(snake in n for n in names), sorted(names)
    # the generated text (README's table, the typing declarations) is regenerated, not edited
    assert _run(copied_checkout, "-m", "lossgrad.generated", "--check").returncode == 1
    r = _run(copied_checkout, "-m", "lossgrad.generated")
    assert r.returncode == 0, r.stderr[-2000:]
    assert _rename(ORIGINAL.aclnn) in (copied_checkout / "README.md").read_text()
    assert f"def {_rename(ORIGINAL.name)}(" in (copied_checkout / "python" / "lossgrad" / "api.py").read_text()
    assert _run(copied_checkout, "-m", "lossgrad.generated", "--check").returncode == 0


def test_the_copy_is_collected_as_widely_as_the_original(copied_checkout: Path) -> None:
    r = _run(copied_checkout, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests",
             timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    ids = [line for line in r.stdout.splitlines() if "::" in line]
    # long names in any case, the short name (a folder name) in lower case only, as the registry scanner reads them
    # (tests/twin's corpus names SOFT_MARGIN-like forward formulas, not ops)
    copy_names = (COPY, {n.lower() for n in (_rename(ORIGINAL.name), _rename(ORIGINAL.aclnn))})
    original_names = (ORIGINAL.template, {n.lower() for n in (ORIGINAL.name, ORIGINAL.aclnn)})

    def mentions(test_id: str, names: tuple[str, set[str]]) -> bool:
        short, long = names
        return bool(re.search(rf"(?<![A-Za-z0-9]){re.escape(short)}(?![A-Za-z0-9]|_copy)", test_id)) or any(
            re.search(rf"(?<![a-z0-9]){re.escape(n)}(?![a-z0-9]|_copy)", test_id.lower()) for n in long)

    copies = [i for i in ids if mentions(i, copy_names)]
    originals = [i for i in ids if mentions(i, original_names)]
    assert len(originals) > 100
    assert len(copies) == len(originals), (len(copies), len(originals))
