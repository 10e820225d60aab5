// Pluggable attention mechanisms (private to core: includes torch).
// A mechanism is a torch module mapping x [B, L, D] -> [B, L, D]. It is registered by name with a
// factory and an option validator; the model, trainer and app only ever see the name.
// To add one: implement AttentionModule, add a register_<name>() call in attention.cpp.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace attn {

struct AttentionSpec {
  int d_model = 0;
  int heads = 1;
  bool causal = true;
  double dropout = 0.0;
  int layer = 0;
  nlohmann::json options = nlohmann::json::object();  // model.attention_options.<name>
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
};

struct MechanismInfo {
  std::string name;
  std::string description;
  std::function<std::shared_ptr<AttentionModule>(const AttentionSpec&)> make;
  // Throws attn::Error naming model.attention_options.<name>.<key> for bad options.
  std::function<void(const nlohmann::json& options)> validate;
  std::string options_help;  // "key (default), ..." or empty when it takes no options
};

const MechanismInfo& find_mechanism(const std::string& name);

// Scaled dot-product multi-head attention (the baseline every mechanism is compared against).
class DotAttention : public AttentionModule {
 public:
  explicit DotAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;

 private:
  int heads_, head_dim_;
  bool causal_;
  double dropout_;
  torch::nn::Linear qkv_{nullptr}, out_{nullptr};
};

// Boolean [L, L] mask, true where key j > query i (future positions), cached per length/device.
torch::Tensor causal_mask(int64_t length, const torch::Device& device);

}  // namespace attn
