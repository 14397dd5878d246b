// The one table from a gRPC status code to the HTTP status an OpenAI-shaped batch output line carries
// (docs/batches.md shows it): the mapping gRPC's own HTTP gateways use, with 499 for a cancelled item.
import { status } from "@grpc/grpc-js";

export const HTTP_STATUS_OF_GRPC: Readonly<Record<number, number>> = {
  [status.OK]: 200,
  [status.CANCELLED]: 499,
  [status.UNKNOWN]: 500,
  [status.INVALID_ARGUMENT]: 400,
  [status.DEADLINE_EXCEEDED]: 504,
  [status.NOT_FOUND]: 404,
  [status.ALREADY_EXISTS]: 409,
  [status.PERMISSION_DENIED]: 403,
  [status.RESOURCE_EXHAUSTED]: 429,
  [status.FAILED_PRECONDITION]: 400,
  [status.ABORTED]: 409,
  [status.OUT_OF_RANGE]: 400,
  [status.UNIMPLEMENTED]: 501,
  [status.INTERNAL]: 500,
  [status.UNAVAILABLE]: 503,
  [status.DATA_LOSS]: 500,
  [status.UNAUTHENTICATED]: 401,
};

/** HTTP status of a gRPC code; an unknown code is 500. */
export function httpStatusOf(code: number): number {
  return HTTP_STATUS_OF_GRPC[code] ?? 500;
}
