"""torch.compile of a small training step on CPU: the losses' backward graph calls our operators as opaque nodes
(traced through their fake kernels, never into them), and the compiled step trains like torch's own losses.

The backend is AOTAutograd with eager graph execution ("aot_eager" with graph capture): it exercises dynamo, the fake
kernels and the joint forward/backward graph exactly as inductor would see them, in ~3 s; inductor itself adds a
C++ build of the generated code (measured: ~100 s cold on this project's 2 shared cores) and nothing of ours."""
from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from functorch.compile import make_boxed_func  # noqa: E402
from torch._dynamo.backends.common import aot_autograd  # noqa: E402

import lossgrad.runners.twin as twin_runner  # noqa: E402
import lossgrad.torch as lt  # noqa: E402

from _torch_support import assert_within_standard  # noqa: E402


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

    def train(smooth_l1: Any, kl_div: Any, compile_: bool) -> list[torch.Tensor]:
        torch.manual_seed(0)
        model = torch.nn.Linear(8, 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 8), torch.randn(16, 4)

        def loss_fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            out = model(x)
            return smooth_l1(out, y, beta=0.5) + kl_div(torch.log_softmax(out, 1), torch.softmax(y, 1),
                                                        reduction="batchmean")

        step = torch.compile(loss_fn, backend=backend, fullgraph=True) if compile_ else loss_fn
        for _ in range(3):
            opt.zero_grad()
            step(x, y).backward()
            opt.step()
        return [p.detach().clone() for p in model.parameters()]

    ours = train(lt.smooth_l1_loss, lt.kl_div, compile_=True)
    reference = train(F.smooth_l1_loss, F.kl_div, compile_=False)
    for a, b in zip(ours, reference):
        assert_within_standard(a, b, "parameters after 3 compiled steps")
    assert sorted(launched) == ["kl_div_backward"] * 3 + ["smooth_l1_loss_backward"] * 3
    assert len(graphs["backward"]) == 1  # one compile, reused by all three steps
    targets = {str(n.target) for n in graphs["backward"][0].graph.nodes if n.op == "call_function"}
    assert {"lossgrad.smooth_l1_loss_backward.default", "lossgrad.kl_div_backward.default"} <= targets, targets
    forward_targets = {str(n.target) for n in graphs["forward"][0].graph.nodes if n.op == "call_function"}
    assert not any(t.startswith("lossgrad.") for t in forward_targets)  # the forward is torch's
