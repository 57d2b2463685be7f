"""The split choice for a row-broadcast input (docs/tiling.md, Split): the column split reads the broadcast row once
in all; the flat split, one row more per core. Which one a call gets, on the parts where it matters."""
from __future__ import annotations

import numpy as np
import pytest

from lossgrad import tiling
from lossgrad.tiling import data as td
from lossgrad.validation import validate


def _split(soc: str, rows: int, cols: int, dtype: str = "float32", op: str = "mse") -> int:
    full = np.broadcast_to(np.zeros((), dtype), (rows, cols))  # shapes only: no memory
    row = np.broadcast_to(np.zeros((), dtype), (cols,))
    return tiling.plan_call(validate(op, full, full, row, "none", soc=soc)).fields["splitMode"]


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend910_9391", "Ascend910A"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_narrow_column_pieces_give_way_to_the_flat_split(soc: str, dtype: str) -> None:
    """4096-wide rows cut for 32-48 cores are 170-512 bytes a core: the flat split streams whole rows instead."""
    assert _split(soc, 1024, 4096, dtype) == td.SPLIT_FLAT


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_310p_keeps_its_column_pieces_of_a_kilobyte_or_more(dtype: str) -> None:
    """8 cores: a 4096-wide row is 2 KB (float32) or 1 KB (float16) a core, wide enough for the column split."""
    assert _split("Ascend310P3", 1024, 4096, dtype) == td.SPLIT_COLUMN


def test_few_rows_keep_the_column_split() -> None:
    """The flat split's extra reads (one row a core) would be a large share of a call of few rows."""
    assert _split("Ascend910B1", 64, 4096) == td.SPLIT_COLUMN          # 48 cores x 4096 x 8 > 64 x 4096
    assert _split("Ascend910B1", 8 * 48, 4096) == td.SPLIT_FLAT        # the threshold: exactly 1/8


def test_ragged_rows_keep_the_column_split() -> None:
    """A row off the 32-byte block, cut at a core's range end, would have its pieces loaded apart."""
    assert _split("Ascend910B1", 999, 4099) == td.SPLIT_COLUMN
    assert _split("Ascend910A", 999, 1003) == td.SPLIT_COLUMN
    assert _split("Ascend910B1", 999, 4096) == td.SPLIT_FLAT  # the same rows, whole blocks


def test_rows_longer_than_a_tile_always_split_by_columns() -> None:
    assert _split("Ascend910B1", 256, 1 << 20) == td.SPLIT_COLUMN


def _klt_segments(soc: str, rows: tuple[int, ...], cols: int, dtype: str) -> int:
    full = np.broadcast_to(np.zeros((), dtype), (*rows, cols))
    target = np.broadcast_to(np.zeros((), dtype), (cols,))
    return tiling.plan_call(validate("kl_div_target", full, full, target, "none", soc=soc)).fields["segments"]


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend950PR_9579"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_row_sums_of_narrow_column_pieces_take_segments(soc: str, dtype: str) -> None:
    """KlDivTarget summing (32, 1024, 1024) onto (1024,): the column split gives each core 21 columns (42-84 bytes)
    of every row; segments of rows, at the same number of busy cores, modelled 2.57x -> 1.28x the roofline
    (910B1 float16) and 3.68x -> 2.13x (950). Rows of 4096 (170 bytes a core in float16) keep the columns, which
    modelled faster there (22.1 against 27.2 us at 4 Mi elements, 910B1)."""
    assert _klt_segments(soc, (32, 1024), 1024, dtype) > 1
    assert _klt_segments(soc, (8192,), 4096, "float16") == 1
