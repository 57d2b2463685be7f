"""The kernels' tiling-key dispatch fails loudly on a key no branch serves (op_kernel/kernel.cpp.j2).

A launch with a key the kernel has no branch for would otherwise return with the output unwritten. On the twin it is
a KernelFault naming the key; on a device AscendC::Trap() (asc-devkit docs/zh Trap.md). The keys the tiling
produces are exactly the kernel's branches (codegen.tiling_keys), so every plan is served.
"""
from __future__ import annotations

import numpy as np
import pytest

from lossgrad import codegen
from lossgrad.dtypes import DType
from lossgrad.registry import OPS
from lossgrad.runners.kernel_args import prepare
from lossgrad.runners.twin import UNWRITTEN
from lossgrad.twin import KernelFault, run_kernel
from lossgrad.twin.build import cache_root
from lossgrad.validation import validate


def _launch(op: str, soc: str, key: int, shapes: tuple[tuple[int, ...], ...]) -> np.ndarray:
    rng = np.random.default_rng(0)
    call = validate(op, *(rng.random(s, dtype=np.float32) for s in shapes), "sum", soc=soc)
    args = prepare(call)
    source = codegen.cached_kernel(call.op, args.dtypes, cache_root())
    out = np.empty(call.out_shape, dtype=np.float32)
    out.reshape(-1).view(np.uint8)[:] = UNWRITTEN
    run_kernel(source, call.op.entry_name, args.tiling.block_dim,
               args.ordered(call) + [out, np.zeros(0, np.uint8), args.tiling.data], soc=call.soc, tiling_key=key)
    return out


@pytest.mark.parametrize("op,soc,bad_key", [
    ("l1_loss_backward", "Ascend910B1", 2),      # a KL key: L1 has no reduction branch
    ("kl_div_backward", "Ascend310P3", 6),  # a reduction on the same-shape path: no such branch
    ("mse_loss_backward", "Ascend910A", 1 << 40),
])
def test_unserved_tiling_key_faults_naming_the_key(op: str, soc: str, bad_key: int) -> None:
    shapes = ((64, 32), (64, 32), (64, 32))
    assert bad_key not in codegen.tiling_keys(op)
    good = _launch(op, soc, 0, shapes)  # the same launch with a served key runs and writes every element
    assert not np.isnan(good).any()
    with pytest.raises(KernelFault, match=rf"TILING_KEY_IS: no branch of the kernel serves tiling key {bad_key}\b"):
        _launch(op, soc, bad_key, shapes)


def test_every_rendered_kernel_checks_its_dispatch() -> None:
    for op in OPS.values():
        src = codegen.render_kernel(op, {r: DType.FLOAT32 for r in codegen.kernel_roles(op)})
        assert src.count("served = true;") == len(codegen.tiling_keys(op))
        assert "if (!served)" in src and "lossgrad::UnservedTilingKey();" in src
        assert "} else {" not in src.split("bool served = false;")[1]  # TILING_KEY_IS takes no else branch
