"""Builds the package after generating attr_rag/v1 from the repository's protos (generate_stubs.py).

The stubs are never committed or edited: every build makes them from the protos of the checkout it runs in.
"""
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class GenerateThenBuild(build_py):
    def run(self):
        generator = HERE / "generate_stubs.py"
        if subprocess.run([sys.executable, str(generator)]).returncode != 0:
            raise SystemExit(f"attr-rag: generating the gRPC stubs failed (see above); fix that, then install again")
        super().run()


setup(cmdclass={"build_py": GenerateThenBuild})
