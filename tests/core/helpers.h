// Shared helpers for the core test suites.
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <unistd.h>  // getpid

#include "core/config.h"

namespace attn::test {

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

}  // namespace attn::test
