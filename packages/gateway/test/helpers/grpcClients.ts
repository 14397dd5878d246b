import { credentials, Metadata, type ChannelCredentials, type ServiceError as ClientError } from "@grpc/grpc-js";
import { AttrRagServiceClient, type AskEvent, type AskRequest } from "@attr-rag/contracts";

export interface AskOutcome {
  events: AskEvent[];
  error?: ClientError;
}

/** Streams one Ask to the end (or its error); `cancelAfter` cancels the call after that many events. */
export function askStream(
  client: AttrRagServiceClient,
  request: AskRequest,
  options: { token?: string; deadlineMs?: number; cancelAfter?: number; onEvent?: (e: AskEvent) => void } = {},
): Promise<AskOutcome> {
  const metadata = new Metadata();
  if (options.token !== undefined) metadata.set("authorization", `Bearer ${options.token}`);
  const call = client.ask(request, metadata, options.deadlineMs !== undefined ? { deadline: Date.now() + options.deadlineMs } : {});
  const events: AskEvent[] = [];
  return new Promise((resolve) => {
    call.on("data", (r: { event?: AskEvent }) => {
      events.push(r.event!);
      options.onEvent?.(r.event!);
      if (options.cancelAfter !== undefined && events.length === options.cancelAfter) call.cancel();
    });
    call.on("error", (error: ClientError) => resolve({ events, error }));
    call.on("end", () => resolve({ events }));
  });
}

export function attrRagClient(address: string, creds: ChannelCredentials = credentials.createInsecure()): AttrRagServiceClient {
  return new AttrRagServiceClient(address, creds);
}

export const stagesOf = (events: readonly AskEvent[]) => events.map((e) => e.stage!.$case);

/** Consecutive repeats collapsed: the stage order as the proto documents it. */
export function stageOrder(events: readonly AskEvent[]): string[] {
  return stagesOf(events).filter((s, i, all) => i === 0 || all[i - 1] !== s);
}
