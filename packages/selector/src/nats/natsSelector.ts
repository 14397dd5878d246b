import { SELECTOR_NATS_SERVICE, SelectionRequest, SelectionResult } from "@attr-rag/contracts";
import { ServiceError } from "@attr-rag/index";
import { RemoteError, requestProto, type ConnectionWatch, type NatsConnection } from "@attr-rag/nats";
import type { SelectorBackend } from "../selectorBackend.js";

/** The selector reached over NATS: the SelectorBackend of the distributed gateway. */
export class NatsSelector implements SelectorBackend {
  constructor(
    private readonly nc: NatsConnection,
    private readonly watch?: ConnectionWatch,
    private readonly timeoutMs = 120_000,
  ) {}

  async select(request: SelectionRequest, signal: AbortSignal): Promise<SelectionResult> {
    try {
      return await requestProto(this.nc, SELECTOR_NATS_SERVICE.endpoints.select.subject, request, { request: SelectionRequest, response: SelectionResult }, {
        timeoutMs: this.timeoutMs,
        signal,
        watch: this.watch,
        serviceLabel: "the selector",
        startHint: "`attr-rag selector --nats URL`",
      });
    } catch (err) {
      if (err instanceof RemoteError) throw new ServiceError(err.code, err.message, { cause: err });
      throw err;
    }
  }
}
