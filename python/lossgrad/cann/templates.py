"""The Jinja environment that renders the CANN project templates: ``op_host/`` (OpDef/InferShape/TilingFunc),
``cmake/`` (our config.cmake/func.cmake and the project skeletons) and ``scripts/`` (build.sh), found by
lossgrad.project_files (the checkout, or the copy a wheel carries).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

from ..project_files import project_root


def source(relpath: str) -> Path:
    path = project_root() / relpath
    if not path.is_file():
        raise FileNotFoundError(f"missing project file {relpath} under {project_root()}")
    return path


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(project_root())), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              autoescape=False)


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)
