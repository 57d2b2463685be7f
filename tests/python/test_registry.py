"""The registry is the only place per-op facts live, and it is internally consistent.

Part 1 scans the package's code (string constants, tuple/list/set/dict displays and divisions; docstrings and
comments are prose and are not scanned) for per-op facts restated outside registry.py: op names and kernel names,
attribute names of the aclnn/kernel APIs, dtype support lists, product-line support tables, MSE's numerator-2 and
batchmean's dim-0 divisions. Part 2 checks the registry entries against each other, the SoC table, the golden's
signatures and the spec's quick-comparison table (ops_semantics §7).
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import pytest

import lossgrad.golden as golden
from lossgrad import socs
from lossgrad.dtypes import KERNEL_DTYPES, DType
from lossgrad.registry import (ALL_LINES, INPUT_ROLES, OPS, ROLE, Check, Divisor, EmptyRule, OpFolderError, OpSpec,
                               OutputShape, Promotion, Reduction, _check_inputs, get_op)

PACKAGE = Path(golden.__file__).resolve().parents[1]
REGISTRY = PACKAGE / "registry.py"
OPSPEC = PACKAGE / "opspec.py"  # the vocabulary op folders declare with (and the shared dtype tables)
FLOAT_MEMBERS = {"FLOAT32", "FLOAT16", "BFLOAT16"}


def _per_op_words() -> dict[str, set[str]]:
    """Identifiers that name one op (or an attribute of some ops) and so belong to the registry only: each word ->
    the ops it names (several for an attribute they share: KL's and KlDivTarget's logTarget)."""
    words: dict[str, set[str]] = {}
    for op in OPS.values():
        named = {op.name, op.aclnn, op.cann_op_type, op.custom_op_type, op.entry_name}
        named |= {w for a in op.attrs for w in {a.aclnn_name, a.kernel_attr} - {a.name}}
        for word in named:
            words.setdefault(word, set()).add(op.name)
    return words


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _is_dtype_member(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in FLOAT_MEMBERS and \
        isinstance(node.value, ast.Name) and node.value.id == "DType"


def _is_dim0(node: ast.AST) -> bool:
    """x.shape[0], shape[0], x.size(0)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
        v = node.value
        return (isinstance(v, ast.Attribute) and v.attr == "shape") or (isinstance(v, ast.Name) and "shape" in v.id)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0)


def _exempt_nodes(tree: ast.AST) -> set[int]:
    """Docstrings, the strings of `__all__` (public function names), and membership tests (`d in (A, B)`)."""
    ids = _docstring_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            ids.update(id(n) for n in ast.walk(node.value))
        elif isinstance(node, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops):
            ids.update(id(n) for n in node.comparators)
    return ids


def _mentions(text: str, word: str) -> bool:
    inner = "A-Za-z0-9_" if ("_" in word or word.islower()) else "A-Za-z0-9"  # snake_case words include "_"
    return re.search(rf"(?<![{inner}]){re.escape(word)}(?![{inner}])", text) is not None


def violations(source: str, filename: str, own_op: str | None = None) -> list[str]:
    """Per-op facts in `source`; `own_op`: the file is in that op's folder, which may state its own op's facts."""
    tree = ast.parse(source, filename)
    exempt = _exempt_nodes(tree)
    words = {w: ", ".join(sorted(ops)) for w, ops in _per_op_words().items() if own_op not in ops}
    found = []
    for node in ast.walk(tree):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if id(node) in exempt:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for word, op in words.items():
                if _mentions(node.value, word):
                    found.append(f"{where}: {word!r} ({op}) in a string")
        elif own_op is not None:
            continue  # an op folder states its op's support tables and coefficients
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            if sum(_is_dtype_member(e) for e in node.elts) >= 2 and not filename.endswith("dtypes.py"):
                found.append(f"{where}: a dtype support list")
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if len(keys & set(ALL_LINES)) >= 2 and all(isinstance(v, ast.Constant) and isinstance(v.value, bool)
                                                       for v in node.values):
                found.append(f"{where}: a product-line support table")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv)):
            if isinstance(node.left, ast.Constant) and node.left.value == 2:
                found.append(f"{where}: a numerator-2 division (MSE's coefficient)")
            if _is_dim0(node.right):
                found.append(f"{where}: a division by dim 0 (batchmean's divisor)")
    return found


def _own_op(path: Path) -> str | None:
    """The op whose folder (lossgrad/ops/<short name>/) holds `path`, if any."""
    rel = path.relative_to(PACKAGE).parts
    if len(rel) > 2 and rel[0] == "ops":
        return next(op.name for op in OPS.values() if op.template == rel[1])
    return None


def test_no_per_op_facts_outside_the_op_folders() -> None:
    files = sorted(p for p in PACKAGE.rglob("*.py") if p not in (REGISTRY, OPSPEC))
    assert len(files) >= 5
    found = [v for p in files for v in violations(p.read_text(), str(p.relative_to(PACKAGE)), _own_op(p))]
    assert not found, "per-op facts restated outside the op's folder:\n" + "\n".join(found)


@pytest.mark.parametrize("snippet, what", [
    ('NAME = "aclnnMseLossBackward"', "aclnnMseLossBackward"),
    ('k = f"{x}_L1LossGrad"', "L1LossGrad"),
    ('attrs = {"sigma": 1.0}', "sigma"),
    ('if op == "kl_div_backward": pass', "kl_div_backward"),
    ("SUPPORT = (DType.FLOAT32, DType.FLOAT16)", "dtype support list"),
    ('LINES = {"950": True, "310P": False}', "product-line support table"),
    ("c = 2.0 / n", "numerator-2"),
    ("c = 1 / x.shape[0]", "dim 0"),
])
def test_the_scanner_finds_planted_facts(snippet: str, what: str) -> None:
    found = violations(snippet, "planted.py")
    assert found and what in found[0]


def test_the_scanner_ignores_prose_and_generic_code() -> None:
    clean = ('"""Docstring naming aclnnL1LossBackward and 2 / N."""\nx = n / 2  # comment: L1LossGrad\ny = 2 * n / c\n'
             '__all__ = ["l1_loss_backward"]\nif d in (DType.FLOAT16, DType.BFLOAT16): pass\nz = "my_sigma_x"\n')
    assert violations(clean, "clean.py") == []


# -- registry consistency ---------------------------------------------------------------------------------------------

def test_entries_and_lookup() -> None:
    from lossgrad.registry import OPS_DIR
    folders = {p.name for p in OPS_DIR.iterdir() if (p / "__init__.py").is_file()}
    assert {op.template for op in OPS.values()} == folders  # every op folder is an entry, and nothing else
    assert [op.order for op in OPS.values()] == sorted(op.order for op in OPS.values())
    for key, op in OPS.items():
        assert key == op.name
        for alias in (op.name, op.aclnn, op.custom_op_type, op.cann_op_type, op.template, f" {op.name} "):
            assert get_op(alias) is op
        assert get_op(op) is op
    with pytest.raises(KeyError):
        get_op("huber_loss_backward")


@pytest.mark.parametrize("field", ["aclnn", "cann_op_type", "custom_op_type", "template", "entry_name"])
def test_names_are_unique(field: str) -> None:
    values = [getattr(op, field) for op in OPS.values()]
    assert len(set(values)) == len(values)


@pytest.mark.parametrize("op", OPS.values(), ids=list(OPS))
def test_entry_names(op) -> None:
    assert op.aclnn.startswith("aclnn") and op.aclnn.endswith("Backward")
    assert op.custom_op_type.endswith("Custom") and op.custom_op_type != op.cann_op_type
    assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", op.entry_name), op.entry_name
    assert op.entry_name.replace("_", "") == op.custom_op_type.lower()


@pytest.mark.parametrize("op", OPS.values(), ids=list(OPS))
def test_aclnn_parameter_order(op) -> None:
    p = op.aclnn_params
    n = len(op.inputs)
    assert p[0].startswith("grad") and p[1:3] == ("self", "target") and p[n] == "reduction"
    assert all(i.optional for i in op.inputs[3:]) and p[3:n] == tuple(i.aclnn for i in op.inputs[3:])
    assert p[n + 1:-1] == tuple(a.aclnn_name for a in op.attrs)
    assert p[-1] == op.output_param and op.output_param in ("gradInput", "out", "gradTarget")
    assert set(op.rank_checked) <= set(p[:n]) | {op.output_param}


@pytest.mark.parametrize("op", OPS.values(), ids=list(OPS))
def test_inputs_declare_each_kernel_input_once(op) -> None:
    # the kernel's order comes from the declaration: positions 0..n-1, protos unique, every role once
    assert [io.proto for io in op.kernel_inputs] == [
        i.proto for i in sorted(op.inputs, key=lambda i: i.kernel_index)]
    assert len({io.proto for io in op.kernel_inputs}) == len(op.inputs)
    assert sorted(io.role for io in op.kernel_inputs) == sorted(op.roles)
    assert set(op.roles) <= set(INPUT_ROLES)
    assert op.aclnn_broadcasts == tuple(i.role for i in op.inputs if i.aclnn_broadcast)
    assert op.kernel_reads_self == op.input("self").values_read


def _declaring(op, **changes) -> OpSpec:
    return dataclasses.replace(op, **changes)


@pytest.mark.parametrize("inputs, message", [
    (lambda ins: ins[:2], "must declare the roles grad, self, target once each"),
    (lambda ins: ins + (dataclasses.replace(ins[0], role="bias", kernel_index=3),), "once each"),
    (lambda ins: ins + (dataclasses.replace(ins[1], kernel_index=3),), "once each"),
    (lambda ins: ins + (dataclasses.replace(ins[0], role="weight", kernel_index=3, optional=True),),
     "must say what their absence means"),
    (lambda ins: ins + (dataclasses.replace(ins[0], role="weight", kernel_index=3),), "must be"),
    (lambda ins: (dataclasses.replace(ins[0], kernel_index=1),) + ins[1:], "kernel_index values must be 0..2"),
    (lambda ins: (dataclasses.replace(ins[0], optional=True, absent="ones"),) + ins[1:], "cannot be optional"),
])
def test_an_input_declaration_the_machinery_cannot_serve_is_an_op_folder_error(inputs, message) -> None:
    op = next(iter(OPS.values()))
    with pytest.raises(OpFolderError, match=message) as err:
        _check_inputs(op.template, _declaring(op, inputs=inputs(op.inputs)))
    assert f"python/lossgrad/ops/{op.template}/: __init__.py" in str(err.value)


def test_an_unknown_role_is_named() -> None:
    op = next(iter(OPS.values()))
    with pytest.raises(KeyError, match="has no 'weight' input"):
        op.input("weight")


@pytest.mark.parametrize("op", OPS.values(), ids=list(OPS))
def test_golden_signature_mirrors_aclnn(op) -> None:
    params = list(inspect.signature(getattr(golden, op.name)).parameters.values())
    positional = [q.name for q in params if q.kind is q.POSITIONAL_OR_KEYWORD]
    optional = [ROLE[i.role].param for i in op.inputs if i.optional]
    assert positional == ["grad_output", "self", "target", *optional, "reduction"] + [a.name for a in op.attrs]
    assert all(q.default is None for q in params if q.name in optional)
    defaults = {q.name: q.default for q in params}
    assert defaults["reduction"] == "mean"
    for a in op.attrs:
        assert defaults[a.name] == a.default
    assert {"out_dtype", "soc", "compute"} <= {q.name for q in params if q.kind is q.KEYWORD_ONLY}


@pytest.mark.parametrize("op", OPS.values(), ids=list(OPS))
def test_every_product_line_and_arch(op) -> None:
    assert set(op.docs_support) == set(op.ours_support) == set(ALL_LINES) == set(socs.product_lines())
    assert set(op.dtype_support) == set(socs.ARCHS)
    for arch_id, dts in op.dtype_support.items():
        assert set(dts) <= set(KERNEL_DTYPES)
        if dts:  # an empty list: aclnn refuses every dtype there (KlDivTarget on 310P and 910)
            assert {DType.FLOAT32, DType.FLOAT16} <= set(dts)
            assert (DType.BFLOAT16 in dts) == socs.ARCHS[arch_id].bf16_io  # bf16 where the arch can move/cast it
    for soc in socs.SOCS.values():  # we run the op exactly where aclnn accepts a dtype
        assert bool(op.supported_dtypes(soc.arch.npu_arch)) == op.ours_support[soc.line], (soc.name, op.name)


@pytest.mark.parametrize("op", OPS.values(), ids=list(OPS))
def test_checks_agree_with_the_other_fields(op) -> None:
    c = op.checks
    assert c[0] is Check.NULL and Check.RANK in c and len(set(c)) == len(c)
    assert (Check.REDUCTION in c) == op.reduction_validated
    assert (Check.BETA in c) == any(a.minimum is not None for a in op.attrs)
    assert (Check.KL_SHAPES in c) == (op.reduced_onto is not None)
    assert (Check.BROADCAST_ALL in c) == (op.output_shape is OutputShape.BROADCAST_ALL)
    dtype_check = {Promotion.PROMOTE_ALL: Check.PROMOTE, Promotion.SAME_AS_SELF: Check.SAME_DTYPE,
                   Promotion.EACH_SUPPORTED: Check.EACH_SUPPORTED}[op.promotion]
    assert dtype_check in c
    # an op whose out dtype must be target's allocates it so; otherwise aclnn's compute dtype or self's
    assert (op.default_out_dtype == "target") == (Check.OUT_TARGET_DTYPE in c)
    if op.default_out_dtype != "target":
        assert op.default_out_dtype == ("promoted" if op.aclnn_compute == "promoted" else "self")
    # target's shape equal to self's is a stricter form of "into self"
    assert Check.TARGET_IS_SELF not in c or c.index(Check.TARGET_IS_SELF) < c.index(Check.INTO_SELF)


@pytest.mark.parametrize("op", OPS.values(), ids=list(OPS))
def test_reductions_and_divisors(op) -> None:
    assert {Reduction.NONE, Reduction.MEAN, Reduction.SUM} <= set(op.reductions)
    assert (Reduction.BATCHMEAN in op.reductions) == (op.batchmean_divisor is not None)
    assert op.mean_divisor is not None and op.coefficient > 0
    assert (op.empty_rule is EmptyRule.SELF_ONLY) == (op.reduced_onto is not None)
    # an op whose shape checks aclnn skips for an empty self is an op whose inputs broadcast into self
    assert (op.empty_rule is EmptyRule.SELF_SKIPS_SHAPES) == (Check.INTO_SELF in op.checks)
    assert (Check.INTO_SELF in op.checks) == (op.output_shape is OutputShape.SELF_ABSORBING)
    assert sorted(io.role for io in op.kernel_inputs) == sorted(op.roles)
    assert op.formula and any("ops_semantics.md §" in s for s in op.sources)


# the spec's quick-comparison row of each op (ops_semantics §7, new_ops_semantics), restated in the op folder's
# test_facts.SPEC_ROW on purpose as an independent check

@pytest.mark.parametrize("name", list(OPS))
def test_registry_matches_the_spec_table(name: str) -> None:
    from lossgrad.registry import op_part
    op = OPS[name]
    coef, mean, batchmean, kernel_inputs, validated, empty = op_part(op, "test_facts").SPEC_ROW
    assert (op.coefficient, op.mean_divisor, op.batchmean_divisor) == \
        (coef, Divisor[mean], None if batchmean is None else Divisor[batchmean])
    assert tuple(io.proto for io in op.kernel_inputs) == kernel_inputs
    assert op.reduction_validated == validated and op.empty_rule is EmptyRule[empty]


def _doc_row(label: str) -> list[str]:
    doc = (PACKAGE.parents[1] / "docs" / "semantics.md").read_text()
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].startswith(label):
            return cells[1:]
    raise AssertionError(f"row {label!r} not in docs/semantics.md")


def test_docs_semantics_table_matches_the_registry() -> None:
    products = _doc_row("aclnn doc products")
    coefficients = _doc_row("c (none, sum)")
    assert len(products) == len(coefficients) == len(OPS)
    batchmean = _doc_row("c (batchmean)")
    out_dtypes = _doc_row("Default out dtype")
    header = next(line for line in (PACKAGE.parents[1] / "docs" / "semantics.md").read_text().splitlines()
                  if line.startswith("| |"))
    assert [c.strip() for c in header.strip().strip("|").split("|")][1:] == \
        [op.aclnn.removeprefix("aclnn") for op in OPS.values()]
    assert len(products) == len(batchmean) == len(out_dtypes) == len(OPS)
    for op, marks, coef, bm, out in zip(OPS.values(), products, coefficients, batchmean, out_dtypes):
        lines = ("950", "A3", "A2", "310P", "910")
        assert marks.split() == ["✓" if op.docs_support[line] else "✗" for line in lines]
        assert float(coef) == op.coefficient
        assert (bm == "rejected") == (Reduction.BATCHMEAN not in op.reductions), (op.name, bm)
        assert out == {"promoted": "promoted", "self": "s's", "target": "t's"}[op.default_out_dtype], (op.name, out)


def test_one_op_name_resolver_accepts_every_name_in_any_case() -> None:
    from lossgrad.registry import get_op, op_names

    for op in OPS.values():
        for name in op_names(op):
            assert get_op(name) is op and get_op(name.upper()) is op and get_op(f" {name} ") is op
    assert [get_op(op.template).name for op in OPS.values()] == list(OPS)  # the short name is the folder's
    all_names = [n.lower() for op in OPS.values() for n in set(op_names(op))]
    assert len(all_names) == len(set(all_names))  # no name means two ops


def test_unknown_op_names() -> None:
    from lossgrad.registry import get_op

    for bad in ("", "l2", "kl_div_backwards", "L1LossBackward"):
        with pytest.raises(KeyError, match="unknown op"):
            get_op(bad)


def test_kernel_dtypes_cast_only_non_float_inputs() -> None:
    from lossgrad.registry import kernel_dtypes

    F, H, B, I = DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16, DType.INT32
    assert kernel_dtypes({"grad": I, "self": H, "target": H}, F) == {"grad": H, "self": H, "target": H, "out": F}
    assert kernel_dtypes({"grad": H, "self": B, "target": F}, H) == {"grad": H, "self": B, "target": F, "out": H}


# -- tests iterate the registry ------------------------------------------------------------------------------------
# A test file may name one op (a call pinned to that op's behaviour), but never list ops or branch on an op: test
# selections come from OPS and the specs' fields, op-specific test facts from the op folders' test_facts.py.

TESTS = PACKAGE.parents[1] / "tests"


def _op_words_in(text: str) -> set[str]:
    """The ops a string names: any name of the op in any case, or its short name (the folder) in lower case."""
    found = set()
    lower = text.lower()
    for op in OPS.values():
        long_names = {n.lower() for n in (op.name, op.aclnn, op.custom_op_type, op.cann_op_type, op.entry_name)}
        if any(re.search(rf"(?<![a-z0-9_]){re.escape(n)}(?![a-z0-9_])", lower) for n in long_names) or \
                re.search(rf"(?<![A-Za-z0-9_]){re.escape(op.template)}(?![A-Za-z0-9_])", text):
            found.add(op.name)
    return found


def _str_ops(node: ast.AST) -> set[str]:
    return _op_words_in(node.value) if isinstance(node, ast.Constant) and isinstance(node.value, str) else set()


def op_list_violations(source: str, filename: str) -> list[str]:
    """Op lists (a display, or one string, naming two or more ops) and per-op branches (a condition comparing with
    an op's name or a registry entry) in a test file."""
    tree = ast.parse(source, filename)
    docstrings = _docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if id(node) in docstrings:
            continue
        elts = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else \
            [k for k in node.keys if k is not None] if isinstance(node, ast.Dict) else None
        if elts is not None:
            named = set().union(set(), *(_str_ops(e) for e in elts))
            if len(named) >= 2:
                found.append(f"{where}: an op list ({', '.join(sorted(named))})")
        elif isinstance(node, ast.Constant) and len(_str_ops(node)) >= 2:
            found.append(f"{where}: a string naming ops {sorted(_str_ops(node))}")
        elif isinstance(node, (ast.If, ast.IfExp, ast.While, ast.comprehension)):
            for test in (node.ifs if isinstance(node, ast.comprehension) else [node.test]):
                for sub in ast.walk(test):
                    if not isinstance(sub, ast.Compare):
                        continue
                    sides = [sub.left, *sub.comparators]
                    if any(_str_ops(x) for x in sides) or any(
                            isinstance(x, ast.Name) and x.id.isupper() and x.id.endswith("_BACKWARD") for x in sides):
                        found.append(f"{where}: a per-op branch")
    return found


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def test_tests_do_not_hard_code_ops() -> None:
    found = []
    for p in _test_files():
        rel = str(p.relative_to(TESTS.parent))
        if p != Path(__file__).resolve():  # this file plants examples
            found += op_list_violations(p.read_text(), rel)
    assert len(_test_files()) > 50
    assert not found, "op lists or per-op branches in tests (iterate registry.OPS; put op facts in the op " \
                      "folder's test_facts.py):\n" + "\n".join(found)


@pytest.mark.parametrize("snippet, what", [
    ('OPS = ["l1_loss_backward", "mse_loss_backward"]', "op list"),
    ('@pytest.mark.parametrize("op", ["l1", "kl_div"])\ndef f(op): pass', "op list"),
    ('T = {"L1LossGradCustom": 1, "aclnnKlDivBackward": 2}', "op list"),
    ('args = ["build", "--ops", "l1,kl_div"]', "string naming ops"),
    ('if op == "kl_div_backward": pass', "per-op branch"),
    ('x = 1 if name != "smooth_l1" else 2', "per-op branch"),
    ('y = [c for c in cases if c.op == "mse_loss_backward"]', "per-op branch"),
    ('if spec is KL_DIV_BACKWARD: pass', "per-op branch"),
])
def test_the_test_scanner_finds_planted_op_lists(snippet: str, what: str) -> None:
    found = op_list_violations(snippet, "planted_test.py")
    assert any(what in f for f in found), found


def test_the_test_scanner_allows_one_op_and_generic_code() -> None:
    clean = ('"""Docstring naming l1_loss_backward and kl_div_backward."""\n'
             'out = lossgrad.kl_div_backward(g, s, t)\n'
             'r = run(["verify", "--op", "mse"])\n'
             'ops = [n for n, o in OPS.items() if o.output_shape is OutputShape.SELF]\n'
             'CORPUS = {"L1": 1, "KL": 2, "MSE": 3}\n'
             'if op.template == name: pass\n')
    assert op_list_violations(clean, "clean_test.py") == []
