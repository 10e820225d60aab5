// Pluggable attention mechanisms (torch; internal to core and its tests).
// A mechanism is a torch module mapping x [B, L, D] -> [B, L, D], built by name; the model,
// trainer and app only ever see the name. A mechanism is its folder plus one row. To add one:
//  1. core/attention/<name>/<name>_options.{h,cpp}: its typed options and their one parser
//     (JsonReader, core/json/json_reader.h), and its MechanismDescriptor (core/attention/
//     mechanism.h): help, validation, the closed-form parameter count, which positions it takes
//     and its rules on the whole config (the resolve hook; the config parser knows no mechanism
//     by name, so a rule such as "not in a causal model" lives here);
//  2. core/attention/<name>/<name>_attention.{h,cpp}: the AttentionModule, which reads its
//     options through the same parser, and make_<name>_attention();
//  3. one row ATTN_MECHANISM(<name>) in core/attention/mechanisms.def. core/CMakeLists.txt
//     globs each folder: <name>_options.cpp goes to the torch-free library, the rest to torch.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/views/mechanism_view.h"

namespace attn {

struct AttentionSpec {
  int d_model = 0;
  int heads = 1;
  bool causal = true;
  double dropout = 0.0;
  int layer = 0;
  // model.position: "learned" and "none" leave attention alone (the model adds the table or
  // nothing); "rope" and "alibi" are applied inside the mechanism (core/attention/position/).
  std::string position = "learned";
  double rope_base = 10000.0;
  nlohmann::json options = nlohmann::json::object();  // model.attention_options.<name>
};

// What every multi-head mechanism reads from its spec: the head split, the mask and dropout.
struct HeadShape {
  int heads = 1, head_dim = 0;  // head_dim = d_model / heads
  bool causal = true;
  double dropout = 0.0;
  static HeadShape of(const AttentionSpec& spec) {
    return {spec.heads, spec.d_model / spec.heads, spec.causal, spec.dropout};
  }
};

// An evaluation-time intervention on one layer's per-head outputs, the [B, H, L, Dh] tensor a
// mechanism computes before its output projection (core/training/interventions/interventions.h
// drives these: ablation, mean ablation, uniform attention, activation patching). Never set while
// training.
struct HeadIntervention {
  enum class Kind : uint8_t {
    keep,     // the head as it is
    zero,     // output 0 (the head's slice of the output projection sees nothing)
    replace,  // output taken from `replacement` (a mean over an eval set, or a clean run)
    uniform,  // the head attends uniformly over the keys each query may see
  };
  std::vector<Kind> kinds;    // one per head of the layer; missing heads keep
  torch::Tensor replacement;  // [1 or B, H, L, Dh], read for `replace` heads
  // Optional bool [L] (or [B, L], per example): intervene only at these query positions.
  torch::Tensor positions;
  // Store the per-head outputs, before this intervention changes them, in `captured`: detached,
  // or (keep_graph) still in the autograd graph, for a gradient with respect to them.
  bool capture = false;
  bool keep_graph = false;
  // With capture: the outputs become a new leaf of the autograd graph (`captured`, requiring a
  // gradient) that the layer goes on with, so nothing before them needs recording. Only for
  // the first layer an attribution asks about: a later layer's leaf would cut the paths from
  // earlier heads through it.
  bool leaf = false;
  torch::Tensor captured;
  bool active() const;  // some head is not `keep`
};

class AttentionModule : public torch::nn::Module {
 public:
  // x: [B, L, D]. Returns [B, L, D].
  virtual torch::Tensor forward(const torch::Tensor& x) = 0;

  // When record_weights is set, forward() stores the per-head attention weights as a detached
  // [B, H, L, L] tensor in recorded_weights (row = query). Used for the probe input only.
  bool record_weights = false;
  torch::Tensor recorded_weights;

  // Called after the model's GPT-2 initialisation has overwritten every weight matrix: a module
  // whose parameters need another scheme (e.g. KY's connection networks) restores it here.
  virtual void reset_own_parameters() {}

  // What the mechanism wants shown of itself now (core/views/mechanism_view.h): its curves,
  // matrices and scalars, read from its parameters without gradients, random draws or any
  // change to the module. The session asks every layer at each evaluation and probe and keeps
  // the answers over training; views.rec, the run directory and the figures take them from there
  // without knowing the mechanism. Nothing (the default) when it has nothing to show. The caller
  // sets the view's mechanism name and layer.
  virtual std::optional<MechanismView> observe() { return std::nullopt; }
  // What a panel asks the mechanism to show (a JSON object of the mechanism's own keys; Trainer::
  // request_mechanism_view): kept by the module for its later observe() calls. Throws attn::Error
  // naming the key for a request it cannot read. Ignored (the default) when it takes none.
  virtual void set_view_request(const nlohmann::json& request) { (void)request; }

  // Set: forward() applies it to the per-head outputs (and takes no fused path that hides
  // them). Null in training.
  std::shared_ptr<HeadIntervention> intervention;

 protected:
  // Applies `intervention` (if any) to per-head outputs y [B, H, L, Dh]. `uniform_output` gives
  // every head's output under uniform attention over the keys each query may see, [B, H, L, Dh];
  // it is called only when some head is ablated that way.
  torch::Tensor intervene(const torch::Tensor& y,
                          const std::function<torch::Tensor()>& uniform_output);

 private:
  // intervene's changes to the heads (zero, replace, uniform), once capture has been done.
  torch::Tensor intervene_on(const torch::Tensor& y,
                             const std::function<torch::Tensor()>& uniform_output);
};

// Uniform attention over the keys a query may see in full or causal attention: the running mean
// of v [B, H, L, Dh] along L (causal) or its mean, at every query (bidirectional).
torch::Tensor uniform_attention(const torch::Tensor& v, bool causal);

// Builds the named mechanism's module (its row's make_<id>_attention). Throws attn::Error naming
// an unknown mechanism and the known ones, or a bad option (model.attention_options.<name>.<key>).
std::shared_ptr<AttentionModule> make_attention(const std::string& name, const AttentionSpec& spec);
// A test build's factory for a mechanism it registered (register_test_mechanism, core/attention/
// registry.h): make_attention builds `name` with it after mechanisms.def's rows.
using AttentionFactory = std::shared_ptr<AttentionModule> (*)(const AttentionSpec& spec);
void register_test_attention(const std::string& name, AttentionFactory make);

// The factories, one per row of core/attention/mechanisms.def, each defined beside its module.
#define ATTN_MECHANISM(id) \
  std::shared_ptr<AttentionModule> make_##id##_attention(const AttentionSpec& spec);
#include "core/attention/mechanisms.def"
#undef ATTN_MECHANISM

// Boolean [L, L] mask, true where key j > query i (future positions), cached per length/device.
torch::Tensor causal_mask(int64_t length, const torch::Device& device);

// torch::nn::Linear's default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), in place and
// without recording gradients: for the per-head tensors that GPT-2's N(0, 0.02) init skips.
void fan_in_uniform_(torch::Tensor& t, double fan_in);

}  // namespace attn
