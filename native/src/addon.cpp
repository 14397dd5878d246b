// Registers the native surface (documented in packages/engine/src/native/addonTypes.ts).
#include <napi.h>

#include "AddonContext.h"
#include "AddonModel.h"
#include "Backend.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("init", Napi::Function::New(env, attr_rag::InitBackend));
  exports.Set("setLogLevel", Napi::Function::New(env, attr_rag::SetLogLevel));
  exports.Set("devices", Napi::Function::New(env, attr_rag::ListDevices));
  exports.Set("loadBackend", Napi::Function::New(env, attr_rag::LoadBackend));
  exports.Set("AddonModel", attr_rag::AddonModel::Init(env));
  exports.Set("AddonContext", attr_rag::AddonContext::Init(env));
  exports.Set("defaultLibraryDir", Napi::String::New(env, ATTR_RAG_LLAMA_LIB_DIR));
  return exports;
}

}  // namespace

NODE_API_MODULE(attr_rag_native, Init)
