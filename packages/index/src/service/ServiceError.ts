import { status } from "@grpc/grpc-js";

/**
 * An error the service raises itself with a known status code: request validation (INVALID_ARGUMENT),
 * limits (RESOURCE_EXHAUSTED), a cancelled or expired call (CANCELLED, DEADLINE_EXCEEDED). Its message
 * goes to the client as the status details, so it never carries internals.
 */
export class ServiceError extends Error {
  override name = "ServiceError";
  constructor(
    readonly code: status,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function invalidArgument(message: string): ServiceError {
  return new ServiceError(status.INVALID_ARGUMENT, message);
}
