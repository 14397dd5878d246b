// Which ggml backend runs the models: the CPU libraries our addon links against, or a GPU backend loaded from
// node-llama-cpp's prebuilt npm package for the same llama.cpp release (@node-llama-cpp/linux-x64-cuda or
// -vulkan). Chosen once per process by ATTR_RAG_GPU (the CLI's --gpu sets it): `auto` takes CUDA, then Vulkan,
// when its package is installed and it finds a device, else the CPU; `cuda`/`vulkan` insist and fail with
// what is missing; `cpu` loads no GPU backend.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { GpuBackendError } from "../errors.js";
import type { NativeAddon, NativeDevice } from "./addonTypes.js";

export const GPU_CHOICES = ["auto", "cuda", "vulkan", "cpu"] as const;
export type GpuChoice = (typeof GPU_CHOICES)[number];
export type GpuKind = "cuda" | "vulkan";

/** The release of node-llama-cpp's prebuilt libraries our addon is built against (native/package.json). */
export const LLAMA_PACKAGES_VERSION = "3.22.1";

const GPU_KINDS: readonly GpuKind[] = ["cuda", "vulkan"];
const REG_NAME: Record<GpuKind, string> = { cuda: "CUDA", vulkan: "Vulkan" };

export interface BackendSelection {
  readonly choice: GpuChoice;
  /** What runs the models' offloaded layers: a GPU backend, or the CPU. */
  readonly backend: "cpu" | GpuKind;
  /** The chosen GPU backend's devices (none for the CPU). */
  readonly devices: readonly NativeDevice[];
  /** The package folder the GPU backend was loaded from. */
  readonly libraryDir?: string;
  /** Every device is a software renderer (Mesa lavapipe/llvmpipe): numbers from it are not a GPU's. */
  readonly software: boolean;
  /** Why each GPU backend `auto` tried was not used. */
  readonly skipped: readonly string[];
  /** The GPU backend packages found installed (whether or not they could be used). */
  readonly installed: readonly GpuKind[];
  /** One line for stderr: what was chosen and why. */
  readonly summary: string;
}

export function parseGpuChoice(value: string | undefined, what = "ATTR_RAG_GPU"): GpuChoice {
  const v = (value ?? "").trim().toLowerCase() || "auto";
  if ((GPU_CHOICES as readonly string[]).includes(v)) return v as GpuChoice;
  throw new GpuBackendError(`${what} must be one of ${GPU_CHOICES.join(", ")}, got "${value}"`);
}

/** Where a GPU package's libraries are, or why they cannot be used. */
export function gpuPackage(kind: GpuKind): { dir: string; library: string } | { problem: string } {
  const name = `@node-llama-cpp/linux-x64-${kind}`;
  let main: string;
  try {
    main = createRequire(import.meta.url).resolve(name);
  } catch {
    return { problem: `${name} is not installed (npm install ${name}@${LLAMA_PACKAGES_VERSION})` };
  }
  const root = join(dirname(main), "..");
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: string }).version;
  if (version !== LLAMA_PACKAGES_VERSION) {
    // Another release is another llama.cpp: its backend would not match the libraries our addon uses.
    return { problem: `${name} is ${version}, but this build needs ${LLAMA_PACKAGES_VERSION} (npm install ${name}@${LLAMA_PACKAGES_VERSION})` };
  }
  const dir = join(root, "bins", `linux-x64-${kind}`);
  const library = join(dir, `libggml-${kind}.so`);
  if (!existsSync(library)) return { problem: `${name} has no ${library}; reinstall it` };
  return { dir, library };
}

/** Mesa's CPU-rendered Vulkan devices. */
export function isSoftwareDevice(d: NativeDevice): boolean {
  return /llvmpipe|lavapipe|swiftshader/i.test(`${d.name} ${d.description}`);
}

/** Why a backend library would not load, in the user's words: which library is missing and what provides it. */
function loadProblem(kind: GpuKind, error: string): string {
  const missing = /([\w.+-]+\.so[.\d]*): cannot open shared object file/.exec(error)?.[1];
  if (missing === undefined) return `libggml-${kind}.so did not load: ${error || "no reason given"}`;
  if (/^libcuda\.so/.test(missing)) return `the NVIDIA driver is not installed (${missing} not found)`;
  if (/^libcu(dart|blas)/.test(missing)) {
    return `the CUDA 13 runtime is not installed (${missing} not found; the NVIDIA driver and libcudart.so.13/libcublas.so.13 are needed), or build llama.cpp for your CUDA with native/scripts/build-llama-cuda.sh`;
  }
  if (/^libvulkan\.so/.test(missing)) return `the Vulkan loader is not installed (${missing} not found; Debian: apt-get install libvulkan1 and a driver)`;
  return `libggml-${kind}.so needs ${missing}, which is not installed`;
}

function noDevice(kind: GpuKind): string {
  return kind === "cuda"
    ? "the CUDA backend found no device (no NVIDIA GPU, or the driver cannot see it)"
    : "the Vulkan backend found no GPU (a software device such as lavapipe is used only when GGML_VK_VISIBLE_DEVICES names it, e.g. GGML_VK_VISIBLE_DEVICES=0)";
}

function describe(devices: readonly NativeDevice[]): string {
  return devices.map((d) => `${d.description || d.name}${d.memoryTotal > 0 ? `, ${(d.memoryTotal / 2 ** 30).toFixed(1)} GiB` : ""}`).join("; ");
}

/**
 * Loads the GPU backend `choice` asks for into an initialised addon and says what runs the models. Throws
 * GpuBackendError for `cuda`/`vulkan` when that backend cannot be used; `auto` falls back to the CPU.
 */
export function selectGpuBackend(addon: Pick<NativeAddon, "loadBackend" | "devices">, choice: GpuChoice, libraryDir?: string): BackendSelection {
  const skipped: string[] = [];
  const installed: GpuKind[] = [];
  const kinds = choice === "auto" ? GPU_KINDS : choice === "cpu" ? [] : [choice];
  for (const kind of kinds) {
    // A from-source build (ATTR_RAG_LLAMA_LIB_DIR, native/scripts/build-llama-cuda.sh) brings its GPU backend
    // with the libraries init() loaded.
    const built = addon.devices().filter((d) => d.backend === REG_NAME[kind] && d.type === "gpu");
    if (built.length > 0) {
      return { choice, backend: kind, devices: built, ...(libraryDir ? { libraryDir } : {}), software: built.every(isSoftwareDevice), skipped, installed, summary: `backend ${kind} (${choice === "auto" ? "auto" : "--gpu"}, from ${libraryDir ?? "the addon's libraries"}): ${describe(built)}` };
    }
    const pkg = gpuPackage(kind);
    let problem: string;
    if ("problem" in pkg) {
      problem = pkg.problem;
    } else {
      installed.push(kind);
      const loaded = addon.loadBackend(pkg.library);
      const devices = addon.devices().filter((d) => d.backend === REG_NAME[kind]);
      if (loaded.ok && devices.length > 0) {
        const software = devices.every(isSoftwareDevice);
        const summary = `backend ${kind} (${choice === "auto" ? "auto" : "--gpu"}): ${describe(devices)}${software ? " — software Vulkan, not a GPU" : ""}`;
        return { choice, backend: kind, devices, libraryDir: pkg.dir, software, skipped, installed, summary };
      }
      problem = loaded.ok ? noDevice(kind) : loadProblem(kind, loaded.error);
    }
    if (choice !== "auto") throw new GpuBackendError(`--gpu ${kind} (ATTR_RAG_GPU): ${problem}; use --gpu auto or cpu to run on the CPU`);
    skipped.push(`${kind}: ${problem}`);
  }
  const why =
    choice === "cpu"
      ? "--gpu cpu"
      : installed.length === 0
        ? `auto: no GPU backend package installed; npm install @node-llama-cpp/linux-x64-cuda@${LLAMA_PACKAGES_VERSION} or -vulkan@${LLAMA_PACKAGES_VERSION} for one`
        : `auto; ${skipped.join("; ")}`;
  return { choice, backend: "cpu", devices: [], software: false, skipped, installed, summary: `backend cpu (${why})` };
}
