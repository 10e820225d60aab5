#include "core/training/session/training_errors.h"

#include <cstdio>
#include <new>
#include <regex>

#include "core/base/error.h"
#include "core/base/memory.h"

namespace attn {

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

namespace {

// "tried to allocate 1099511627776 bytes" (CPU) or "Tried to allocate 2.00 GiB" (CUDA) as bytes;
// 0 when the message does not say.
double tried_bytes(const std::string& what) {
  static const std::regex re(
      R"([Tt]ried to allocate ([0-9]+(\.[0-9]+)?) ?(bytes|B|KiB|MiB|GiB|TiB))");
  std::smatch m;
  if (!std::regex_search(what, m, re)) return 0;
  const double v = std::stod(m[1].str());
  const std::string unit = m[3].str();
  const double scale = unit == "KiB"   ? 1024.0
                       : unit == "MiB" ? 1048576.0
                       : unit == "GiB" ? 1073741824.0
                       : unit == "TiB" ? 1099511627776.0
                                       : 1.0;
  return v * scale;
}

std::string bytes_text(double bytes) {
  return format_bytes(bytes >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes));
}

}  // namespace

int64_t config_sequence_length(const ExperimentConfig& c) {
  const TaskConfig& t = c.task;
  if (t.name == "text") return t.context;
  if (t.name == "fashion-mnist") {
    const int64_t g = t.patch > 0 ? 28 / t.patch : 1;
    return g * g;
  }
  if (t.name == "recall") return 4 * int64_t(t.length);
  if (t.name == "modadd") return 3;
  if (t.name == "induction") return 3 * int64_t(t.length) - 1;
  return 2 * int64_t(t.length);  // copy, reverse, sort
}

bool is_allocation_failure(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return true;
  if (dynamic_cast<const Error*>(&e)) return false;
  const std::string what = e.what();
  for (const char* s :
       {"out of memory", "DefaultCPUAllocator", "can't allocate memory", "not enough memory"})
    if (what.find(s) != std::string::npos) return true;
  return false;
}

std::string training_failure_message(const std::exception& e, const ExperimentConfig& c,
                                     int64_t step, const std::string& device) {
  const std::string what = e.what();
  if (!is_allocation_failure(e)) return first_line(what);
  const TaskConfig& t = c.task;
  const ModelConfig& m = c.model;
  const int64_t tokens = config_sequence_length(c);
  const std::string sequence = t.name == "text" ? "task.context " + std::to_string(t.context)
                               : t.name == "fashion-mnist" ? "task.patch " + std::to_string(t.patch)
                               : t.name == "modadd"        ? "the task's 3"
                                                    : "task.length " + std::to_string(t.length);
  // Saved activations per layer and token: q, k, v, output, norms, residuals (~10 D), the MLP
  // (2 mlp_ratio D) and two attention-score rows per head (weights and their softmax).
  const double floats = double(c.train.batch_size) * double(tokens) * double(m.layers) *
                        ((10.0 + 2.0 * m.mlp_ratio) * m.d_model + 2.0 * m.heads * double(tokens));
  std::string out = "out of memory";
  if (!device.empty()) out += " on " + device;
  if (step >= 0) out += " at step " + std::to_string(step);
  out += ": ";
  if (const double tried = tried_bytes(what); tried > 0)
    out += "it tried to allocate " + bytes_text(tried) + " for one tensor; ";
  out += "one training step's activations are about " + bytes_text(floats * 4) + ".\n";
  out += "They grow with train.batch_size " + std::to_string(c.train.batch_size) + " x " +
         std::to_string(tokens) + " tokens (" + sequence + ") x model.d_model " +
         std::to_string(m.d_model) + " x model.layers " + std::to_string(m.layers) +
         " (attention scores: x model.heads " + std::to_string(m.heads) + " x tokens): lower " +
         "train.batch_size first, then the sequence, model.d_model or model.layers.";
  return out;
}

}  // namespace attn
