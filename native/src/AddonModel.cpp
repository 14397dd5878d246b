#include "AddonModel.h"

#include <string>
#include <vector>

#include "Backend.h"
#include "TokenText.h"

namespace attr_rag {

class LoadModelWorker : public Napi::AsyncWorker {
 public:
  LoadModelWorker(Napi::Env env, AddonModel* owner, std::string path, llama_model_params params)
      : Napi::AsyncWorker(env), owner_(owner), path_(std::move(path)), params_(params), deferred_(env) {
    owner_->Ref();
  }
  ~LoadModelWorker() override { owner_->Unref(); }
  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    clearLastLlamaError();
    model_ = llama_model_load_from_file(path_.c_str(), params_);
    if (model_ == nullptr) {
      const std::string why = lastLlamaError();
      SetError("could not load the model from " + path_ + (why.empty() ? "" : ": " + why) +
               "; check that the file is a complete GGUF model this llama.cpp version supports");
    }
  }
  void OnOK() override {
    owner_->loading_ = false;
    if (owner_->disposed_) {
      llama_model_free(model_);
      deferred_.Reject(Napi::Error::New(Env(), "the model was disposed while it was loading").Value());
      return;
    }
    owner_->model_ = model_;
    deferred_.Resolve(Env().Undefined());
  }
  void OnError(const Napi::Error& e) override {
    owner_->loading_ = false;
    deferred_.Reject(e.Value());
  }

 private:
  AddonModel* owner_;
  std::string path_;
  llama_model_params params_;
  llama_model* model_ = nullptr;
  Napi::Promise::Deferred deferred_;
};

Napi::Function AddonModel::Init(Napi::Env env) {
  return DefineClass(env, "AddonModel",
                     {InstanceMethod("load", &AddonModel::Load), InstanceMethod("tokenize", &AddonModel::Tokenize),
                      InstanceMethod("detokenize", &AddonModel::Detokenize),
                      InstanceMethod("tokenPiece", &AddonModel::TokenPiece),
                      InstanceMethod("applyChatTemplate", &AddonModel::ApplyChatTemplate),
                      InstanceMethod("isEog", &AddonModel::IsEog), InstanceMethod("info", &AddonModel::Info),
                      InstanceMethod("dispose", &AddonModel::Dispose)});
}

AddonModel::AddonModel(const Napi::CallbackInfo& info) : Napi::ObjectWrap<AddonModel>(info) {
  if (!backendReady()) throw Napi::Error::New(info.Env(), "call init() before creating a model");
}

AddonModel::~AddonModel() { free(); }

void AddonModel::free() {
  if (model_ != nullptr) {
    llama_model_free(model_);
    model_ = nullptr;
  }
}

llama_model* AddonModel::require(Napi::Env env) const {
  if (disposed_) throw Napi::Error::New(env, "the model has been disposed");
  if (model_ == nullptr) throw Napi::Error::New(env, "the model is not loaded yet");
  return model_;
}

Napi::Value AddonModel::Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (disposed_) throw Napi::Error::New(env, "the model has been disposed");
  if (loading_ || model_ != nullptr) throw Napi::Error::New(env, "load() was already called on this model");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  Napi::Object opts = info[1].As<Napi::Object>();
  llama_model_params params = llama_model_default_params();
  params.n_gpu_layers = opts.Get("gpuLayers").As<Napi::Number>().Int32Value();
  params.vocab_only = opts.Get("vocabOnly").As<Napi::Boolean>().Value();
  params.load_mode = opts.Get("useMmap").As<Napi::Boolean>().Value() ? params.load_mode : LLAMA_LOAD_MODE_NONE;
  loading_ = true;
  auto* worker = new LoadModelWorker(env, this, path, params);
  worker->Queue();
  return worker->Promise();
}

Napi::Value AddonModel::Tokenize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const llama_vocab* vocab = llama_model_get_vocab(require(env));
  const std::string text = info[0].As<Napi::String>().Utf8Value();
  const bool addSpecial = info[1].As<Napi::Boolean>().Value();
  const bool parseSpecial = info[2].As<Napi::Boolean>().Value();
  std::vector<llama_token> tokens;
  try {
    tokens = tokenize(vocab, text, addSpecial, parseSpecial);
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
  Napi::Int32Array out = Napi::Int32Array::New(env, tokens.size());
  std::copy(tokens.begin(), tokens.end(), out.Data());
  return out;
}

Napi::Value AddonModel::Detokenize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const llama_vocab* vocab = llama_model_get_vocab(require(env));
  Napi::Int32Array arr = info[0].As<Napi::Int32Array>();
  std::vector<llama_token> tokens(arr.Data(), arr.Data() + arr.ElementLength());
  try {
    return Napi::String::New(env, detokenize(vocab, tokens, info[1].As<Napi::Boolean>(), info[2].As<Napi::Boolean>()));
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
}

Napi::Value AddonModel::TokenPiece(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const llama_vocab* vocab = llama_model_get_vocab(require(env));
  const std::string piece = tokenPiece(vocab, info[0].As<Napi::Number>().Int32Value());
  return Napi::Buffer<char>::Copy(env, piece.data(), piece.size());
}

Napi::Value AddonModel::ApplyChatTemplate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  llama_model* model = require(env);
  Napi::Array messages = info[0].As<Napi::Array>();
  const bool addAssistant = info[1].As<Napi::Boolean>().Value();
  std::string tmpl;
  if (info.Length() > 2 && info[2].IsString()) {
    tmpl = info[2].As<Napi::String>().Utf8Value();
  } else {
    const char* builtIn = llama_model_chat_template(model, nullptr);
    if (builtIn == nullptr) return env.Null();
    tmpl = builtIn;
  }
  std::vector<std::string> roles, contents;
  size_t total = 0;
  for (uint32_t i = 0; i < messages.Length(); i++) {
    Napi::Object m = messages.Get(i).As<Napi::Object>();
    roles.push_back(m.Get("role").As<Napi::String>().Utf8Value());
    contents.push_back(m.Get("content").As<Napi::String>().Utf8Value());
    total += contents.back().size() + roles.back().size();
  }
  std::vector<llama_chat_message> chat;
  for (size_t i = 0; i < roles.size(); i++) chat.push_back({roles[i].c_str(), contents[i].c_str()});
  std::vector<char> buf(2 * total + 1024);
  int32_t n = llama_chat_apply_template(tmpl.c_str(), chat.data(), chat.size(), addAssistant, buf.data(),
                                        static_cast<int32_t>(buf.size()));
  if (n > static_cast<int32_t>(buf.size())) {
    buf.resize(n);
    n = llama_chat_apply_template(tmpl.c_str(), chat.data(), chat.size(), addAssistant, buf.data(), n);
  }
  if (n < 0) {
    throw Napi::Error::New(env, "llama.cpp does not support this model's chat template; pass a template or use the plain layout");
  }
  return Napi::String::New(env, buf.data(), n);
}

Napi::Value AddonModel::IsEog(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Napi::Boolean::New(env, llama_vocab_is_eog(llama_model_get_vocab(require(env)), info[0].As<Napi::Number>().Int32Value()));
}

Napi::Value AddonModel::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  llama_model* model = require(env);
  const llama_vocab* vocab = llama_model_get_vocab(model);
  Napi::Object o = Napi::Object::New(env);
  char buf[512];
  o.Set("description", llama_model_desc(model, buf, sizeof(buf)) >= 0 ? std::string(buf) : std::string());
  o.Set("architecture", llama_model_meta_val_str(model, "general.architecture", buf, sizeof(buf)) >= 0 ? std::string(buf) : std::string());
  o.Set("name", llama_model_meta_val_str(model, "general.name", buf, sizeof(buf)) >= 0 ? std::string(buf) : std::string());
  o.Set("nVocab", llama_vocab_n_tokens(vocab));
  o.Set("nCtxTrain", llama_model_n_ctx_train(model));
  o.Set("nEmbd", llama_model_n_embd(model));
  o.Set("nLayer", llama_model_n_layer(model));
  o.Set("nParams", static_cast<double>(llama_model_n_params(model)));
  o.Set("sizeBytes", static_cast<double>(llama_model_size(model)));
  o.Set("bos", llama_vocab_bos(vocab));
  o.Set("eos", llama_vocab_eos(vocab));
  o.Set("addBos", llama_vocab_get_add_bos(vocab));
  o.Set("addEos", llama_vocab_get_add_eos(vocab));
  o.Set("sep", llama_vocab_sep(vocab));
  o.Set("addSep", llama_vocab_get_add_sep(vocab));
  o.Set("hasEncoder", llama_model_has_encoder(model));
  o.Set("hasDecoder", llama_model_has_decoder(model));
  o.Set("nClsOut", llama_model_n_cls_out(model));
  const char* tmpl = llama_model_chat_template(model, nullptr);
  o.Set("chatTemplate", tmpl != nullptr ? Napi::Value(Napi::String::New(env, tmpl)) : env.Null());
  const char* rerank = llama_model_chat_template(model, "rerank");
  o.Set("rerankTemplate", rerank != nullptr ? Napi::Value(Napi::String::New(env, rerank)) : env.Null());
  return o;
}

Napi::Value AddonModel::Dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (contexts_.load() > 0) throw Napi::Error::New(env, "dispose the model's contexts before the model");
  disposed_ = true;
  free();
  return env.Undefined();
}

}  // namespace attr_rag
