#include "core/config/benchmark_settings.h"

#include <algorithm>

#include "core/base/error.h"

namespace attn {

const std::vector<std::string>& benchmark_task_names() {
  static const std::vector<std::string> names = {"mqar",   "selective_copy", "induction_head",
                                                 "parity", "reverse_string", "duplicate_string"};
  return names;
}

bool is_length_generalisation_task(const std::string& name) {
  return name == "parity" || name == "reverse_string" || name == "duplicate_string";
}

void check_benchmark_task(const TaskConfig& t, const std::string& where) {
  const auto fail = [&](const std::string& what) {
    throw Error(where + ": " + what + " for task \"" + t.name + "\"");
  };
  const std::string n = std::to_string(t.length), L = std::to_string(t.context),
                    V = std::to_string(t.vocab);
  if (t.name == "mqar") {
    if (t.context % 2 != 0)
      fail("task.context (" + L + ") must be even (queries sit at even offsets)");
    if (t.vocab < 2 * t.length + 2)
      fail("task.vocab (" + V + ") must be at least 2 * task.length + 2 (" +
           std::to_string(2 * t.length + 2) + "): ids 1..V/2-1 are keys, V/2..V-1 values");
    if (4 * t.length > t.context)
      fail("task.length (" + n + " key-value pairs) must be at most task.context / 4 (" +
           std::to_string(t.context / 4) + ")");
    if (t.length > t.vocab / 2 - 1)
      fail("task.length (" + n + " distinct keys) must be at most task.vocab / 2 - 1 (" +
           std::to_string(t.vocab / 2 - 1) + ")");
    // Zoology's own assertion (multiquery_ar.py: vocab_size > input_seq_len): below it the task
    // is easier than the reference's at any budget, with fewer keys to tell apart.
    if (t.vocab <= t.context)
      fail("task.vocab (" + V + ") must be greater than task.context (" + L +
           "), as Zoology asserts (vocab_size > input_seq_len): the least task.vocab that passes "
           "is " +
           std::to_string(std::max(t.context + 1, 2 * t.length + 2)));
  } else if (t.name == "selective_copy") {
    if (t.vocab < 3) fail("task.vocab (" + V + ") must be at least 3 (symbols, blank, copy)");
    if (t.context < 2 * t.length + 1)
      fail("task.context (" + L + ") must be at least 2 * task.length + 1 (" +
           std::to_string(2 * t.length + 1) + ")");
  } else if (t.name == "induction_head") {
    if (t.vocab < 3) fail("task.vocab (" + V + ") must be at least 3 (symbols, trigger, no-op)");
    if (t.context < 3) fail("task.context (" + L + ") must be at least 3");
  } else if (t.name == "parity") {
    if (t.vocab != 2) fail("task.vocab (" + V + ") must be 2: parity is of a bit string");
  }
}

}  // namespace attn
