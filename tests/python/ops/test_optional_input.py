"""An op with an optional input is declared by data alone (issue 24): the test op in data/weighted_mse (MSE's gradient
times an optional weight; a spec, a compute body and a golden, nothing else) copied into a temporary checkout's
lossgrad/ops/ gives a public function and a golden with `weight=None`, aclnn's validation of the new input, kernels
on every architecture that match the golden bit for bit with and without the weight, a variant that never touches
an absent weight (its tiling-key bit; the kernel gets a null GM address, which the twin faults on), an op_host
OpDef that registers the input as ParamType(OPTIONAL), and a torch op whose schema takes `Tensor? weight=None`, with
double backward through the weight."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lossgrad.tiling import KEY_ABSENT

sys.path.insert(0, str(Path(__file__).parent))
from _checkout import add_op_folder, make_checkout, run  # noqa: E402

FOLDER = Path(__file__).parent / "data" / "weighted_mse"
SOCS = ("Ascend910B1", "Ascend950PR_9579", "Ascend310P3", "Ascend910A")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_checkout(tmp_path_factory.mktemp("checkout"))
    add_op_folder(root, FOLDER, "weighted_mse")
    return root


SCRIPT = """
import inspect, json, sys
import numpy as np
import lossgrad, lossgrad.golden
from lossgrad.errors import LossGradError
from lossgrad.registry import get_op
from lossgrad.runners.twin import run_twin
from lossgrad.tiling import KEY_ABSENT
from lossgrad.validation import validate
from lossgrad.cann.op_host import render_op

op = get_op("weighted_mse")
fn, gold = lossgrad.weighted_mse_loss_backward, lossgrad.golden.weighted_mse_loss_backward
facts = {"signature": str(inspect.signature(fn)), "golden_signature": str(inspect.signature(gold)), "runs": []}
rng = np.random.default_rng(11)
g, s, t = (rng.standard_normal(shape).astype(np.float32) for shape in ((4, 1), (4, 70), (70,)))
weights = {"absent": None, "full": rng.standard_normal((4, 70)).astype(np.float32),
           "row": rng.standard_normal((70,)).astype(np.float32), "scalar": np.float32([0.5])}
for soc in sys.argv[1:]:
    for name, w in weights.items():
        ours = fn(g, s, t, w, "mean", soc=soc, backend="twin")
        golden = gold(g, s, t, w, "mean", soc=soc, compute="float32")
        exact = 2 * (s.astype(np.float64) - t) * g / s.size * (1.0 if w is None else w.astype(np.float64))
        call = validate(op, g, s, t, w, "mean", soc=soc)
        run_ = run_twin(call)
        read = [b.read_distinct for b in run_.report.buffers]
        facts["runs"].append({"soc": soc, "weight": name, "bit_exact": bool(np.array_equal(ours, golden)),
                              "close": bool(np.allclose(ours, exact, rtol=1e-6, atol=1e-7)),
                              "key": run_.plan.tiling_key, "weight_bytes_read": read[3]})
errors = {}
bad = {"null grad": (None, s, t, None), "weight not broadcastable": (g, s, t, np.ones(3, np.float32))}
for name, args in bad.items():
    try:
        fn(*args, "mean", soc="Ascend910B1")
    except LossGradError as e:
        errors[name] = e.code
facts["errors"] = errors
facts["absent_key"] = KEY_ABSENT["weight"]
facts["op_host"] = render_op(op)
print(json.dumps(facts))
"""


def test_an_op_with_an_optional_input_works_from_its_folder(checkout: Path) -> None:
    r = run(checkout, "-c", SCRIPT, *SOCS, timeout=1500)
    assert r.returncode == 0, r.stderr[-4000:]
    facts = json.loads(r.stdout.strip().splitlines()[-1])
    assert "weight: Any = None, reduction: Any = 'mean'" in facts["signature"]
    assert "weight: Any = None, reduction: Any = 'mean'" in facts["golden_signature"]
    assert len(facts["runs"]) == 4 * len(SOCS)
    for run_ in facts["runs"]:
        assert run_["bit_exact"] and run_["close"], run_
        absent = run_["weight"] == "absent"
        assert bool(run_["key"] & facts["absent_key"]) == absent, run_
        assert (run_["weight_bytes_read"] == 0) == absent, run_  # an absent weight costs no GM traffic
    assert facts["errors"] == {"null grad": 161001, "weight not broadcastable": 161002}
    host = facts["op_host"]
    assert 'this->Input("weight")\n            .ParamType(OPTIONAL)' in host
    assert 'this->Input("dout")\n            .ParamType(REQUIRED)' in host
    assert "InputLayout inputs{4, 0x8u}" in host


TORCH_SCRIPT = """
import json
import numpy as np, torch
import lossgrad, lossgrad.torch
op = torch.ops.lossgrad.weighted_mse_loss_backward
g = torch.randn(4, 1, dtype=torch.float32)
s = torch.randn(4, 70, dtype=torch.float32, requires_grad=True)
t = torch.randn(70, dtype=torch.float32)
w = torch.randn(70, dtype=torch.float32, requires_grad=True)
out = op(g, s, t, w, 2)
none = op(g, s, t, None, 2)
ref = lossgrad.weighted_mse_loss_backward(g.numpy(), s.detach().numpy(), t.numpy(), w.detach().numpy(), "sum")
ref_none = lossgrad.weighted_mse_loss_backward(g.numpy(), s.detach().numpy(), t.numpy(), None, "sum")
d_w, d_s = torch.autograd.grad(out.sum(), (w, s))
x = s.detach().double() - t.double()
print(json.dumps({"schema": str(op.default._schema),
                  "forward": bool(np.array_equal(out.detach().numpy(), ref)),
                  "forward_none": bool(np.array_equal(none.detach().numpy(), ref_none)),
                  "d_w": bool(torch.allclose(d_w.double(), (2 * x * g.double()).sum(0), rtol=1e-5, atol=1e-5)),
                  "d_s": bool(torch.allclose(d_s.double(), (2 * g.double() * w.detach().double()).expand(4, 70),
                                             rtol=1e-6))}))
"""


def test_the_optional_input_is_optional_in_the_torch_schema(checkout: Path) -> None:
    pytest.importorskip("torch")
    r = run(checkout, "-c", TORCH_SCRIPT)
    assert r.returncode == 0, r.stderr[-4000:]
    facts = json.loads(r.stdout.strip().splitlines()[-1])
    assert "Tensor target, Tensor? weight=None, int reduction=1" in facts["schema"], facts["schema"]
    assert facts["forward"] and facts["forward_none"] and facts["d_w"] and facts["d_s"], facts


def _cli(root: Path, *args: str):
    return run(root, "-c", "import sys; from lossgrad.cli import main; sys.exit(main())", *args, timeout=1500)


def test_the_op_with_an_optional_input_verifies(checkout: Path, tmp_path: Path) -> None:
    """verify's matrix runs it with the weight absent and present, the fuzz search draws it both ways (and compares
    with PyTorch), and a case table carries the weight's shape in its own column (empty: absent)."""
    table = tmp_path / "cases.csv"
    r = _cli(checkout, "verify", "--op", "weighted_mse", "--soc", "Ascend910B1", "--limit", "24", "--json",
             "--export-cases", str(table))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    text = table.read_text()
    assert "weight_shape" in text.splitlines()[0]
    rows = text.splitlines()[1:]
    assert any("/absent/" in row for row in rows) and any("/present/" in row for row in rows)
    r = _cli(checkout, "verify", "--cases", str(table), "--limit", "24", "--json", "-j", "2")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["cases"] == 24 and report["failed"] == 0, report
    r = _cli(checkout, "verify", "--op", "weighted_mse", "--soc", "Ascend910B1,Ascend310P3", "--fuzz", "40",
             "--seed", "5", "--json", "-j", "2")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["cases"] == 80 and report["failed"] == 0, report
    # with a three-input op in the same run: their kernels go to separate bundles (a bundle's entry has one arity)
    r = _cli(checkout, "verify", "--op", "weighted_mse", "--op", "mse", "--soc", "Ascend910B1", "--fuzz", "12",
             "--seed", "6", "--json", "-j", "2", "--no-torch-oracle")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["cases"] == 12 and report["failed"] == 0, report


def test_tiling_and_profile_take_the_optional_input(checkout: Path) -> None:
    present = _cli(checkout, "tiling", "weighted_mse", "--grad", "(4,1)", "--self", "(4,70)", "--weight", "(70,)",
                   "--json")
    absent = _cli(checkout, "tiling", "weighted_mse", "--grad", "(4,1)", "--self", "(4,70)", "--json")
    assert present.returncode == 0 and absent.returncode == 0, present.stderr[-2000:] + absent.stderr[-2000:]
    with_w, without = json.loads(present.stdout), json.loads(absent.stdout)
    weight_bit = KEY_ABSENT["weight"]
    assert with_w["tiling_key"] & weight_bit == 0 and without["tiling_key"] & weight_bit == weight_bit
    assert "weight" in with_w["modes"] and "weight" not in without["modes"]
    script = """
import numpy as np, lossgrad
g, s, t, w = (np.ones(shape, np.float32) for shape in ((4, 1), (4, 70), (70,), (70,)))
p = lossgrad.profile("weighted_mse", g, s, t, w, "sum", soc="Ascend910B1", timing=False)
q = lossgrad.profile("weighted_mse", g, s, t, None, "sum", soc="Ascend910B1", timing=False)
print(p.counters["gm_bytes_read"] - q.counters["gm_bytes_read"])
"""
    r = run(checkout, "-c", script)
    assert r.returncode == 0, r.stderr[-3000:]
    assert int(r.stdout.split()[-1]) == 70 * 4  # the weight's bytes, read once
