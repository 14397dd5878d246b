"""The Attr-RAG API built at run time from the server's gRPC reflection: no generated code, no .proto files.

Asks grpc.reflection.v1 which services the server runs and for the files that define them (each with its
imports), loads those FileDescriptorProtos into a fresh descriptor pool and makes message classes from it,
which is what grpcurl or buf curl do. Debian's python3-grpcio has no grpc_reflection package, so the few
reflection messages themselves are described here, from grpc/reflection/v1/reflection.proto.
"""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.internal import enum_type_wrapper

REFLECTION_METHOD = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"

_F = descriptor_pb2.FieldDescriptorProto


def _field(name, number, kind, type_name=None, repeated=False, oneof=None):
    field = _F(name=name, number=number, type=kind,
               label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if type_name:
        field.type_name = ".grpc.reflection.v1." + type_name
    if oneof is not None:
        field.oneof_index = oneof
    return field


def _reflection_file():
    """grpc/reflection/v1/reflection.proto's messages (the parts a client sends and reads)."""
    f = descriptor_pb2.FileDescriptorProto(name="grpc/reflection/v1/reflection.proto",
                                           package="grpc.reflection.v1", syntax="proto3")
    S, B, I, M = _F.TYPE_STRING, _F.TYPE_BYTES, _F.TYPE_INT32, _F.TYPE_MESSAGE
    f.message_type.add(name="ExtensionRequest", field=[_field("containing_type", 1, S), _field("extension_number", 2, I)])
    req = f.message_type.add(name="ServerReflectionRequest", field=[
        _field("host", 1, S),
        _field("file_by_filename", 3, S, oneof=0),
        _field("file_containing_symbol", 4, S, oneof=0),
        _field("file_containing_extension", 5, M, "ExtensionRequest", oneof=0),
        _field("all_extension_numbers_of_type", 6, S, oneof=0),
        _field("list_services", 7, S, oneof=0),
    ])
    req.oneof_decl.add(name="message_request")
    f.message_type.add(name="FileDescriptorResponse", field=[_field("file_descriptor_proto", 1, B, repeated=True)])
    f.message_type.add(name="ExtensionNumberResponse", field=[_field("base_type_name", 1, S), _field("extension_number", 2, I, repeated=True)])
    f.message_type.add(name="ServiceResponse", field=[_field("name", 1, S)])
    f.message_type.add(name="ListServiceResponse", field=[_field("service", 1, M, "ServiceResponse", repeated=True)])
    f.message_type.add(name="ErrorResponse", field=[_field("error_code", 1, I), _field("error_message", 2, S)])
    res = f.message_type.add(name="ServerReflectionResponse", field=[
        _field("valid_host", 1, S),
        _field("original_request", 2, M, "ServerReflectionRequest"),
        _field("file_descriptor_response", 4, M, "FileDescriptorResponse", oneof=0),
        _field("all_extension_numbers_response", 5, M, "ExtensionNumberResponse", oneof=0),
        _field("list_services_response", 6, M, "ListServiceResponse", oneof=0),
        _field("error_response", 7, M, "ErrorResponse", oneof=0),
    ])
    res.oneof_decl.add(name="message_response")
    return f


def _message_class(pool, name):
    descriptor = pool.FindMessageTypeByName(name)
    if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.22
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


class ReflectionError(Exception):
    """The server does not serve reflection, or refused a reflection query."""


class ReflectedApi:
    """Message classes, enums and method callables of the services a server reports through reflection."""

    def __init__(self, channel, timeout=None):
        self._channel = channel
        own = descriptor_pool.DescriptorPool()
        own.Add(_reflection_file())
        self._request = _message_class(own, "grpc.reflection.v1.ServerReflectionRequest")
        response = _message_class(own, "grpc.reflection.v1.ServerReflectionResponse")
        self._stream = channel.stream_stream(REFLECTION_METHOD, request_serializer=self._request.SerializeToString,
                                             response_deserializer=response.FromString)
        self._timeout = timeout
        self.pool = descriptor_pool.DescriptorPool()
        self._added = set()
        self.services = self._list_services()
        for service in self.services:
            self._load_symbol(service)

    def _ask(self, **query):
        responses = list(self._stream(iter([self._request(**query)]), timeout=self._timeout))
        if len(responses) != 1:
            raise ReflectionError(f"expected one reflection response, got {len(responses)}")
        answer = responses[0]
        if answer.WhichOneof("message_response") == "error_response":
            raise ReflectionError(f"{answer.error_response.error_message} (code {answer.error_response.error_code})")
        return answer

    def _list_services(self):
        return [s.name for s in self._ask(list_services="*").list_services_response.service]

    def _load_symbol(self, symbol):
        files = [descriptor_pb2.FileDescriptorProto.FromString(raw) for raw in
                 self._ask(file_containing_symbol=symbol).file_descriptor_response.file_descriptor_proto]
        # The server sends a file with its imports, in any order: add each once all of its imports are in.
        pending = [f for f in files if f.name not in self._added]
        while pending:
            ready = [f for f in pending if all(dep in self._added for dep in f.dependency)]
            if not ready:
                missing = {dep for f in pending for dep in f.dependency if dep not in self._added}
                raise ReflectionError(f"the server's descriptors import files it did not send: {sorted(missing)}")
            for f in ready:
                self.pool.Add(f)
                self._added.add(f.name)
            pending = [f for f in pending if f.name not in self._added]

    def message(self, full_name):
        """The class of a message type, e.g. message("attr_rag.v1.AskRequest")."""
        return _message_class(self.pool, full_name)

    def enum(self, full_name):
        """An enum with Name()/Value() like generated code, e.g. enum("attr_rag.v1.FinishReason")."""
        return enum_type_wrapper.EnumTypeWrapper(self.pool.FindEnumTypeByName(full_name))

    def method(self, service, name):
        """A callable for SERVICE/NAME with the right (de)serializers and streaming shape."""
        descriptor = self.pool.FindServiceByName(service).FindMethodByName(name)
        request, response = self.message(descriptor.input_type.full_name), self.message(descriptor.output_type.full_name)
        kind = {(False, False): self._channel.unary_unary, (False, True): self._channel.unary_stream,
                (True, False): self._channel.stream_unary, (True, True): self._channel.stream_stream}[
            (descriptor.client_streaming, descriptor.server_streaming)]
        return request, kind(f"/{service}/{name}", request_serializer=request.SerializeToString,
                             response_deserializer=response.FromString)
