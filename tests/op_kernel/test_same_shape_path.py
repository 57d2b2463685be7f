"""The same-shape path (issue 28): calls whose inputs all have the output's shape run a kernel class of their own,
chosen by the tiling key bit KEY_SAME_SHAPE, and rendered alone it is a file a reader can follow.

- The key: the tiling sets the bit exactly for such calls (a one-value gradOutput included), never for a broadcast.
- The rendered same-shape path (`lossgrad gen --same-shape-only`) is at most half the length of the whole kernel as
  it was rendered before the split (0cbe414), per op; two ops are over it, each with its measured excess.
- That rendering is a real kernel: compiled alone on the twin it writes the same bytes as the full kernel for a
  same-shape call, on a part with DataCopyPad and on one without, and faults on a broadcast call's key.
"""
from __future__ import annotations

import numpy as np
import pytest

from lossgrad import codegen
from lossgrad.dtypes import DType
from lossgrad.registry import OPS, get_op
from lossgrad.runners.kernel_args import prepare
from lossgrad.runners.twin import UNWRITTEN
from lossgrad.tiling import KEY_SAME_SHAPE, plan_call
from lossgrad.twin import KernelFault, run_kernel
from lossgrad.twin.build import cache_root
from lossgrad.validation import validate

# Lines of each op's rendered kernel (float32) at 0cbe414, before the same-shape path was split out.
BEFORE = {"l1_loss_backward": 1773, "mse_loss_backward": 1727, "smooth_l1_loss_backward": 1782,
          "kl_div_backward": 2129, "soft_margin_loss_backward": 1744, "binary_cross_entropy_backward": 1783,
          "binary_cross_entropy_with_logits_backward": 1826, "kl_div_target_backward": 2180}
# Over half: L1 and SmoothL1 carry compare.h's sign and clamp helpers (914 and 947 lines against 886 and 891).
OVER_HALF = {"l1_loss_backward", "smooth_l1_loss_backward"}


def _arrays(*shapes: tuple[int, ...], dtype: str = "float32") -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _key(op: str, *shapes: tuple[int, ...], reduction: str = "none", **kw: object) -> int:
    return plan_call(validate(op, *_arrays(*shapes), reduction, **kw)).tiling_key


@pytest.mark.parametrize("shapes", [((4096,),) * 3, ((8, 512),) * 3, ((2, 3, 5, 7),) * 3,
                                    ((), (8, 512), (8, 512)), ((1, 1, 33),) * 3])
@pytest.mark.parametrize("op", ["mse_loss_backward", "l1_loss_backward", "smooth_l1_loss_backward"])
def test_same_shape_calls_take_the_same_shape_key(op: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    assert _key(op, *shapes, soc="Ascend910B1") & KEY_SAME_SHAPE


@pytest.mark.parametrize("shapes", [((8, 512), (8, 512), (512,)), ((8, 512), (8, 512), ()),
                                    ((8, 1), (8, 512), (8, 512)), ((8, 512), (1, 512), (8, 512))])
@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend310P3"])
def test_broadcast_calls_never_take_it(soc: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    assert not _key("mse_loss_backward", *shapes, soc=soc) & KEY_SAME_SHAPE


def test_kl_takes_it_without_a_reduction_and_not_with_one() -> None:
    assert _key("kl_div_backward", (64, 32), (64, 32), (64, 32), reduction="none") & KEY_SAME_SHAPE
    assert not _key("kl_div_target_backward", (64, 32), (64, 32), (32,), reduction="none") & KEY_SAME_SHAPE


def test_an_absent_weight_keeps_it() -> None:
    g, s, t = _arrays((64, 32), (64, 32), (64, 32))
    t = np.abs(t) / (1 + np.abs(t))
    s = np.abs(s) / (1 + np.abs(s))
    for weight in (None, np.ones((64, 32), np.float32)):
        call = validate("binary_cross_entropy_backward", g, s, t, weight, "none")
        assert plan_call(call).tiling_key & KEY_SAME_SHAPE


@pytest.mark.parametrize("op", sorted(OPS))
def test_the_rendered_same_shape_path_is_half_the_kernel_before(op: str) -> None:
    spec = get_op(op)
    dtypes = {r: DType.FLOAT32 for r in codegen.kernel_roles(spec)}
    lines = len(codegen.render_kernel(spec, dtypes, same_shape_only=True).splitlines())
    if op in OVER_HALF:
        assert lines > BEFORE[op] / 2, f"{op} is within half now: take it out of OVER_HALF"
        assert lines <= 0.55 * BEFORE[op], (op, lines)  # the stated excess, and no more
        pytest.xfail(f"{lines} lines, {lines / BEFORE[op]:.0%} of {BEFORE[op]}: compare.h's helpers")
    assert lines <= BEFORE[op] / 2, (op, lines, BEFORE[op])
    full = codegen.render_kernel(spec, dtypes)
    assert "class " + codegen._class_name(spec) + " {" in full and "Operand<" in full
    assert "Operand<" not in codegen.render_kernel(spec, dtypes, same_shape_only=True)


def _launch(op: str, soc: str, dtype: str, shapes: tuple[tuple[int, ...], ...], same_shape_only: bool,
            key: int | None = None) -> np.ndarray:
    call = validate(op, *_arrays(*shapes, dtype=dtype), "mean", soc=soc)
    args = prepare(call)
    source = codegen.cached_kernel(call.op, args.dtypes, cache_root(), same_shape_only=same_shape_only)
    out = np.empty(call.out_shape, dtype=dtype)
    out.reshape(-1).view(np.uint8)[:] = UNWRITTEN
    run_kernel(source, call.op.entry_name, args.tiling.block_dim,
               args.ordered(call) + [out, np.zeros(0, np.uint8), args.tiling.data], soc=call.soc,
               tiling_key=args.tiling.tiling_key if key is None else key)
    return out


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend310P3"])
def test_the_same_shape_rendering_runs_alone(soc: str) -> None:
    # A ragged length (the 310P block writer's back-shifted block) over several cores, and a one-value gradOutput.
    for shapes in (((3, 4099),) * 3, ((), (3, 4099), (3, 4099))):
        alone = _launch("l1_loss_backward", soc, "float16", shapes, same_shape_only=True)
        full = _launch("l1_loss_backward", soc, "float16", shapes, same_shape_only=False)
        assert not (alone.reshape(-1).view(np.uint16) == UNWRITTEN * 0x101).any()  # every element written
        np.testing.assert_array_equal(alone.view(np.uint16), full.view(np.uint16))
    with pytest.raises(KernelFault, match=r"no branch of the kernel serves tiling key 0\b"):
        _launch("l1_loss_backward", soc, "float16", ((3, 4099),) * 3, same_shape_only=True, key=0)
