// TrainingSession, persisting: checkpoints (save, load, the old format's migration) and the
// weights-only reader (stepping: session.cpp).
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <type_traits>

#include "core/analysis/head_metrics.h"
#include "core/attention/fused_attention.h"
#include "core/attention/kernel_family/kernel_attention.h"
#include "core/attention/neural/neural_surface.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/version.h"
#include "core/random/run_random.h"
#include "core/runs/formats/legacy_archive.h"
#include "core/runs/formats/safetensors.h"
#include "core/training/interventions/interventions.h"
#include "core/training/optimizer/adamw_state.h"
#include "core/training/optimizer/fused_adamw.h"
#include "core/training/session/graphed_step.h"
#include "core/training/session/session.h"
#include "core/training/session/training_errors.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "attnlab-checkpoint";
// 2: model.safetensors, optimizer.safetensors and state.json, data only. 1: model.pt and
// optimizer.pt, TorchScript archives (refused; `attnlab migrate` converts them, reading them as
// data: core/runs/formats/legacy_archive.h).
constexpr int kFormatVersion = 2, kOldFormatVersion = 1;
constexpr const char* kModelFile = "model.safetensors";
constexpr const char* kOptimizerFile = "optimizer.safetensors";

// First key path where two JSON values differ ("model.d_model: 64 vs 32"), for messages.
std::string first_difference(const json& a, const json& b, const std::string& path = "") {
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      const std::string p = path.empty() ? it.key() : path + "." + it.key();
      if (!b.contains(it.key())) return p + ": missing";
      auto d = first_difference(it.value(), b.at(it.key()), p);
      if (!d.empty()) return d;
    }
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) return (path.empty() ? "" : path + ".") + it.key() + ": extra";
    return "";
  }
  return a == b ? "" : path + ": " + a.dump() + " vs " + b.dump();
}

// The run a checkpoint directory belongs to (its parent when it is DIR/checkpoint), for messages.
std::string run_of(const std::string& dir) {
  const fs::path p = fs::path(dir).lexically_normal();
  const fs::path leaf = p.has_filename() ? p.filename() : p.parent_path().filename();
  if (leaf == "checkpoint") return (p.has_filename() ? p : p.parent_path()).parent_path().string();
  return dir;
}

std::string old_format_message(const std::string& dir) {
  const std::string run = run_of(dir);
  return "checkpoint " + dir + " (run " + run +
         ") is in attnlab's old format: model.pt and optimizer.pt are TorchScript archives, which "
         "can run code when LibTorch opens them, so attnlab does not open them. Convert it with "
         "`attnlab migrate --run " +
         run + "`: it reads their tensors as data and never runs what they carry";
}

int format_version_of(const json& j) {
  const auto it = j.find("format_version");
  return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
}

// state.json of any format version (attnlab's format field checked).
json read_state_any(const std::string& dir) {
  recover_directory(dir);  // a save killed between its two renames (see core/base/atomic_file.h)
  const fs::path p = fs::path(dir) / "state.json";
  std::string text;
  try {
    text = read_regular_file(p.string());
  } catch (const Error& e) {
    throw Error("checkpoint " + dir + " is not an attnlab checkpoint (" + e.what() + ")");
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error("checkpoint " + p.string() + " is corrupt: " + e.what());
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
    throw Error("checkpoint " + p.string() + " is not an attnlab checkpoint (format field)");
  return j;
}

// state.json of the current format; the old one (TorchScript files) is refused, never opened.
json read_state(const std::string& dir) {
  json j = read_state_any(dir);
  const int version = format_version_of(j);
  std::error_code ec;
  if (version == kOldFormatVersion ||
      (!fs::exists(fs::path(dir) / kModelFile, ec) && fs::exists(fs::path(dir) / "model.pt", ec)))
    throw Error(old_format_message(dir));
  if (version != kFormatVersion)
    throw Error("checkpoint " + (fs::path(dir) / "state.json").string() + " has format version " +
                std::to_string(version) + "; this attnlab reads " + std::to_string(kFormatVersion));
  return j;
}

// Size and CRC-32 of a file (zlib), recorded in state.json at the save and checked at the load:
// torch's zip reader does not notice a damaged payload, so a flipped byte would load silently.
json file_record(const fs::path& p) {
  regular_file_or_absent(p.string());  // a FIFO or device in a checkpoint is refused, not read
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error("cannot read " + p.string());
  uLong crc = crc32(0L, Z_NULL, 0);
  int64_t size = 0;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(n));
    size += n;
  }
  return {{"size", size}, {"crc32", static_cast<uint32_t>(crc)}};
}

// A checkpoint file checked against the size and CRC-32 state.json recorded for it at the save.
void check_file_record(const json& state, const std::string& dir, const char* name) {
  const fs::path file = fs::path(dir) / name;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec)))
    throw Error("checkpoint " + dir + " is incomplete: " + name + " is missing");
  if (!state.contains("files") || !state["files"].is_object() || !state["files"].contains(name))
    throw Error("checkpoint " + dir + "/state.json is incomplete: no record of " + name);
  const json want = state["files"][name], got = file_record(file);
  if (want != got)
    throw Error("checkpoint file " + file.string() +
                " is corrupt: " + std::to_string(got["size"].get<int64_t>()) + " bytes, CRC-32 " +
                std::to_string(got["crc32"].get<uint32_t>()) + ", but state.json recorded " +
                want.dump() + " at the save (damaged or replaced since)");
}

// --- Tensors as safetensors entries (the checkpoint's data; core/runs/formats/safetensors.h) ---

std::string dtype_name(const torch::Tensor& t) {
  static const std::pair<torch::ScalarType, const char*> kNames[] = {
      {torch::kFloat, "F32"},     {torch::kDouble, "F64"}, {torch::kHalf, "F16"},
      {torch::kBFloat16, "BF16"}, {torch::kLong, "I64"},   {torch::kInt, "I32"},
      {torch::kShort, "I16"},     {torch::kChar, "I8"},    {torch::kByte, "U8"},
      {torch::kBool, "BOOL"}};
  for (const auto& [type, name] : kNames)
    if (type == t.scalar_type()) return name;
  throw Error(std::string("checkpoint: a tensor of dtype ") + c10::toString(t.scalar_type()) +
              " has no safetensors name");
}

TensorSpec spec_of(const std::string& name, const torch::Tensor& t) {
  return {name, dtype_name(t), t.sizes().vec()};
}

RawTensor raw_of(const std::string& name, const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
  RawTensor r{name, dtype_name(c), c.sizes().vec(),
              std::string(static_cast<const char*>(c.data_ptr()), c.nbytes())};
  if (!host_is_little_endian()) swap_element_bytes(r.bytes, static_cast<int>(c.element_size()));
  return r;
}

// Copies checked bytes (read_checked: the dtype and shape of `into`) into a tensor in place.
void copy_raw_into(torch::Tensor into, const RawTensor& r) {
  torch::NoGradGuard no_grad;
  const torch::Tensor src = torch::from_blob(const_cast<char*>(r.bytes.data()), into.sizes(),
                                             torch::TensorOptions().dtype(into.scalar_type()));
  into.copy_(src);
}

uint64_t bytes_of(const std::vector<TensorSpec>& specs) {
  uint64_t total = 0;
  for (const TensorSpec& s : specs) {
    uint64_t n = static_cast<uint64_t>(safetensors_dtype_size(s.dtype));
    for (const int64_t d : s.shape) n *= static_cast<uint64_t>(d);
    total += n;
  }
  return total;
}

// Every parameter, then every buffer, by the names named_parameters()/named_buffers() give.
std::vector<std::pair<std::string, torch::Tensor>> model_state(const torch::nn::Module& model) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : model.named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : model.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

// A torch bool must be 0 or 1 (`where`: the file, for the message).
void check_bools(const std::string& where, const RawTensor& r) {
  if (r.dtype == "BOOL")
    for (const char b : r.bytes)
      if (b != 0 && b != 1)
        throw Error(where + ": tensor " + r.name + " holds a BOOL that is neither 0 nor 1");
}

// The specs of model_state's tensors (their order), and the tensors in `tensors`.
std::vector<TensorSpec> model_specs(const torch::nn::Module& model,
                                    std::vector<torch::Tensor>& tensors) {
  std::vector<TensorSpec> specs;
  for (const auto& [name, tensor] : model_state(model)) {
    specs.push_back(spec_of(name, tensor));
    tensors.push_back(tensor);
  }
  return specs;
}

// Reads `file` checked against `expected` (the state's own names, dtypes and shapes; the limit
// is what they need).
SafetensorsContents read_checked(const std::string& file, const std::vector<TensorSpec>& expected) {
  SafetensorsLimits limits;
  limits.max_data_bytes = bytes_of(expected);
  SafetensorsContents read = read_safetensors(file, expected, limits);
  for (const RawTensor& r : read.tensors) check_bools("safetensors file " + file, r);
  return read;
}

// --- AdamW's state as checkpoint data: the moments as tensors, the rest (per-parameter steps,
// each group's options and parameter names) as state.json's "optimizer" object. Mirrors what
// GoodState (core/training/optimizer/recovery.h) captures and restores.
using AdamWStep = std::decay_t<decltype(std::declval<torch::optim::AdamWParamState&>().step())>;

std::map<const void*, std::string> parameter_names(const torch::nn::Module& model) {
  std::map<const void*, std::string> names;
  for (const auto& p : model.named_parameters()) names[p.value().unsafeGetTensorImpl()] = p.key();
  return names;
}

const std::string& name_of(const std::map<const void*, std::string>& names,
                           const torch::Tensor& p) {
  const auto it = names.find(p.unsafeGetTensorImpl());
  if (it == names.end()) throw Error("checkpoint: the optimiser holds a tensor the model has not");
  return it->second;
}

json optimizer_data(const torch::nn::Module& model, torch::optim::AdamW& optimizer,
                    std::vector<RawTensor>& moments) {
  const auto names = parameter_names(model);
  json groups = json::array(), steps = json::object(), max_names = json::array();
  auto& states = optimizer.state();
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    json params = json::array();
    for (auto& p : group.params()) {
      const std::string& name = name_of(names, p);
      params.push_back(name);
      const auto it = states.find(adamw_state_key(states, p));
      if (it == states.end()) continue;  // not stepped yet: no moments
      const auto& s = static_cast<const torch::optim::AdamWParamState&>(*it->second);
      steps[name] = static_cast<int64_t>(s.step());
      moments.push_back(raw_of(name + ".exp_avg", s.exp_avg()));
      moments.push_back(raw_of(name + ".exp_avg_sq", s.exp_avg_sq()));
      if (s.max_exp_avg_sq().defined()) {
        moments.push_back(raw_of(name + ".max_exp_avg_sq", s.max_exp_avg_sq()));
        max_names.push_back(name);
      }
    }
    groups.push_back({{"lr", o.lr()},
                      {"betas", {std::get<0>(o.betas()), std::get<1>(o.betas())}},
                      {"eps", o.eps()},
                      {"weight_decay", o.weight_decay()},
                      {"amsgrad", o.amsgrad()},
                      {"params", params}});
  }
  return {{"steps", steps}, {"max_exp_avg_sq", max_names}, {"param_groups", groups}};
}

// state.json's "optimizer" checked against this optimiser before optimizer.safetensors is read:
// the same groups of the same parameters, steps only for this model's parameters.
struct OptimizerPlan {
  std::vector<torch::Tensor> params;  // with moments, in param_groups order
  std::vector<int64_t> steps;
  std::vector<bool> max;  // has max_exp_avg_sq
  std::vector<TensorSpec> specs;
  std::vector<torch::optim::AdamWOptions> options;  // per group
};

OptimizerPlan plan_optimizer(const json& meta, const torch::nn::Module& model,
                             torch::optim::AdamW& optimizer, const std::string& where) {
  const auto names = parameter_names(model);
  const json& groups = meta.at("param_groups");
  const json& steps = meta.at("steps");
  std::set<std::string> max_set;
  for (const auto& m : meta.at("max_exp_avg_sq")) max_set.insert(m.get<std::string>());
  if (!groups.is_array() || groups.size() != optimizer.param_groups().size() || !steps.is_object())
    throw Error(where + ": optimizer.param_groups does not match this model's optimiser (" +
                std::to_string(optimizer.param_groups().size()) + " groups)");
  OptimizerPlan plan;
  size_t with_steps = 0, with_max = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const json& saved = groups[g];
    json mine = json::array();
    for (auto& p : optimizer.param_groups()[g].params()) mine.push_back(name_of(names, p));
    if (saved.at("params") != mine)
      throw Error(where + ": optimizer.param_groups[" + std::to_string(g) +
                  "] lists other parameters than this model's");
    plan.options.push_back(
        torch::optim::AdamWOptions(saved.at("lr").get<double>())
            .betas({saved.at("betas").at(0).get<double>(), saved.at("betas").at(1).get<double>()})
            .eps(saved.at("eps").get<double>())
            .weight_decay(saved.at("weight_decay").get<double>())
            .amsgrad(saved.at("amsgrad").get<bool>()));
    for (auto& p : optimizer.param_groups()[g].params()) {
      const std::string& name = name_of(names, p);
      if (!steps.contains(name)) continue;
      const int64_t step = steps[name].get<int64_t>();
      if (step < 0) throw Error(where + ": optimizer.steps." + name + " is negative");
      plan.params.push_back(p);
      plan.steps.push_back(step);
      plan.max.push_back(max_set.count(name) > 0);
      plan.specs.push_back(spec_of(name + ".exp_avg", p));
      plan.specs.push_back(spec_of(name + ".exp_avg_sq", p));
      if (plan.max.back()) plan.specs.push_back(spec_of(name + ".max_exp_avg_sq", p));
      ++with_steps;
      with_max += plan.max.back() ? 1 : 0;
    }
  }
  if (with_steps != steps.size() || with_max != max_set.size())
    throw Error(where + ": optimizer names a parameter this model does not have");
  return plan;
}

// Installs a plan's moments (read and checked) in the optimiser.
void apply_optimizer(const OptimizerPlan& plan, const SafetensorsContents& read,
                     torch::optim::AdamW& optimizer) {
  torch::NoGradGuard no_grad;
  for (size_t g = 0; g < plan.options.size(); ++g)
    static_cast<torch::optim::AdamWOptions&>(optimizer.param_groups()[g].options()) =
        plan.options[g];
  auto& states = optimizer.state();
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) states.erase(adamw_state_key(states, p));
  size_t k = 0;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const torch::Tensor& p = plan.params[i];
    auto moment = [&] {
      torch::Tensor t = torch::empty_like(p, torch::MemoryFormat::Contiguous);
      copy_raw_into(t, read.tensors[k++]);
      return t;
    };
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(static_cast<AdamWStep>(plan.steps[i]));
    state->exp_avg(moment());
    state->exp_avg_sq(moment());
    if (plan.max[i]) state->max_exp_avg_sq(moment());
    states[adamw_state_key(states, p)] = std::move(state);
  }
}

// --- The old format (model.pt, optimizer.pt), read as data only
// (core/runs/formats/legacy_archive.h): LibTorch's archive loader is never called (it compiles and
// runs the TorchScript the archives carry). The limit on each archive is what its tensors need plus
// room for the pickle and the code/ it holds.
constexpr uint64_t kLegacyOverheadBytes = 64ull << 20;

// A module tree's tensors by the names named_parameters()/named_buffers() give
// ("block0.fc1.weight").
// A pickle can make a module hold itself: the depth is bounded (attnlab's models nest 3 deep).
void legacy_tensors(const LegacyValue& module, const std::string& prefix,
                    std::map<std::string, const LegacyValue*>& out, const std::string& file,
                    int depth = 0) {
  if (depth > 32) throw Error("old checkpoint " + file + " nests modules more than 32 deep");
  for (const auto& [key, child] : module.dict) {
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    if (child->kind == LegacyValue::Kind::Dict && !child->class_name.empty())
      legacy_tensors(*child, name, out, file, depth + 1);
    else if (child->kind == LegacyValue::Kind::Tensor)
      out[name] = child.get();
  }
}

// model.pt's tensors, checked against `specs` (the model's own, in its order): the same set.
std::vector<RawTensor> read_legacy_model(const std::string& file,
                                         const std::vector<TensorSpec>& specs) {
  const LegacyArchive archive(file, {bytes_of(specs) + kLegacyOverheadBytes});
  if (archive.root().kind != LegacyValue::Kind::Dict || archive.root().class_name.empty())
    throw Error("old checkpoint " + file + " does not hold a module");
  std::map<std::string, const LegacyValue*> found;
  legacy_tensors(archive.root(), "", found, file);
  std::vector<RawTensor> out;
  for (const TensorSpec& s : specs) {
    const auto it = found.find(s.name);
    if (it == found.end())
      throw Error("old checkpoint " + file + " lacks this model's tensor " + s.name);
    out.push_back(archive.read_tensor(*it->second, s));
    found.erase(it);
  }
  if (!found.empty())
    throw Error("old checkpoint " + file + " holds tensor " + found.begin()->first +
                ", which this model does not have");
  return out;
}

const LegacyValue& legacy_entry(const LegacyValue* v, LegacyValue::Kind kind,
                                const std::string& file, const std::string& what) {
  if (!v || v->kind != kind)
    throw Error("old checkpoint " + file + ": " + what + " is missing or of the wrong kind");
  return *v;
}

torch::optim::AdamWOptions legacy_adamw_options(const LegacyValue* options, const std::string& file,
                                                const std::string& at) {
  using K = LegacyValue::Kind;
  const LegacyValue& o = legacy_entry(options, K::Dict, file, at + ".options");
  auto real = [&](const char* key) {
    return legacy_entry(o.find(key), K::Float, file, at + ".options." + key).f;
  };
  const LegacyValue& betas = legacy_entry(o.find("betas"), K::Tuple, file, at + ".options.betas");
  if (betas.items.size() != 2 || betas.items[0]->kind != K::Float ||
      betas.items[1]->kind != K::Float)
    throw Error("old checkpoint " + file + ": " + at + ".options.betas is not two numbers");
  return torch::optim::AdamWOptions(real("lr"))
      .betas({betas.items[0]->f, betas.items[1]->f})
      .eps(real("eps"))
      .weight_decay(real("weight_decay"))
      .amsgrad(legacy_entry(o.find("amsgrad"), K::Bool, file, at + ".options.amsgrad").b);
}

// optimizer.pt (AdamW's OutputArchive: "state" keyed by parameter ids, "param_groups/<g>" listing
// "params/<i>" ids and "options") as the plan apply_optimizer installs, and its moments.
OptimizerPlan read_legacy_optimizer(const std::string& file, const torch::nn::Module& model,
                                    torch::optim::AdamW& optimizer,
                                    std::vector<RawTensor>& moments) {
  using K = LegacyValue::Kind;
  const auto names = parameter_names(model);
  std::vector<TensorSpec> most;  // three moments per parameter at the most
  for (const auto& p : model.parameters())
    for (int k = 0; k < 3; ++k) most.push_back(spec_of("m", p));
  const LegacyArchive archive(file, {bytes_of(most) + kLegacyOverheadBytes});
  const LegacyValue& state = legacy_entry(archive.root().find("state"), K::Dict, file, "state");
  const LegacyValue& groups =
      legacy_entry(archive.root().find("param_groups"), K::Dict, file, "param_groups");
  const size_t n_groups = optimizer.param_groups().size();
  if (groups.find("param_groups/" + std::to_string(n_groups)))
    throw Error("old checkpoint " + file + " has more parameter groups than this model's " +
                std::to_string(n_groups));
  OptimizerPlan plan;
  for (size_t g = 0; g < n_groups; ++g) {
    const std::string at = "param_groups/" + std::to_string(g);
    const LegacyValue& group = legacy_entry(groups.find(at), K::Dict, file, at);
    plan.options.push_back(legacy_adamw_options(group.find("options"), file, at));
    const auto& params = optimizer.param_groups()[g].params();
    if (group.find("params/" + std::to_string(params.size())))
      throw Error("old checkpoint " + file + ": " + at +
                  " lists more parameters than this model's");
    for (size_t i = 0; i < params.size(); ++i) {
      const std::string id =
          legacy_entry(group.find("params/" + std::to_string(i)), K::String, file, at + ".params")
              .s;
      const LegacyValue* s = state.find(id);
      if (!s) continue;  // a parameter that never took a step has no state
      const std::string& name = name_of(names, params[i]);
      const int64_t step = legacy_entry(s->find("step"), K::Int, file, "state." + name + ".step").i;
      if (step < 0) throw Error("old checkpoint " + file + ": state." + name + ".step is negative");
      plan.params.push_back(params[i]);
      plan.steps.push_back(step);
      plan.max.push_back(s->find("max_exp_avg_sq") != nullptr);
      std::vector<std::string> kinds = {"exp_avg", "exp_avg_sq"};
      if (plan.max.back()) kinds.push_back("max_exp_avg_sq");
      for (const std::string& kind : kinds) {
        plan.specs.push_back(spec_of(name + "." + kind, params[i]));
        moments.push_back(archive.read_tensor(
            legacy_entry(s->find(kind), K::Tensor, file, "state." + name + "." + kind),
            plan.specs.back()));
      }
    }
  }
  return plan;
}

}  // namespace

void TrainingSession::save(const std::string& dir) {
  save_checkpoint(dir, false);
}

// Writes the old format's files (model.pt, optimizer.pt) into tmp; returns their records.
json TrainingSession::write_old_format(const fs::path& tmp) {
  std::ostringstream model_bytes, optimizer_bytes;
  torch::save(model_, model_bytes);
  torch::serialize::OutputArchive archive;
  optimizer_->save(archive);
  archive.save_to(optimizer_bytes);
  write_file_atomic((tmp / "model.pt").string(), model_bytes.str());
  write_file_atomic((tmp / "optimizer.pt").string(), optimizer_bytes.str());
  return {{"model.pt", file_record(tmp / "model.pt")},
          {"optimizer.pt", file_record(tmp / "optimizer.pt")}};
}

void TrainingSession::save_checkpoint(const std::string& dir, bool old_format) {
  settle_quietly();
  const fs::path target = fs::absolute(dir);
  const fs::path tmp = target.string() + ".tmp-" + std::to_string(getpid());
  std::error_code ec;
  remove_stale_siblings(target.string());  // left by saves that were killed
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throw Error("cannot create checkpoint directory " + tmp.string() + ": " + ec.message());
  try {
    json state = {{"format", kFormat},
                  {"format_version", old_format ? kOldFormatVersion : kFormatVersion},
                  {"attnlab", version_string()},
                  {"step", step_},
                  {"peak_lr", peak_lr_},
                  {"config", to_json(config_)},
                  {"last_train_loss", last_train_loss_},
                  {"loss_interval", {{"sum", interval_.sum}, {"steps", interval_.steps}}},
                  {"last_eval", {{"loss", last_eval_.loss}, {"accuracy", last_eval_.accuracy}}},
                  {"history",
                   {{"train_loss", train_loss_.to_json()},
                    {"eval_loss", eval_loss_.to_json()},
                    {"eval_accuracy", eval_accuracy_.to_json()}}}};
    if (old_format) {
      state["files"] = write_old_format(tmp);
    } else {
      // Data only (safetensors and JSON): nothing in a checkpoint can run code when it is read.
      std::vector<RawTensor> weights, moments;
      for (const auto& [name, tensor] : model_state(*model_))
        weights.push_back(raw_of(name, tensor));
      state["optimizer"] = optimizer_data(*model_, *optimizer_, moments);
      const std::map<std::string, std::string> meta = {{"format", kFormat},
                                                       {"step", std::to_string(step_)}};
      write_file_atomic((tmp / kModelFile).string(), safetensors_bytes(weights, meta));
      write_file_atomic((tmp / kOptimizerFile).string(), safetensors_bytes(moments, meta));
      state["files"] = {{kModelFile, file_record(tmp / kModelFile)},
                        {kOptimizerFile, file_record(tmp / kOptimizerFile)}};
    }
    // state.json last: a directory without it is never taken for a checkpoint.
    write_file_atomic((tmp / "state.json").string(), state.dump(1) + "\n");
    // Swap into place: the old checkpoint is removed only after the new one is complete.
    replace_directory(tmp.string(), target.string());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

ExperimentConfig TrainingSession::checkpoint_config(const std::string& dir) {
  const json state = read_state(dir);
  return parse_config(state.at("config"), dir + "/state.json");
}

void TrainingSession::check_checkpoint_config(const json& state, const std::string& dir) const {
  // The stored config goes through the parser first, so a checkpoint written before a config key
  // existed compares with that key's default instead of failing as "missing".
  json theirs;
  try {
    theirs = to_json(parse_config(state.at("config"), dir));
  } catch (const json::exception& e) {
    throw Error("checkpoint " + dir + "/state.json is incomplete: " + e.what());
  }
  json mine = to_json(config_);
  mine["train"].erase("steps");  // a resumed run may be extended
  theirs["train"].erase("steps");
  mine.erase("device");  // weights move between CPU and GPU (export loads on the CPU)
  theirs.erase("device");
  const std::string diff = first_difference(theirs, mine);
  if (!diff.empty())
    throw Error("checkpoint " + dir + " was saved with a different config (" + diff + ")");
}

TrainingSession::Checkpointed TrainingSession::read_checkpointed(const json& state,
                                                                 const std::string& dir) const {
  Checkpointed c;
  c.books.train_loss = train_loss_;  // the histories' capacities
  c.books.eval_loss = eval_loss_;
  c.books.eval_accuracy = eval_accuracy_;
  try {
    c.step = state.at("step").get<int64_t>();
    c.peak_lr = state.at("peak_lr").get<double>();
    c.books.last_train_loss = state.at("last_train_loss").get<double>();
    if (state.contains("loss_interval"))  // checkpoints before it existed: an empty interval
      c.books.interval = {state["loss_interval"].at("sum").get<double>(),
                          state["loss_interval"].at("steps").get<int64_t>()};
    c.books.last_eval = {state.at("last_eval").at("loss").get<double>(),
                         state.at("last_eval").at("accuracy").get<double>()};
    const auto& h = state.at("history");
    c.books.train_loss.from_json(h.at("train_loss"));
    c.books.eval_loss.from_json(h.at("eval_loss"));
    c.books.eval_accuracy.from_json(h.at("eval_accuracy"));
  } catch (const json::exception& e) {
    throw Error("checkpoint " + dir + "/state.json is incomplete: " + e.what());
  }
  if (c.step < 0) throw Error("checkpoint " + dir + "/state.json: step " + std::to_string(c.step));
  return c;
}

void TrainingSession::install(Checkpointed&& c) {
  model_->to(device_);
  step_ = c.step;
  if (monitor_)  // measurements of the loaded weights; the histories restart at the checkpoint
    monitor_ = make_architecture_monitor(*model_, config_.model, step_);
  peak_lr_ = c.peak_lr;
  last_train_loss_ = c.books.last_train_loss;
  interval_ = c.books.interval;
  last_eval_ = c.books.last_eval;
  train_loss_ = std::move(c.books.train_loss);
  eval_loss_ = std::move(c.books.eval_loss);
  eval_accuracy_ = std::move(c.books.eval_accuracy);
  good_.clear();  // the copy of the state before the load is no recovery point for this run
  // Curves before the checkpoint are not stored in it: the history restarts here.
  mechanism_views_ = std::make_shared<const std::vector<MechanismFrame>>();
  record_mechanism_views();
}

void TrainingSession::load(const std::string& dir) {
  drop_graph();
  const json state = read_state(dir);
  check_checkpoint_config(state, dir);
  // Everything is read and checked before the weights are touched: state.json, both files'
  // records, and both files against what this model and its optimiser hold (bounded reader,
  // core/runs/formats/safetensors.h). A refused checkpoint leaves the session exactly as it was.
  Checkpointed c = read_checkpointed(state, dir);
  check_file_record(state, dir, kModelFile);
  check_file_record(state, dir, kOptimizerFile);
  const std::string model_file = (fs::path(dir) / kModelFile).string();
  const std::string optimizer_file = (fs::path(dir) / kOptimizerFile).string();
  std::vector<torch::Tensor> tensors;
  const std::vector<TensorSpec> specs = model_specs(*model_, tensors);
  const SafetensorsContents weights = read_checked(model_file, specs);
  OptimizerPlan plan;
  try {
    plan = plan_optimizer(state.at("optimizer"), *model_, *optimizer_, dir + "/state.json");
  } catch (const json::exception& e) {
    throw Error("checkpoint " + dir + "/state.json is incomplete: " + e.what());
  }
  const SafetensorsContents moments = read_checked(optimizer_file, plan.specs);
  for (size_t i = 0; i < tensors.size(); ++i) copy_raw_into(tensors[i], weights.tensors[i]);
  apply_optimizer(plan, moments, *optimizer_);
  install(std::move(c));
}

void TrainingSession::load_old_format(const std::string& dir, const json& state) {
  drop_graph();
  check_checkpoint_config(state, dir);
  Checkpointed c = read_checkpointed(state, dir);
  for (const char* name : {"model.pt", "optimizer.pt"}) {
    const fs::path file = fs::path(dir) / name;
    if (!fs::is_regular_file(file))
      throw Error("checkpoint " + dir + " is incomplete: " + name + " is missing");
    if (state.contains("files") && state["files"].contains(name))
      check_file_record(state, dir, name);
  }
  // Everything is read and checked (as data: read_legacy_model, read_legacy_optimizer) before
  // the weights are touched; a refused checkpoint leaves the session as it was.
  std::vector<torch::Tensor> tensors;
  const std::vector<TensorSpec> specs = model_specs(*model_, tensors);
  const std::vector<RawTensor> weights =
      read_legacy_model((fs::path(dir) / "model.pt").string(), specs);
  SafetensorsContents moments;
  const OptimizerPlan plan = read_legacy_optimizer((fs::path(dir) / "optimizer.pt").string(),
                                                   *model_, *optimizer_, moments.tensors);
  for (const RawTensor& r : weights) check_bools("old checkpoint " + dir, r);
  for (const RawTensor& r : moments.tensors) check_bools("old checkpoint " + dir, r);
  for (size_t i = 0; i < tensors.size(); ++i) copy_raw_into(tensors[i], weights[i]);
  apply_optimizer(plan, moments, *optimizer_);
  install(std::move(c));
}

int TrainingSession::checkpoint_format_version(const std::string& dir) {
  return format_version_of(read_state_any(dir));
}

int64_t TrainingSession::migrate_old_format(const std::string& dir) {
  const json state = read_state_any(dir);
  const int version = format_version_of(state);
  if (version != kOldFormatVersion)
    throw Error("checkpoint " + dir + " has format version " + std::to_string(version) +
                ", not attnlab's old format (" + std::to_string(kOldFormatVersion) +
                "): there is nothing to convert");
  ExperimentConfig config;
  try {
    config = parse_config(state.at("config"), dir + "/state.json");
  } catch (const json::exception& e) {
    throw Error("checkpoint " + dir + "/state.json is incomplete: " + e.what());
  }
  const std::string device = config.device;
  config.device = "cpu";
  TrainingSession session(config);
  session.load_old_format(dir, state);
  session.config_.device = device;  // state.json keeps the run's own device
  session.save(dir);  // replaces the directory whole: the old files go only once this is complete
  return session.step();
}

int64_t TrainingSession::downgrade_for_tests(const std::string& dir) {
  ExperimentConfig config = checkpoint_config(dir);
  const std::string device = config.device;
  config.device = "cpu";
  TrainingSession session(config);
  session.load(dir);
  session.config_.device = device;
  session.save_checkpoint(dir, true);
  return session.step();
}

void load_checkpoint_weights(torch::nn::Module& model, const std::string& dir) {
  const json state = read_state(dir);
  check_file_record(state, dir, kModelFile);
  std::vector<TensorSpec> specs;
  std::vector<torch::Tensor> tensors;
  for (const auto& [name, tensor] : model_state(model)) {
    specs.push_back(spec_of(name, tensor));
    tensors.push_back(tensor);
  }
  const std::string file = (fs::path(dir) / kModelFile).string();
  const SafetensorsContents weights = read_checked(file, specs);
  for (size_t i = 0; i < tensors.size(); ++i) copy_raw_into(tensors[i], weights.tensors[i]);
}

}  // namespace attn
