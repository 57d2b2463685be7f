"""Only a build hook; all metadata is in pyproject.toml.

A wheel must carry the kernel templates and the CANN project sources, which live beside the package (op_kernel/,
op_host/, cmake/, scripts/ at the repository root, the project's fixed layout). build_py copies them into
lossgrad/_project, where lossgrad.project_files finds them when there is no checkout.
"""
import runpy
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
FILES = runpy.run_path(str(HERE / "python" / "lossgrad" / "project_files.py"))


class BuildPyWithProjectSources(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout itself
            return
        bundle = Path(self.build_lib) / "lossgrad" / FILES["BUNDLE_NAME"]
        for name in FILES["PROJECT_DIRS"]:
            shutil.copytree(HERE / name, bundle / name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithProjectSources})
