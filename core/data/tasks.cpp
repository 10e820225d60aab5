#include "core/data/tasks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include "core/base/error.h"
#include "core/config/task_shape.h"
#include "core/data/benchmark_tasks.h"
#include "core/data/fashion_mnist.h"
#include "core/data/synthetic_task.h"
#include "core/data/text_corpus.h"

namespace attn {

uint64_t mix_seed(uint64_t seed, uint64_t salt) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (salt + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

torch::Tensor Task::probe_input() const {
  return torch::tensor(probe(), torch::kInt64).unsqueeze(0);
}

std::vector<std::string> Task::probe_labels() const {
  std::vector<std::string> labels;
  for (int64_t t : probe()) labels.push_back(token_label(t));
  return labels;
}

std::vector<int64_t> Task::parse_probe(const std::string& text) const {
  if (patch_dim() > 0)
    throw Error("probe: an image task's probe is a test image (pick one by index), not text");
  std::vector<int64_t> out;
  std::string item;
  int position = 0;
  auto flush = [&] {
    if (item.empty()) return;
    ++position;
    const bool digits = item.find_first_not_of("0123456789") == std::string::npos;
    if (digits && item.size() < 10) {
      const int64_t id = std::stoll(item);
      if (id >= vocab_size())
        throw Error("probe: token " + std::to_string(position) + " is id " + item +
                    ", past this task's vocabulary (ids 0.." + std::to_string(vocab_size() - 1) +
                    ")");
      out.push_back(id);
    } else {
      int64_t found = -1;
      for (int64_t t = 0; t < vocab_size() && found < 0; ++t)
        if (token_label(t) == item) found = t;
      if (found < 0)
        throw Error("probe: token " + std::to_string(position) + " '" + item +
                    "' is neither a token id (0.." + std::to_string(vocab_size() - 1) +
                    ") nor a token label of this task");
      out.push_back(found);
    }
    item.clear();
  };
  for (const char c : text) {
    if (c == ' ' || c == ',' || c == '\t' || c == '\n')
      flush();
    else
      item += c;
  }
  flush();
  if (out.empty()) throw Error("probe: empty; type token ids or labels separated by spaces");
  return out;
}

std::vector<int64_t> Task::corrupted_twin(const std::vector<int64_t>&) const {
  throw Error(
      "this task has no corrupted twin: type the corrupted probe yourself (one that "
      "differs from the clean probe where it matters, of the same length)");
}

std::vector<int64_t> Task::scored_positions(const std::vector<int64_t>& tokens) const {
  if (tokens.empty()) return {};
  return {static_cast<int64_t>(tokens.size()) - 1};
}

Task::Twin Task::twin(const std::vector<int64_t>& clean) const {
  Twin t;
  t.tokens = corrupted_twin(clean);
  t.read = {static_cast<int64_t>(clean.size()) - 1};
  return t;
}

void Task::set_probe_index(int64_t) {
  throw Error("this task has no test images to pick: only image tasks (fashion-mnist) do");
}

namespace {

using namespace detail;

// x SEP f(x): copy, reverse or sort the n symbols after the separator.
class TransformTask : public SyntheticTask {
 public:
  using SyntheticTask::SyntheticTask;
  int vocab_size() const override { return c_.vocab + 1; }
  int sequence_length() const override { return 2 * c_.length; }

 protected:
  std::string special_label(int64_t) const override { return "|"; }

 public:
  std::string label_legend() const override { return "| = separator"; }

  // x SEP y[0..m-1]: the next output is y[m], a copy of x[m] (copy) or x[n-1-m] (reverse).
  std::vector<int64_t> corrupted_twin(const std::vector<int64_t>& clean) const override {
    const int n = c_.length;
    const int m = static_cast<int>(clean.size()) - n - 1;
    if (c_.name == "sort" || m < 0 || m >= n || clean[n] != c_.vocab)
      return SyntheticTask::corrupted_twin(clean);
    auto twin = clean;
    const int source = c_.name == "reverse" ? n - 1 - m : m;
    twin[source] = (twin[source] + 1) % c_.vocab;
    return twin;
  }

 protected:
  Example example(std::mt19937_64& rng, bool) const override {
    auto x = random_symbols(rng, c_.length, c_.vocab);
    auto y = x;
    if (c_.name == "reverse") std::reverse(y.begin(), y.end());
    if (c_.name == "sort") std::sort(y.begin(), y.end());
    Example e;
    e.tokens = x;
    e.tokens.push_back(c_.vocab);
    e.tokens.insert(e.tokens.end(), y.begin(), y.end());
    e.scored.assign(e.tokens.size(), false);
    for (size_t t = c_.length + 1; t < e.tokens.size(); ++t) e.scored[t] = true;
    return e;
  }
};

// Multi-query associative recall: k1 v1 ... kn vn SEP q1 a1 ... qn an, where the queries are
// the keys in a fresh random order and each answer a_i is the value bound to q_i. Keys are
// distinct symbols 0..V-1, values V..2V-1. Every answer is scored, so each sequence carries n
// training signals instead of one (a single-query version barely learns in minutes on CPU).
class RecallTask : public SyntheticTask {
 public:
  using SyntheticTask::SyntheticTask;
  int vocab_size() const override { return 2 * c_.vocab + 1; }
  int sequence_length() const override { return 4 * c_.length; }

 protected:
  std::string special_label(int64_t t) const override {
    return t == 2 * c_.vocab ? "?" : "v" + std::to_string(t - c_.vocab);
  }

 public:
  std::string label_legend() const override { return "vk = value k, ? = separator"; }

  // The probe ends on a query key: bind that key to the next value in the pairs before the
  // separator, so the answer changes and nothing else does.
  std::vector<int64_t> corrupted_twin(const std::vector<int64_t>& clean) const override {
    const int n = c_.length;
    if (clean.size() > static_cast<size_t>(2 * n) && clean[2 * n] == 2 * c_.vocab) {
      for (int i = 0; i < n; ++i)
        if (clean[2 * i] == clean.back() && clean.size() > static_cast<size_t>(2 * n + 1)) {
          auto twin = clean;
          twin[2 * i + 1] = c_.vocab + (twin[2 * i + 1] - c_.vocab + 1) % c_.vocab;
          return twin;
        }
    }
    return SyntheticTask::corrupted_twin(clean);
  }
  // The last position's target is the value bound to the queried key, and the twin's the value
  // it rebinds it to (the first-token fallback states no answers).
  Twin twin(const std::vector<int64_t>& clean) const override {
    Twin t = Task::twin(clean);
    const int n = c_.length;
    for (int i = 0; i < n && 2 * i + 1 < static_cast<int>(clean.size()); ++i)
      if (t.tokens[2 * i + 1] != clean[2 * i + 1]) {
        t.answers = {clean[2 * i + 1]};
        t.twin_answers = {t.tokens[2 * i + 1]};
      }
    return t;
  }

 protected:
  Example example(std::mt19937_64& rng, bool) const override {
    const int n = c_.length;
    auto keys = distinct_symbols(rng, n, c_.vocab);
    auto values = random_symbols(rng, n, c_.vocab);
    auto order = distinct_symbols(rng, n, n);  // a permutation of 0..n-1
    Example e;
    for (int i = 0; i < n; ++i) {
      e.tokens.push_back(keys[i]);
      e.tokens.push_back(c_.vocab + values[i]);
    }
    e.tokens.push_back(2 * c_.vocab);
    e.scored.assign(e.tokens.size(), false);
    for (int i = 0; i < n; ++i) {
      e.tokens.push_back(keys[order[i]]);
      e.tokens.push_back(c_.vocab + values[order[i]]);
      e.scored.push_back(false);
      e.scored.push_back(true);
    }
    return e;
  }
};

// a b = c with c = (a + b) mod p. The p*p pairs are split once by the run seed: eval pairs are
// never trained on, so eval accuracy measures generalisation, not memorisation.
class ModAddTask : public SyntheticTask {
 public:
  ModAddTask(const TaskConfig& c, uint64_t seed, int eval_batches, int batch_size)
      : SyntheticTask(c, seed, eval_batches, batch_size) {
    const int p = c.modulus;
    std::vector<int> all(p * p);
    std::iota(all.begin(), all.end(), 0);
    std::mt19937_64 rng(mix_seed(seed, 0x5917));
    for (int i = static_cast<int>(all.size()) - 1; i > 0; --i) {
      std::uniform_int_distribution<int> d(0, i);
      std::swap(all[i], all[d(rng)]);
    }
    const size_t n_train =
        std::clamp<size_t>(static_cast<size_t>(c.train_fraction * all.size()), 1, all.size() - 1);
    train_.assign(all.begin(), all.begin() + n_train);
    heldout_.assign(all.begin() + n_train, all.end());
  }
  int vocab_size() const override { return c_.modulus + 1; }
  int sequence_length() const override { return 3; }
  std::string token_label(int64_t t) const override {
    return t == c_.modulus ? "=" : std::to_string(t);
  }
  std::string label_legend() const override { return "a b = then (a + b) mod p"; }

  const std::vector<Batch>& eval_set() const override {
    if (eval_.empty()) {  // every held-out pair exactly once
      for (size_t i = 0; i < heldout_.size(); i += batch_size_) {
        std::vector<Example> ex;
        for (size_t j = i; j < std::min(heldout_.size(), i + batch_size_); ++j)
          ex.push_back(make(heldout_[j]));
        eval_.push_back(to_batch(ex));
      }
    }
    return eval_;
  }
  const std::vector<int>& train_pairs() const { return train_; }

 protected:
  Example make(int pair) const {
    const int p = c_.modulus, a = pair / p, b = pair % p;
    Example e;
    e.tokens = {a, b, p, (a + b) % p};
    e.scored = {false, false, false, true};
    return e;
  }
  Example example(std::mt19937_64& rng, bool eval) const override {
    const auto& pool = eval ? heldout_ : train_;
    std::uniform_int_distribution<size_t> d(0, pool.size() - 1);
    return make(pool[d(rng)]);
  }

 private:
  std::vector<int> train_, heldout_;
};

// Induction: n distinct symbols p, then p again, with filler tokens (a separate alphabet) placed
// randomly before, between and after, n fillers in all. From the second copy's second token on,
// the next token is predictable only by finding the previous occurrence of the current token
// and copying its successor (an induction head). The random gap means the distance between the
// copies varies, so no fixed positional offset solves it.
class InductionTask : public SyntheticTask {
 public:
  using SyntheticTask::SyntheticTask;
  int vocab_size() const override { return 2 * c_.vocab; }
  int sequence_length() const override { return 3 * c_.length - 1; }

 protected:
  std::string special_label(int64_t t) const override { return "." + std::to_string(t - c_.vocab); }

 public:
  std::string label_legend() const override { return ".k = filler token k"; }

 protected:
  Example example(std::mt19937_64& rng, bool) const override {
    const int n = c_.length;
    auto p = distinct_symbols(rng, n, c_.vocab);
    std::uniform_int_distribution<int> gap_between(0, n);
    const int between = gap_between(rng);
    std::uniform_int_distribution<int> gap_before(0, n - between);
    const int before = gap_before(rng);
    const int after = n - between - before;
    Example e;
    auto filler = [&](int count) {
      for (auto f : random_symbols(rng, count, c_.vocab)) e.tokens.push_back(c_.vocab + f);
    };
    filler(before);
    e.tokens.insert(e.tokens.end(), p.begin(), p.end());
    filler(between);
    const size_t second = e.tokens.size();
    e.tokens.insert(e.tokens.end(), p.begin(), p.end());
    filler(after);
    e.scored.assign(e.tokens.size(), false);
    for (size_t t = second + 1; t < second + n; ++t) e.scored[t] = true;
    return e;
  }
};

// Character-level language model over a UTF-8 corpus. split "tail": eval is the corpus tail;
// split "blocks": eval and validation are blocks spread over the whole corpus (TaskConfig::split).
class TextTask : public Task {
 public:
  TextTask(const TaskConfig& c, uint64_t seed, int eval_batches, int batch_size)
      : c_(c), corpus_(load_text_corpus(c.text_path)) {
    const int64_t n = corpus_.tokens.size();
    if (c.split == "blocks") {
      cut_blocks(batch_size);
      return;
    }
    split_ = static_cast<int64_t>(n * (1.0 - c.eval_fraction));
    if (split_ < c.context + 1 || n - split_ < c.context + 1)
      throw Error("task.text_path: " + c.text_path + " has " + std::to_string(n) +
                  " characters, too few for task.context " + std::to_string(c.context) +
                  " with eval_fraction " + std::to_string(c.eval_fraction));
    train_ = {{0, split_}};
    index_training();
    // Fixed eval windows evenly spaced over the held-out tail.
    const int64_t windows = static_cast<int64_t>(eval_batches) * batch_size;
    const int64_t span = n - split_ - (c.context + 1);
    for (int b = 0; b < eval_batches; ++b) {
      std::vector<int64_t> starts;
      for (int i = 0; i < batch_size; ++i)
        starts.push_back(split_ +
                         (span * (b * batch_size + i)) / std::max<int64_t>(1, windows - 1));
      eval_.push_back(windows_at(starts));
    }
    baseline_ = unigram_cross_entropy(corpus_, split_);
    probe_start_ = split_;
  }
  int vocab_size() const override { return corpus_.alphabet.size(); }
  int sequence_length() const override { return c_.context; }
  Batch train_batch(int batch_size, uint64_t seed) const override {
    std::mt19937_64 rng(seed);
    // Uniform over every window that lies inside one training span.
    std::uniform_int_distribution<int64_t> d(0, train_windows_.back() - 1);
    std::vector<int64_t> starts(batch_size);
    for (auto& s : starts) {
      const int64_t k = d(rng);
      const size_t span = std::upper_bound(train_windows_.begin(), train_windows_.end(), k) -
                          train_windows_.begin();
      s = train_[span].begin + k - (span == 0 ? 0 : train_windows_[span - 1]);
    }
    return windows_at(starts);
  }
  const std::vector<Batch>& eval_set() const override { return eval_; }
  std::vector<Batch> validation_set() const override { return validation_; }
  std::vector<int64_t> probe() const override {
    const int64_t len = std::min(c_.context, 48);
    return {corpus_.tokens.begin() + probe_start_, corpus_.tokens.begin() + probe_start_ + len};
  }
  std::string token_label(int64_t t) const override { return corpus_.label(t); }
  std::string label_legend() const override { return "\xE2\x90\xA3 = space, \\n = newline"; }
  double baseline_loss() const override { return baseline_; }
  std::vector<int64_t> parse_probe(const std::string& text) const override {
    int64_t invalid = 0;
    const std::vector<uint32_t> cps = utf8_decode(text, &invalid);
    if (invalid > 0) throw Error("probe: the text is not valid UTF-8");
    if (cps.empty()) throw Error("probe: empty; type some characters of the corpus");
    std::vector<int64_t> out;
    for (size_t i = 0; i < cps.size(); ++i) {
      const auto& a = corpus_.alphabet;
      const auto it = std::lower_bound(a.begin(), a.end(), cps[i]);
      if (it == a.end() || *it != cps[i]) {
        char code[16];
        std::snprintf(code, sizeof code, "U+%04X", cps[i]);
        throw Error("probe: character " + std::to_string(i + 1) + " '" + utf8_encode(cps[i]) +
                    "' (" + code + ") is not in the corpus's alphabet of " +
                    std::to_string(a.size()) + " characters");
      }
      out.push_back(it - a.begin());
    }
    return out;
  }

 private:
  Batch windows_at(const std::vector<int64_t>& starts) const {
    const int64_t B = starts.size(), L = c_.context;
    auto inputs = torch::empty({B, L}, torch::kInt64);
    auto targets = torch::empty({B, L}, torch::kInt64);
    for (int64_t b = 0; b < B; ++b) {
      std::copy_n(corpus_.tokens.begin() + starts[b], L, inputs[b].data_ptr<int64_t>());
      std::copy_n(corpus_.tokens.begin() + starts[b] + 1, L, targets[b].data_ptr<int64_t>());
    }
    return {inputs, targets};
  }

  struct Span {
    int64_t begin = 0, end = 0;  // token indices, [begin, end)
  };

  // split "blocks": a fixed permutation of the 4096-character blocks (salted, not the run's
  // seed, so every arm and seed holds out the same text) gives the first eval_fraction of them
  // to eval, the next validation_fraction to validation, the rest to training. Adjacent blocks
  // of one kind merge into spans, so windows may cross block boundaries within a span.
  void cut_blocks(int batch_size) {
    constexpr int64_t kBlock = 4096;
    constexpr uint64_t kBlockSalt = 0xB10C5EED;
    const int64_t n = corpus_.tokens.size(), L = c_.context;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    std::vector<int64_t> order(blocks);
    for (int64_t b = 0; b < blocks; ++b) order[b] = b;
    std::mt19937_64 rng(kBlockSalt);
    std::shuffle(order.begin(), order.end(), rng);
    const auto n_eval = static_cast<int64_t>(std::llround(blocks * c_.eval_fraction));
    const auto n_validation = static_cast<int64_t>(std::llround(blocks * c_.validation_fraction));
    std::vector<int> kind(blocks, 0);  // 0 train, 1 eval, 2 validation
    for (int64_t i = 0; i < blocks; ++i)
      kind[order[i]] = i < n_eval ? 1 : i < n_eval + n_validation ? 2 : 0;
    std::vector<Span> spans[3];
    for (int64_t b = 0; b < blocks; ++b) {
      const Span block{b * kBlock, std::min(n, (b + 1) * kBlock)};
      auto& list = spans[kind[b]];
      if (!list.empty() && list.back().end == block.begin)
        list.back().end = block.end;
      else
        list.push_back(block);
    }
    const char* names[3] = {"training", "eval", "validation"};
    for (int k = 0; k < 3; ++k) {
      int64_t longest = 0;
      for (const auto& s : spans[k]) longest = std::max(longest, s.end - s.begin);
      if (longest < L + 1)
        throw Error("task.text_path: " + c_.text_path + " has " + std::to_string(n) +
                    " characters (" + std::to_string(blocks) +
                    " blocks of 4096): task.split \"blocks\" with eval_fraction " +
                    std::to_string(c_.eval_fraction) + " and validation_fraction " +
                    std::to_string(c_.validation_fraction) + " leaves no " + names[k] +
                    " text of task.context + 1 = " + std::to_string(L + 1) +
                    " characters; use a larger corpus or task.split \"tail\"");
    }
    train_ = spans[0];
    index_training();
    eval_ = tile(spans[1], batch_size);
    validation_ = tile(spans[2], batch_size);
    probe_start_ = spans[1].front().begin;
    // Unigram baseline: trained on the training spans, scored on the eval spans' targets.
    std::vector<double> counts(corpus_.alphabet.size(), 1.0);  // add-one
    double total = counts.size();
    for (const auto& s : train_)
      for (int64_t i = s.begin; i < s.end; ++i, total += 1) counts[corpus_.tokens[i]] += 1;
    double loss = 0, scored = 0;
    for (const auto& s : spans[1])
      for (int64_t i = s.begin + 1; i < s.end; ++i, scored += 1)
        loss -= std::log(counts[corpus_.tokens[i]] / total);
    baseline_ = loss / std::max(1.0, scored);
  }

  // train_windows_[i]: the windows that start in training spans 0..i (a span of m characters
  // holds m - context windows of context + 1).
  void index_training() {
    int64_t total = 0;
    for (const auto& s : train_) {
      total += std::max<int64_t>(0, s.end - s.begin - c_.context);
      train_windows_.push_back(total);
    }
  }

  // Non-overlapping windows over every span (each window's targets continue where the previous
  // one's stopped), batch_size to a batch (the last one may be smaller): every character after a
  // span's first is a target exactly once, except a span's tail shorter than a window.
  std::vector<Batch> tile(const std::vector<Span>& spans, int batch_size) const {
    std::vector<int64_t> starts;
    for (const auto& s : spans)
      for (int64_t at = s.begin; at + c_.context + 1 <= s.end; at += c_.context)
        starts.push_back(at);
    std::vector<Batch> out;
    for (size_t i = 0; i < starts.size(); i += batch_size)
      out.push_back(windows_at(
          {starts.begin() + i, starts.begin() + std::min(starts.size(), i + batch_size)}));
    return out;
  }

  TaskConfig c_;
  TextCorpus corpus_;
  int64_t split_ = 0;
  std::vector<Span> train_;
  std::vector<int64_t> train_windows_;  // cumulative window starts per training span
  std::vector<Batch> eval_, validation_;
  int64_t probe_start_ = 0;
  double baseline_ = 0;
};

}  // namespace

std::unique_ptr<Task> make_task(const TaskConfig& c, uint64_t seed, int eval_batches,
                                int batch_size) {
  if (c.name == "copy" || c.name == "reverse" || c.name == "sort")
    return std::make_unique<TransformTask>(c, seed, eval_batches, batch_size);
  if (c.name == "recall") return std::make_unique<RecallTask>(c, seed, eval_batches, batch_size);
  if (c.name == "modadd") return std::make_unique<ModAddTask>(c, seed, eval_batches, batch_size);
  if (c.name == "induction")
    return std::make_unique<InductionTask>(c, seed, eval_batches, batch_size);
  if (c.name == "text") {
    check_train_examples(c, "task");  // refused: text has no fixed set of generated sequences
    return std::make_unique<TextTask>(c, seed, eval_batches, batch_size);
  }
  if (c.name == "fashion-mnist") return make_fashion_mnist_task(c);
  if (auto task = make_benchmark_task(c, seed, eval_batches, batch_size)) return task;
  throw Error("task.name: unknown task \"" + c.name + "\"");
}

}  // namespace attn
