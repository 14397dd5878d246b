// `attr-rag selector`: selectSets as a NATS service (SELECTOR_NATS_SERVICE, in its queue group, so any
// number of selectors share the requests), with the index reached over NATS for embeddings and gap chunks.
import { SELECTOR_NATS_SERVICE, SelectionRequest, SelectionResult } from "@attr-rag/contracts";
import { toGrpcStatus } from "@attr-rag/index";
import { serveService, type NatsConnection, type Service } from "@attr-rag/nats";
import { selectSets } from "../selectSets.js";
import type { SelectorDeps } from "../selectorBackend.js";

export function serveSelectorOverNats(nc: NatsConnection, deps: SelectorDeps, log: (line: string) => void): Promise<Service> {
  return serveService(
    nc,
    SELECTOR_NATS_SERVICE,
    [{ endpoint: SELECTOR_NATS_SERVICE.endpoints.select, request: SelectionRequest, response: SelectionResult, handle: (r: SelectionRequest, signal) => selectSets(r, deps, signal) }],
    (err, endpoint) => {
      const { code, details } = toGrpcStatus(err, `selector ${endpoint}`, log);
      return { code, message: details };
    },
  );
}
