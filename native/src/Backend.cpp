#include "Backend.h"

#include <cstdio>
#include <mutex>

#include "ggml-backend.h"
#include "llama.h"

namespace attr_rag {
namespace {

std::mutex gMutex;      // guards the log state; the log callback takes it
std::mutex gInitMutex;  // guards initialisation, which logs, so it must not hold gMutex
bool gReady = false;
int gLogLevel = GGML_LOG_LEVEL_ERROR;
std::string gLastError;
std::string gPartial;

void onLog(enum ggml_log_level level, const char* text, void*) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (level == GGML_LOG_LEVEL_ERROR) {
    gPartial = text;
    while (!gPartial.empty() && (gPartial.back() == '\n' || gPartial.back() == ' ')) gPartial.pop_back();
    if (!gPartial.empty()) gLastError = gPartial;
  }
  if (gLogLevel != GGML_LOG_LEVEL_NONE && level != GGML_LOG_LEVEL_CONT && level >= gLogLevel) {
    std::fputs(text, stderr);
  }
}

}  // namespace

void ensureBackend(Napi::Env env, const std::string& libDir) {
  std::lock_guard<std::mutex> lock(gInitMutex);
  if (backendReady()) return;
  llama_log_set(onLog, nullptr);
  ggml_log_set(onLog, nullptr);
  ggml_backend_load_all_from_path(libDir.c_str());
  if (ggml_backend_dev_count() == 0) {
    throw Napi::Error::New(env, "no ggml backend could be loaded from " + libDir +
                                    "; reinstall @node-llama-cpp/linux-x64 (npm ci) or rebuild @attr-rag/native");
  }
  llama_backend_init();
  {
    std::lock_guard<std::mutex> state(gMutex);
    gReady = true;
  }
  env.AddCleanupHook([]() {
    std::lock_guard<std::mutex> init(gInitMutex);
    if (backendReady()) llama_backend_free();
    std::lock_guard<std::mutex> state(gMutex);
    gReady = false;
  });
}

bool backendReady() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gReady;
}

void setLogLevel(int level) {
  std::lock_guard<std::mutex> lock(gMutex);
  gLogLevel = level;
}

std::string lastLlamaError() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gLastError;
}

void clearLastLlamaError() {
  std::lock_guard<std::mutex> lock(gMutex);
  gLastError.clear();
}

Napi::Value InitBackend(const Napi::CallbackInfo& info) {
  std::string dir = ATTR_RAG_LLAMA_LIB_DIR;
  if (info.Length() > 0 && info[0].IsString()) dir = info[0].As<Napi::String>().Utf8Value();
  ensureBackend(info.Env(), dir);
  return info.Env().Undefined();
}

Napi::Value SetLogLevel(const Napi::CallbackInfo& info) {
  setLogLevel(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Value ListDevices(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array out = Napi::Array::New(env);
  for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", ggml_backend_dev_name(dev));
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    o.Set("backend", reg != nullptr ? ggml_backend_reg_name(reg) : "");
    o.Set("description", ggml_backend_dev_description(dev));
    const auto type = ggml_backend_dev_type(dev);
    o.Set("type", type == GGML_BACKEND_DEVICE_TYPE_CPU ? "cpu" : type == GGML_BACKEND_DEVICE_TYPE_GPU ? "gpu" : "other");
    size_t free = 0, total = 0;
    ggml_backend_dev_memory(dev, &free, &total);
    o.Set("memoryFree", static_cast<double>(free));
    o.Set("memoryTotal", static_cast<double>(total));
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

Napi::Value LoadBackend(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "loadBackend(path: string)");
  if (!backendReady()) throw Napi::Error::New(env, "loadBackend: init() first");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  clearLastLlamaError();
  const size_t before = ggml_backend_dev_count();
  ggml_backend_reg_t reg = ggml_backend_load(path.c_str());
  Napi::Object out = Napi::Object::New(env);
  out.Set("ok", reg != nullptr);
  // ggml logs why dlopen failed (a missing libcuda.so.1, libvulkan.so.1, …) and returns null.
  out.Set("error", reg != nullptr ? "" : lastLlamaError());
  out.Set("backend", reg != nullptr ? ggml_backend_reg_name(reg) : "");
  out.Set("devices", static_cast<double>(ggml_backend_dev_count() - before));
  return out;
}

}  // namespace attr_rag
