#include "core/analysis/head_metrics.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>

#include "core/base/error.h"

namespace attn {
namespace {

void check(const std::vector<float>& w, int size, const char* what) {
  if (size <= 0)
    throw Error(std::string(what) + ": a map of size " + std::to_string(size) +
                " (a map is at least 1 x 1)");
  if (w.size() != static_cast<size_t>(size) * size)
    throw Error(std::string(what) + ": a map of size " + std::to_string(size) + " needs " +
                std::to_string(static_cast<size_t>(std::max(size, 0)) * std::max(size, 0)) +
                " weights, got " + std::to_string(w.size()));
}

double at(const std::vector<float>& w, int size, int q, int k) {
  const float v = w[static_cast<size_t>(q) * size + k];
  return std::isfinite(v) ? v : 0.0;
}

// Which rows a metric averages over: `rows`, or every row when empty.
std::vector<char> row_mask(int size, const std::vector<int>& rows, const char* what) {
  std::vector<char> mask(static_cast<size_t>(size), rows.empty() ? 1 : 0);
  for (const int q : rows) {
    if (q < 0 || q >= size)
      throw Error(std::string(what) + ": row " + std::to_string(q) + " is outside a map of size " +
                  std::to_string(size));
    mask[static_cast<size_t>(q)] = 1;
  }
  return mask;
}

double mean_or_nan(double total, int count) {
  return count ? total / count : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

double map_entropy(const std::vector<float>& w, int size, const std::vector<int>& rows) {
  check(w, size, "entropy");
  const auto mask = row_mask(size, rows, "entropy");
  double total = 0;
  int count = 0;
  for (int q = 0; q < size; ++q) {
    if (!mask[q]) continue;
    double h = 0;
    for (int k = 0; k < size; ++k) {
      const double p = at(w, size, q, k);
      if (p > 0) h -= p * std::log(p);
    }
    total += h;
    ++count;
  }
  return mean_or_nan(total, count);
}

// The mean weight `offset` keys back from the query, w[q][q - offset], over the chosen rows.
static double mean_at_offset(const std::vector<float>& w, int size, const std::vector<int>& rows,
                             const char* metric, int offset) {
  check(w, size, metric);
  const auto mask = row_mask(size, rows, metric);
  double total = 0;
  int count = 0;
  for (int q = offset; q < size; ++q)
    if (mask[q]) total += at(w, size, q, q - offset), ++count;
  return mean_or_nan(total, count);
}

double map_diagonal(const std::vector<float>& w, int size, const std::vector<int>& rows) {
  return mean_at_offset(w, size, rows, "diagonal", 0);
}

double map_previous_token(const std::vector<float>& w, int size, const std::vector<int>& rows) {
  return mean_at_offset(w, size, rows, "previous_token", 1);
}

double map_induction(const std::vector<float>& w, int size, const std::vector<std::string>& tokens,
                     const std::vector<int>& rows) {
  check(w, size, "induction");
  if (tokens.size() != static_cast<size_t>(size))
    throw Error("induction: " + std::to_string(tokens.size()) + " tokens for a map of size " +
                std::to_string(size));
  const auto mask = row_mask(size, rows, "induction");
  std::unordered_map<std::string, int> last;  // token -> its latest position so far
  double total = 0;
  int count = 0;
  for (int q = 0; q < size; ++q) {
    const auto it = last.find(tokens[q]);
    if (mask[q] && it != last.end() && it->second + 1 < size) {
      total += at(w, size, q, it->second + 1);
      ++count;
    }
    last[tokens[q]] = q;
  }
  return mean_or_nan(total, count);
}

int effective_window(const float* beta, int window, double mass) {
  if (window <= 0) throw Error("effective_window: the window must be positive");
  std::vector<double> b(beta, beta + window);
  for (double& v : b) v = std::isfinite(v) && v > 0 ? v : 0.0;
  std::sort(b.begin(), b.end(), std::greater<>());
  double total = 0;
  for (double v : b) total += v;
  if (!(total > 0)) return window;
  double sum = 0;
  for (int j = 0; j < window; ++j) {
    sum += b[j];
    if (sum >= mass * total * (1 - 1e-6)) return j + 1;  // float32 inputs: 0.7f + 0.2f < 0.9
  }
  return window;
}

}  // namespace attn
