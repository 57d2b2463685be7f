"""torch.compile of a small training step on CPU: the losses' backward graph calls our operators as opaque nodes
(traced through their fake kernels, never into them), and the compiled step trains like torch's own losses.

The backend is AOTAutograd with eager graph execution ("aot_eager" with graph capture): it exercises dynamo, the fake
kernels and the joint forward/backward graph exactly as inductor would see them, in ~3 s; inductor itself adds a
C++ build of the generated code (measured: ~100 s cold on this project's 2 shared cores) and nothing of ours."""
from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
from functorch.compile import make_boxed_func  # noqa: E402
from torch._dynamo.backends.common import aot_autograd  # noqa: E402

import lossgrad.runners.twin as twin_runner  # noqa: E402
import lossgrad.torch as lt  # noqa: E402

from _torch_support import assert_within_standard, drop_in_losses, op_fact  # noqa: E402


def test_compiled_training_step(monkeypatch: pytest.MonkeyPatch) -> None:
    graphs: dict[str, list[torch.fx.GraphModule]] = {"forward": [], "backward": []}

    def capture(kind: str) -> Any:
        def compiler(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
            graphs[kind].append(gm)
            return make_boxed_func(gm.forward)
        return compiler

    backend = aot_autograd(fw_compiler=capture("forward"), bw_compiler=capture("backward"))
    launched: list[str] = []
    real = twin_runner.run_twin
    monkeypatch.setattr(twin_runner, "run_twin", lambda call: (launched.append(call.op.name), real(call))[1])

    losses = drop_in_losses()  # every registered op's drop-in, with each keyword set of its test facts
    plan = [(f, ref, kw, op_fact(op, "TORCH_INPUT", "any")) for f, ref, kw, op in losses.values()]

    def train(ours: bool, compile_: bool) -> list[torch.Tensor]:
        torch.manual_seed(0)
        model = torch.nn.Linear(8, 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 8), torch.randn(16, 4)

        def loss_fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            # log-probabilities against probabilities: a valid input pair for every loss (KL's included); "sum",
            # which every loss accepts and torch's kl_div does not warn about
            # (BCE takes probabilities as its input too: test fact TORCH_INPUT)
            log_p, q = torch.log_softmax(model(x), 1), torch.softmax(y, 1)
            inputs = {"any": log_p, "probability": torch.softmax(model(x), 1)}
            return sum(((drop_in if ours else reference)(inputs[kind], q, **{"reduction": "sum", **kw})
                        for drop_in, reference, kw, kind in plan), torch.zeros(()))

        step = torch.compile(loss_fn, backend=backend, fullgraph=True) if compile_ else loss_fn
        for _ in range(3):
            opt.zero_grad()
            step(x, y).backward()
            opt.step()
        return [p.detach().clone() for p in model.parameters()]

    ours = train(ours=True, compile_=True)
    reference = train(ours=False, compile_=False)
    for a, b in zip(ours, reference):
        assert_within_standard(a, b, "parameters after 3 compiled steps")
    calls = sorted(spec.name for *_, spec in losses.values())
    assert sorted(launched) == sorted(calls * 3)  # each drop-in's backward once per step
    assert len(graphs["backward"]) == 1  # one compile, reused by all three steps
    targets = {str(n.target) for n in graphs["backward"][0].graph.nodes if n.op == "call_function"}
    assert {f"lossgrad.{name}.default" for name in calls} <= targets, targets
    forward_targets = {str(n.target) for n in graphs["forward"][0].graph.nodes if n.op == "call_function"}
    assert not any(t.startswith("lossgrad.") for t in forward_targets)  # the forward is torch's
