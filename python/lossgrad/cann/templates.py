"""Where the CANN project templates live and the Jinja environment that renders them.

The templates are project sources, not package data: ``op_host/`` (OpDef/InferShape/TilingFunc), ``cmake/``
(our config.cmake/func.cmake and the project skeletons) and ``scripts/`` (build.sh) at the repository root.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

PROJECT_ROOT = Path(__file__).resolve().parents[3]


def project_root() -> Path:
    if not (PROJECT_ROOT / "op_host" / "op.cpp.j2").is_file():
        raise FileNotFoundError(f"the CANN project templates (op_host/, cmake/, scripts/) are not under "
                                f"{PROJECT_ROOT}; lossgrad build needs a source checkout (pip install -e .)")
    return PROJECT_ROOT


def source(relpath: str) -> Path:
    path = project_root() / relpath
    if not path.is_file():
        raise FileNotFoundError(f"missing project file {relpath} under {PROJECT_ROOT}")
    return path


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(project_root())), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              autoescape=False)


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)
