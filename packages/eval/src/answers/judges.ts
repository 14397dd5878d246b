// Table II's judges: a local GGUF through the engine (the model's own chat template) or any
// OpenAI-compatible chat endpoint. Both get the same messages and the same one retry; a verdict records what
// could not be read as missing (core's parseJudgeReply), never as a score.
import { betterVerdict, InputError, JUDGE_RETRY_MESSAGE, judgeMessages, parseJudgeReply, type ChatMessage, type JudgeVerdict } from "@attr-rag/core";
import { EngineLimitError, loadModelArg, type EngineContext, type Model } from "@attr-rag/engine";

/** One chat completion: the judge's reply text to `messages`. */
export type ChatFunction = (messages: readonly ChatMessage[], signal: AbortSignal) => Promise<string>;

export interface Judge extends AsyncDisposable {
  /** `gguf:<file>` or `http:<model>@<url>`: recorded in summary.json. */
  readonly id: string;
  readonly chat: ChatFunction;
}

/** Tokens a judge may write: six small integers in JSON need far fewer; room for a model that adds spaces. */
export const JUDGE_MAX_TOKENS = 160;

export type JudgedVerdict = JudgeVerdict & { readonly attempts: number };

/** Asks the judge; if the reply is not one JSON object with all six criteria, asks once more with a reminder. */
export async function judgeAnswer(judge: Judge, question: string, reference: string, answer: string, signal: AbortSignal): Promise<JudgedVerdict> {
  const messages = judgeMessages(question, reference, answer);
  // A judge that cannot be reached (or whose engine fails) throws: the row is then not written, recorded in
  // errors.jsonl and asked again on --resume, instead of keeping a verdict that only says "no answer".
  const ask = async (m: readonly ChatMessage[]): Promise<{ verdict: JudgeVerdict; reply: string }> => {
    try {
      const reply = await judge.chat(m, signal);
      return { verdict: parseJudgeReply(reply), reply };
    } catch (err) {
      if (signal.aborted || err instanceof InputError) throw err;
      throw new Error(`the judge failed: ${(err as Error).message}`, { cause: err });
    }
  };
  const first = await ask(messages);
  if (first.verdict.missing.length === 0) return { ...first.verdict, attempts: 1 };
  const second = await ask([...messages, { role: "assistant", content: first.reply }, { role: "user", content: JUDGE_RETRY_MESSAGE }]);
  return { ...betterVerdict(first.verdict, second.verdict), attempts: 2 };
}

/** A GGUF judge in this process: greedy, its own context, the model's chat template. */
export async function localJudge(modelArg: string, options: { contextSize: number; threads?: number; gpuLayers: number }): Promise<Judge> {
  const model: Model = await loadModelArg(modelArg, { gpuLayers: options.gpuLayers });
  let context: EngineContext;
  try {
    context = await model.createContext({ kind: "generate", contextSize: options.contextSize, sequences: 1, ...(options.threads ? { threads: options.threads } : {}) });
  } catch (err) {
    await model.dispose();
    throw err;
  }
  const template = model.chatTemplate();
  return {
    id: `gguf:${model.info.path.split("/").pop()}`,
    chat: async (messages, signal) => {
      try {
        const it = context.generate(template(messages), { maxTokens: JUDGE_MAX_TOKENS, signal });
        let step = await it.next();
        while (!step.done) step = await it.next();
        return step.value.text;
      } catch (err) {
        // A prompt longer than the judge's context is this question's problem, not the run's.
        if (err instanceof EngineLimitError) throw new Error(`${err.message} (raise --judge-context)`);
        throw err;
      }
    },
    async [Symbol.asyncDispose]() {
      await context.dispose();
      await model.dispose();
    },
  };
}

/** Statuses that no retry fixes: the endpoint, model name or key is wrong, so the run stops and says so. */
const FATAL_HTTP = new Set([400, 401, 403, 404]);

/**
 * An OpenAI-compatible endpoint: POST `<url>/chat/completions` with temperature 0. The key, if any, comes from
 * the environment variable named by --judge-key-env (never from a flag, so it stays out of shell history).
 */
export function httpJudge(url: string, model: string, keyEnv: string | undefined, timeoutMs = 120_000): Judge {
  let base: URL;
  try {
    base = new URL(url.endsWith("/") ? url : `${url}/`);
  } catch {
    throw new InputError(`--judge-url: "${url}" is not a URL; give the API base, e.g. http://127.0.0.1:8080/v1`, 2);
  }
  if (base.protocol !== "http:" && base.protocol !== "https:") throw new InputError(`--judge-url must be http(s), got ${base.protocol}`, 2);
  let key: string | undefined;
  if (keyEnv !== undefined) {
    key = process.env[keyEnv];
    if (key === undefined || key === "") throw new InputError(`--judge-key-env ${keyEnv}: that environment variable is not set (or empty); export it with the API key`, 2);
  }
  const endpoint = new URL("chat/completions", base).toString();
  return {
    id: `http:${model}@${base.origin}${base.pathname}`,
    chat: async (messages, signal) => {
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ model, messages, temperature: 0, max_tokens: JUDGE_MAX_TOKENS }),
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      });
      const body = await response.text();
      if (!response.ok) {
        const what = `${endpoint}: HTTP ${response.status} ${body.slice(0, 200)}`;
        if (FATAL_HTTP.has(response.status)) throw new InputError(`judge ${what}; check --judge-url, --judge-model and --judge-key-env`, 2);
        throw new Error(what);
      }
      let content: unknown;
      try {
        content = (JSON.parse(body) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
      } catch {
        throw new Error(`${endpoint}: the response is not JSON`);
      }
      if (typeof content !== "string") throw new Error(`${endpoint}: the response has no choices[0].message.content`);
      return content;
    },
    async [Symbol.asyncDispose]() {},
  };
}
