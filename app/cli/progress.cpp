#include "app/cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace attn {
namespace {

// "step N/T" anywhere in the line (a sweep prefixes its cell tag): the fraction done, or -1.
double step_fraction(const std::string& line) {
  const size_t at = line.find("step ");
  if (at == std::string::npos) return -1;
  long long done = 0, total = 0;
  if (std::sscanf(line.c_str() + at, "step %lld/%lld", &done, &total) != 2 || total <= 0) return -1;
  return static_cast<double>(done) / static_cast<double>(total);
}

}  // namespace

ProgressPrinter::ProgressPrinter(bool quiet) : quiet_(quiet) {
  const char* mode = std::getenv(kProgressEnv);
  redraw_ = isatty(STDERR_FILENO) && !(mode && std::strcmp(mode, "lines") == 0);
}

void ProgressPrinter::operator()(const std::string& line) {
  if (quiet_) return;
  const double fraction = redraw_ ? step_fraction(line) : -1;
  if (fraction < 0) {
    finish();
    // One write per line: the cells of `sweep -j N` share this stderr, and a line written in two
    // pieces (text, then newline) can have another process's line land between them.
    std::cerr << (line + "\n") << std::flush;
    return;
  }
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(fraction * kWidth + 0.5);
  std::cerr << "\r\033[K[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] "
            << line << std::flush;
  pending_ = true;
}

void ProgressPrinter::finish() {
  if (pending_) std::cerr << std::endl;
  pending_ = false;
}

}  // namespace attn
