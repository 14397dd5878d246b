/** Path of the compiled addon (ATTR_RAG_NATIVE_ADDON overrides it). */
export declare const addonPath: string;
/** Loads the addon; its surface is typed in @attr-rag/engine's addonTypes.ts. */
export declare function loadNativeAddon(): unknown;
