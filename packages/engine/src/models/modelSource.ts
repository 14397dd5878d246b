// What `attr-rag models pull` accepts: an http(s) URL, or `hf:owner/repo/path/file.gguf` for a file in a
// Hugging Face model repository (its main revision). HF_ENDPOINT moves the hub (mirrors, tests) and HF_TOKEN
// is sent for gated or private repositories, as Hugging Face's own tools do.
import { EngineArgumentError } from "../errors.js";
import type { Env } from "./modelLocator.js";

export interface ModelSource {
  readonly url: string;
  /** File name in the cache: the URL's last path segment unless the caller names it. */
  readonly fileName: string;
  readonly headers: Readonly<Record<string, string>>;
  /** True for hf: sources, whose responses carry the file's sha256 (X-Linked-ETag). */
  readonly fromHub: boolean;
}

const DEFAULT_HF_ENDPOINT = "https://huggingface.co";

export function parseModelSource(spec: string, options: { name?: string; env?: Env } = {}): ModelSource {
  const env = options.env ?? process.env;
  let url: URL;
  let fromHub = false;
  if (spec.startsWith("hf:")) {
    const parts = spec.slice(3).split("/").filter((p) => p !== "");
    if (parts.length < 3) {
      throw new EngineArgumentError(`"${spec}" is not hf:OWNER/REPO/FILE.gguf (e.g. hf:Qwen/Qwen2.5-7B-Instruct-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf)`);
    }
    const [owner, repo, ...file] = parts;
    const endpoint = (env.HF_ENDPOINT !== undefined && env.HF_ENDPOINT !== "" ? env.HF_ENDPOINT : DEFAULT_HF_ENDPOINT).replace(/\/+$/, "");
    url = new URL(`${endpoint}/${owner}/${repo}/resolve/main/${file.map(encodeURIComponent).join("/")}`);
    fromHub = true;
  } else {
    try {
      url = new URL(spec);
    } catch {
      throw new EngineArgumentError(`"${spec}" is neither a URL nor hf:OWNER/REPO/FILE.gguf`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new EngineArgumentError(`"${spec}": only http(s) URLs and hf:OWNER/REPO/FILE.gguf can be pulled (for a local file, pass its path to --model)`);
    }
  }
  const fileName = options.name ?? lastSegment(url, spec);
  checkFileName(fileName, spec);
  const token = env.HF_TOKEN;
  const headers: Record<string, string> = fromHub && token !== undefined && token !== "" ? { authorization: `Bearer ${token}` } : {};
  return { url: url.toString(), fileName, headers, fromHub };
}

function lastSegment(url: URL, spec: string): string {
  try {
    return decodeURIComponent(url.pathname.split("/").pop() ?? "");
  } catch {
    throw new EngineArgumentError(`"${spec}" has a malformed %-escape in its file name; pass --name NAME.gguf`);
  }
}

function checkFileName(name: string, spec: string): void {
  if (name === "" || name.startsWith(".") || /[/\\\0]/.test(name)) {
    throw new EngineArgumentError(`cannot take a file name from "${spec}"; pass --name NAME.gguf`);
  }
  if (!name.endsWith(".gguf")) {
    throw new EngineArgumentError(`"${name}" does not end in .gguf; llama.cpp loads GGUF files only (pass --name NAME.gguf if the URL hides the name)`);
  }
}
