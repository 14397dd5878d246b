import type { ServiceDefinition, UntypedServiceImplementation } from "@grpc/grpc-js";

export interface ServedService {
  readonly definition: ServiceDefinition;
  readonly implementation: UntypedServiceImplementation;
}

/**
 * The services the gateway serves, collected once and handed to both ports (the gRPC server and the HTTP
 * bridge). It has grpc-js Server's addService shape, so libraries that add themselves to a server
 * (grpc-health-check, reflection) can add themselves here.
 */
export class ServiceTable {
  readonly services: ServedService[] = [];

  addService(definition: ServiceDefinition, implementation: UntypedServiceImplementation): void {
    this.services.push({ definition, implementation });
  }
}
