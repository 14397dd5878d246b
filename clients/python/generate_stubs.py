#!/usr/bin/python3
"""Generate the Python modules for protos/attr_rag/v1/*.proto into attr_rag/v1/ (git-ignored).

    /usr/bin/python3 clients/python/generate_stubs.py

The package's build runs it (setup.py), so `pip install clients/python` always ships stubs made from the
protos of that checkout; run it by hand only to use the package straight from the source tree. Needs
Debian's python3-grpcio and python3-grpc-tools, hence /usr/bin/python3 rather than whatever `python3` is
first on PATH. Safe to re-run: attr_rag/v1/ is rebuilt in a temporary directory and swapped in.

The proto package is attr_rag.v1, so the generated modules import each other as `attr_rag.v1.x_pb2`: they
live inside this package's own `attr_rag` directory, as its `v1` subpackage.

Why there are two ways to generate:
- Normally grpc_tools' bundled protoc does everything in one call (--python_out and --grpc_python_out).
- Debian bookworm's python3-grpc-tools 1.14.1 bundles protoc 3.5.1, which rejects proto3 `optional`
  (it needs protoc >= 3.15) and would emit pre-3.20 style modules anyway. Then we let a newer compiler
  turn the protos into a FileDescriptorSet (`protoc` >= 3.15 from $PROTOC, PATH or node_modules/protoc,
  else the repo's pinned `buf` from node_modules) and write the *_pb2.py modules ourselves: since
  protobuf 3.20 such a module is nothing but the serialized FileDescriptorProto handed to the runtime's
  builder, so this is what protoc's --python_out writes, without its version banner. Writing them here
  also avoids a newer protoc's output refusing Debian's older protobuf runtime (protoc 26+ adds a
  runtime version check). grpc_tools' old protoc is then only the gRPC plugin host: it reads the same
  descriptor set (--descriptor_set_in), which it can load because it never has to parse `optional`.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PROTO_ROOT = REPO / "protos"
GEN = HERE / "attr_rag" / "v1"
INSTALL_HINT = (
    "install Debian's gRPC packages and run this script with Debian's python:\n"
    "  apt-get install -y python3-grpcio python3-grpc-tools\n"
    f"  /usr/bin/python3 {HERE / 'generate_stubs.py'}"
)
MIN_RELEASE = 15  # protoc 3.15: proto3 `optional` without --experimental_allow_proto3_optional


def fail(message):
    print(f"generate_stubs: {message}", file=sys.stderr)
    sys.exit(1)


def protoc_release(command):
    """Release number of a protoc (3.21.12 -> 21, 25.1 -> 25: after 3.21 protoc dropped the "3."), or 0."""
    try:
        out = subprocess.run([*command, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return 0
    match = re.search(r"(\d+)\.(\d+)", out)
    if not match:
        return 0
    major, minor = int(match[1]), int(match[2])
    return minor if major == 3 else major


def run_grpc_tools(args):
    # In-process, not `python -m grpc_tools.protoc`: that entry point always adds an -I flag, which
    # protoc refuses together with --descriptor_set_in.
    from grpc_tools import protoc

    if protoc.main(["protoc", *args]) != 0:
        fail("grpc_tools protoc failed (its message is above)")


def build_descriptor_set(protos, wkt_dir, path):
    """Compile the protos (imports included, no source info) into a FileDescriptorSet; returns the tool used."""
    candidates = [os.environ.get("PROTOC"), shutil.which("protoc"), REPO / "node_modules/protoc/protoc/bin/protoc"]
    for protoc in candidates:
        if protoc and Path(protoc).is_file() and protoc_release([str(protoc)]) >= MIN_RELEASE:
            cmd = [str(protoc), f"-I{PROTO_ROOT}", f"-I{wkt_dir}", "--include_imports",
                   f"--descriptor_set_out={path}", *protos]
            if subprocess.run(cmd).returncode != 0:
                fail(f"{protoc} failed (its message is above)")
            return str(protoc)
    buf = REPO / "node_modules/.bin/buf"
    if buf.exists():
        cmd = [str(buf), "build", str(PROTO_ROOT), "--as-file-descriptor-set", "--exclude-source-info",
               "-o", str(path)]
        if subprocess.run(cmd).returncode != 0:
            fail("buf build failed (its message is above)")
        return str(buf)
    fail(f"grpc_tools' protoc is older than 3.{MIN_RELEASE} (no proto3 `optional`) and no newer compiler was "
         "found: install protoc >= 3.15 (apt-get install -y protobuf-compiler, or set PROTOC=/path/to/protoc), "
         "or run `npm ci` at the repository root to get buf")


def module_of(proto_name):
    """attr_rag/v1/chunk.proto -> attr_rag.v1.chunk_pb2 (protoc's naming)."""
    return proto_name[: -len(".proto")].replace("/", ".") + "_pb2"


def strip_json_names(messages):
    # protoc leaves json_name out of the descriptor it embeds in Python modules (the runtime derives it);
    # do the same so our modules carry byte-for-byte the descriptor protoc would embed.
    for message in messages:
        for field in message.field:
            field.ClearField("json_name")
        strip_json_names(message.nested_type)


def write_pb2_modules(descriptor_set_path, protos, out):
    from google.protobuf import descriptor_pb2

    fds = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set_path.read_bytes())
    for file in fds.file:
        if file.name not in protos:
            continue  # well-known types and other imports ship with their own modules
        file.ClearField("source_code_info")
        strip_json_names(file.message_type)
        lines = [
            f"# Generated by clients/python/generate_stubs.py from {file.name}. DO NOT EDIT.",
            "# Same content as protoc's --python_out (protobuf >= 3.20): the file's descriptor and the builder.",
            "from google.protobuf import descriptor_pool as _descriptor_pool",
            "from google.protobuf.internal import builder as _builder",
        ]
        # Dependencies must be in the descriptor pool before this file is added to it.
        for i, dep in enumerate(file.dependency):
            package, _, name = module_of(dep).rpartition(".")
            lines.append(f"from {package} import {name} as _dep{i}  # noqa: F401")
        for i in file.public_dependency:  # `import public`: re-export, as protoc does
            lines.append(f"from {module_of(file.dependency[i])} import *  # noqa: F401,F403")
        serialized = file.SerializeToString(deterministic=True)
        lines += [
            f"DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile({serialized!r})",
            "_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, globals())",
            f"_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, {module_of(file.name)!r}, globals())",
        ]
        target = out / (module_of(file.name).replace(".", "/") + ".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n")
    return [f.name for f in fds.file if f.name in protos and f.service]


def main():
    try:
        import grpc  # noqa: F401 -- the client needs it; say so now rather than at its first run
        import grpc_tools
        from google.protobuf.internal import builder  # noqa: F401 -- protobuf >= 3.20
    except ImportError as error:
        fail(f"cannot import the gRPC/protobuf tools ({error});\n{INSTALL_HINT}")
    protos = sorted(p.relative_to(PROTO_ROOT).as_posix() for p in PROTO_ROOT.glob("attr_rag/v1/*.proto"))
    if not protos:
        fail(f"no .proto files under {PROTO_ROOT / 'attr_rag/v1'}")
    wkt_dir = Path(grpc_tools.__file__).parent / "_proto"  # google/protobuf/*.proto, if ever imported

    out = Path(tempfile.mkdtemp(prefix=".gen-", dir=HERE))  # beside GEN, so the rename stays on one file system
    try:
        release = protoc_release([sys.executable, "-m", "grpc_tools.protoc"])
        if release >= MIN_RELEASE:
            run_grpc_tools([f"-I{PROTO_ROOT}", f"-I{wkt_dir}", f"--python_out={out}", f"--grpc_python_out={out}",
                            *protos])
            how = f"grpc_tools' protoc (release {release})"
        else:
            descriptor_set = out / "attr_rag.binpb"
            tool = build_descriptor_set(protos, wkt_dir, descriptor_set)
            with_services = write_pb2_modules(descriptor_set, protos, out)
            run_grpc_tools([f"--descriptor_set_in={descriptor_set}", f"--grpc_python_out={out}", *with_services])
            descriptor_set.unlink()
            how = f"messages from {tool} + this script, services from grpc_tools' gRPC plugin"
        (out / "attr_rag" / "v1" / "__init__.py").write_text("# Generated by clients/python/generate_stubs.py. DO NOT EDIT.\n")
        shutil.rmtree(GEN, ignore_errors=True)
        (out / "attr_rag" / "v1").rename(GEN)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    count = len(list(GEN.rglob("*.py")))
    print(f"generate_stubs: wrote {count} modules to {GEN} ({how})")


if __name__ == "__main__":
    main()
