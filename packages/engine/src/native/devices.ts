import type { NativeDevice } from "./addonTypes.js";
import { nativeAddon } from "./loadAddon.js";

/** Every device ggml registered in this process (the CPU, and the chosen GPU backend's), with its memory. */
export function listDevices(): NativeDevice[] {
  return nativeAddon().devices();
}
