"""Builds the package after generating attr_rag/v1 from the repository's protos (generate_stubs.py).

The stubs are never committed or edited: every build makes them from the protos of the checkout it runs in.
They are generated when this file is loaded, not in a build step, because pip asks for the package's metadata
first, and setuptools refuses to describe a package (attr_rag.v1) whose directory does not exist yet.
"""
import subprocess
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent

if subprocess.run([sys.executable, str(HERE / "generate_stubs.py")], stdout=sys.stderr).returncode != 0:
    raise SystemExit("attr-rag: generating the gRPC stubs failed (see above); fix that, then install again")

setup()
