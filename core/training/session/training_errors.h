// The message for an exception that ended training, one helper for `attnlab train` and the
// window's trainer: one or two lines, never LibTorch's stack frames.
// Torch-free.
#pragma once
#include <cstdint>
#include <exception>
#include <string>

#include "core/config/config.h"

namespace attn {

// Whether e is an allocation failure: std::bad_alloc, or a LibTorch error whose text says so
// (the CPU allocator's "DefaultCPUAllocator: can't allocate memory" / "not enough memory", CUDA's
// "out of memory"). attn::Error is never one: attnlab's own errors say what they mean.
bool is_allocation_failure(const std::exception& e);

// For an allocation failure: "out of memory[ on DEVICE][ at step N]: it tried to allocate X
// (one tensor); one step's activations are about Y", then the config keys that set the size
// with their values (train.batch_size, the sequence: task.context / task.length / task.patch,
// model.d_model, model.layers, model.heads) and what to lower first. Otherwise the exception's
// first line (LibTorch appends "Exception raised from ..." and its frames on later lines).
// step < 0 and an empty device are left out.
std::string training_failure_message(const std::exception& e, const ExperimentConfig& c,
                                     int64_t step = -1, const std::string& device = "");

// The first line of a message (LibTorch appends "Exception raised from ..." and its frames).
std::string first_line(const std::string& s);

// Tokens per example the config's task feeds the model (its sequence length), for estimates.
int64_t config_sequence_length(const ExperimentConfig& c);

}  // namespace attn
