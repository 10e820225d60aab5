// Shared helpers for the core test suites.
#pragma once
#include <torch/torch.h>
#include <unistd.h>  // getpid

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "core/base/error.h"
#include "core/config/config.h"
#include "core/training/session/session.h"
#include "core/training/trainer.h"

namespace attn::test {

// The attn::Error message f() throws ("" when it throws none).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A small, fast config for tests (override fields as needed).
inline ExperimentConfig tiny_config(const std::string& task = "copy") {
  ExperimentConfig c;
  c.task.name = task;
  c.task.length = 4;
  c.task.vocab = 8;
  c.model.d_model = 16;
  c.model.heads = 2;
  c.model.layers = 2;
  c.model.attention.assign(2, "dot");
  c.train.steps = 50;
  c.train.batch_size = 8;
  c.train.warmup = 5;
  c.train.eval_every = 10;
  c.train.eval_batches = 2;
  c.threads = 1;
  return c;
}

// A config whose loss reaches NaN/Inf within a few steps (lr 1e6, no warmup, no clipping).
inline ExperimentConfig diverging_config() {
  ExperimentConfig c = tiny_config();
  c.train.lr = 1e6;
  c.train.warmup = 0;
  c.train.grad_clip = 0;
  return c;
}

// Polls pred every 2 ms until it holds or the timeout passes; returns whether it held.
inline bool wait_until(const std::function<bool()>& pred, double seconds = 30.0) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return pred();
}

inline std::string temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("attnlab-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

// Copies of a session's parameters, and exact equality of two such copies.
inline std::vector<torch::Tensor> params_of(TrainingSession& s) {
  std::vector<torch::Tensor> out;
  for (auto& p : s.model()->parameters()) out.push_back(p.detach().clone());
  return out;
}
inline bool same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

// A trainer that publishes often, on one thread: state changes show within milliseconds.
inline TrainerOptions fast_options() {
  TrainerOptions o;
  o.threads = 1;
  o.publish_interval_ms = 5;
  return o;
}
// The trainer and its latest snapshot both report state s.
inline bool in_state(const Trainer& t, TrainerState s) {
  return t.state() == s && t.latest()->state == s;
}

}  // namespace attn::test
