// Process-wide llama.cpp state: backends loaded once from a directory, log routing, last error text.
#pragma once

#include <napi.h>

#include <string>

namespace attr_rag {

// Loads ggml backends from `libDir` (CPU variants, CUDA when its libraries are there) and initialises
// llama.cpp; later calls are no-ops. Registers an env cleanup hook that frees the backend at exit.
void ensureBackend(Napi::Env env, const std::string& libDir);
bool backendReady();

// llama.cpp logs at or above this level go to stderr (0 none .. 4 errors only; default 4).
void setLogLevel(int level);

// The most recent error-level log line, used to explain failures llama.cpp reports only by a null return.
std::string lastLlamaError();
void clearLastLlamaError();

Napi::Value InitBackend(const Napi::CallbackInfo& info);
Napi::Value SetLogLevel(const Napi::CallbackInfo& info);
Napi::Value ListDevices(const Napi::CallbackInfo& info);
// Loads one more ggml backend library (a GPU backend from another package's folder) into the registry;
// { ok, error, devices } where devices counts what it registered. After init, before any model loads.
Napi::Value LoadBackend(const Napi::CallbackInfo& info);

}  // namespace attr_rag
