// grpc/health/v1/health.proto as a descriptor, so reflection clients can call the standard health service
// that grpc-health-check serves (Check and Watch; that package does not implement List, so it is left out).
import { create, toBinary } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

export const HEALTH_SERVICE_NAME = "grpc.health.v1.Health";

export function healthFileDescriptor(): Uint8Array {
  const optional = FieldDescriptorProto_Label.OPTIONAL;
  const file = create(FileDescriptorProtoSchema, {
    name: "grpc/health/v1/health.proto",
    package: "grpc.health.v1",
    syntax: "proto3",
    messageType: [
      { name: "HealthCheckRequest", field: [{ name: "service", number: 1, label: optional, type: FieldDescriptorProto_Type.STRING, jsonName: "service" }] },
      {
        name: "HealthCheckResponse",
        field: [
          {
            name: "status",
            number: 1,
            label: optional,
            type: FieldDescriptorProto_Type.ENUM,
            typeName: ".grpc.health.v1.HealthCheckResponse.ServingStatus",
            jsonName: "status",
          },
        ],
        enumType: [
          {
            name: "ServingStatus",
            value: [
              { name: "UNKNOWN", number: 0 },
              { name: "SERVING", number: 1 },
              { name: "NOT_SERVING", number: 2 },
              { name: "SERVICE_UNKNOWN", number: 3 },
            ],
          },
        ],
      },
    ],
    service: [
      {
        name: "Health",
        method: [
          { name: "Check", inputType: ".grpc.health.v1.HealthCheckRequest", outputType: ".grpc.health.v1.HealthCheckResponse" },
          { name: "Watch", inputType: ".grpc.health.v1.HealthCheckRequest", outputType: ".grpc.health.v1.HealthCheckResponse", serverStreaming: true },
        ],
      },
    ],
  });
  return toBinary(FileDescriptorProtoSchema, file);
}
