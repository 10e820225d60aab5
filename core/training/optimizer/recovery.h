// GoodState (torch; internal to core): an in-memory copy of a session's trainable state (every
// parameter and buffer of the model, and AdamW's per-parameter moments) so an optimiser step that
// blows the run up can be undone. TrainingSession captures it before every update. Contract:
//  - capture() copies into tensors allocated at the first capture (copy_, no allocation per
//    step afterwards): the cost is one pass over 3x the parameters, small next to the step's
//    forward, backward and AdamW passes (measured in docs/guide/hardening.md).
//  - restore() puts back exactly what was captured (bit-identical), including "no moments
//    yet" for a parameter the optimiser had not stepped; the model and optimiser must be the
//    ones captured (same parameters, same order).
// Not thread-safe (the session's thread owns it).
#pragma once
#include <torch/torch.h>

#include <vector>

namespace attn {

class GoodState {
 public:
  void capture(torch::nn::Module& model, torch::optim::AdamW& optimizer);
  void restore(torch::nn::Module& model, torch::optim::AdamW& optimizer) const;
  bool empty() const { return !captured_; }
  void clear() { captured_ = false; }

 private:
  struct Moments {
    bool present = false;  // AdamW had state for this parameter
    int64_t step = 0;
    torch::Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;
  };
  bool captured_ = false;
  std::vector<torch::Tensor> tensors_;  // parameters then buffers, in the model's order
  std::vector<Moments> moments_;        // per parameter, in param_groups order
};

}  // namespace attn
