"""Build step of sdnperf-p4rt: prints the P4Runtime protobuf definitions as a serialized
google.protobuf.FileDescriptorSet, taken from an installed Python package that ships them
(finsy's bundled protos, else the `p4runtime` package). Nothing is copied into the repo."""
import os
import sys

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
from google.protobuf import descriptor_pb2  # noqa: E402

try:
    # load finsy's generated modules without running finsy/__init__ (which needs grpc etc.)
    import importlib.util
    import types

    _spec = importlib.util.find_spec("finsy")
    _base = _spec.submodule_search_locations[0]
    for _name, _path in (("finsy", _base), ("finsy.proto", _base + "/proto")):
        _m = types.ModuleType(_name)
        _m.__path__ = [_path]
        sys.modules[_name] = _m
    from finsy.proto.p4.v1 import p4runtime_pb2
    from finsy.proto.p4.config.v1 import p4info_pb2
    source = "finsy"
except Exception:  # pragma: no cover - fallback package
    from p4.v1 import p4runtime_pb2
    from p4.config.v1 import p4info_pb2
    source = "p4runtime"

fds = descriptor_pb2.FileDescriptorSet()
seen = set()


def add(fd):
    if fd.name in seen:
        return
    seen.add(fd.name)
    for dep in fd.dependencies:
        add(dep)
    proto = descriptor_pb2.FileDescriptorProto()
    fd.CopyToProto(proto)
    fds.file.append(proto)


add(p4runtime_pb2.DESCRIPTOR)
add(p4info_pb2.DESCRIPTOR)
sys.stderr.write("p4runtime protos from %s: %s\n" % (source, ", ".join(sorted(seen))))
sys.stdout.buffer.write(fds.SerializeToString())
