// The field's standard synthetic tasks, generated as their reference code generates them
// (docs/guide/benchmarks.md cites each file): Zoology's MQAR, MAD's selective copying, Safari's
// induction head, and three length-generalisation tasks of the Chomsky-hierarchy benchmark.
// Deviations from the reference code are named where they happen.
#include "core/data/benchmark_tasks.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/config/benchmark_settings.h"
#include "core/data/synthetic_task.h"

namespace attn {
namespace {

using namespace detail;

// The label of token t of a vocabulary of `vocab` ids whose last two are special tokens,
// labelled `second_last` and `last`; the others are numbered.
std::string label_with_specials(int64_t t, int vocab, const char* second_last, const char* last) {
  if (t == vocab - 2) return second_last;
  if (t == vocab - 1) return last;
  return std::to_string(t);
}

// Zoology (HazyResearch/zoology, zoology/data/multiquery_ar.py, multiquery_ar): keys are ids
// 1..V/2-1 and values V/2..V-1, n distinct of each; the context k1 v1 .. kn vn; then n queries
// at even offsets 2*gap after the context, gaps drawn without replacement with weights
// a*i^(a-1), i = 1..space (a = 0.01: small gaps are far likelier). The target at a query key is
// its value; every other target is ignored, so accuracy counts the queried positions only.
// Filler positions hold token 0 (the paper's figure-2 configs set random_non_queries False).
class MqarTask : public SyntheticTask {
 public:
  using SyntheticTask::SyntheticTask;
  static constexpr double kPowerA = 0.01;
  int vocab_size() const override { return c_.vocab; }
  int sequence_length() const override { return c_.context; }
  std::string token_label(int64_t t) const override {
    if (t == 0) return ".";
    return t < c_.vocab / 2 ? "k" + std::to_string(t) : "v" + std::to_string(t - c_.vocab / 2);
  }
  std::string label_legend() const override { return "kN = key, vN = value, . = filler"; }

  // The queried keys after the pairs: where the answers are scored.
  std::vector<int64_t> scored_positions(const std::vector<int64_t>& tokens) const override {
    std::vector<int64_t> out;
    for (size_t t = 2 * static_cast<size_t>(c_.length); t < tokens.size(); ++t)
      if (tokens[t] > 0 && tokens[t] < c_.vocab / 2) out.push_back(static_cast<int64_t>(t));
    return out;
  }
  // The last query's key is bound to a value no pair uses (values are distinct), so its answer
  // changes and no other does.
  Twin twin(const std::vector<int64_t>& clean) const override {
    const auto queries = scored_positions(clean);
    if (queries.empty())
      throw Error("this MQAR probe queries no key after its " + std::to_string(c_.length) +
                  " key-value pairs: there is no answer to change");
    const int64_t q = queries.back();
    const int n = c_.length, half = c_.vocab / 2, values = c_.vocab - half;
    for (int i = 0; i < n && 2 * i + 1 < static_cast<int>(clean.size()); ++i) {
      if (clean[2 * i] != clean[q]) continue;
      auto value = [&](int j) {
        return half + ((clean[2 * i + 1] - half + j) % values + values) % values;
      };
      auto used = [&](int64_t v) {
        for (int k = 0; k < n && 2 * k + 1 < static_cast<int>(clean.size()); ++k)
          if (clean[2 * k + 1] == v) return true;
        return false;
      };
      Twin t{clean, {q}};
      t.tokens[2 * i + 1] = value(1);  // kept when every value is bound already
      for (int j = 1; j < values; ++j)
        if (!used(value(j))) {
          t.tokens[2 * i + 1] = value(j);
          break;
        }
      t.answers = {clean[2 * i + 1]};  // the query's target is its bound value
      t.twin_answers = {t.tokens[2 * i + 1]};
      return t;
    }
    throw Error("this MQAR probe queries key " + token_label(clean[q]) + " at position " +
                std::to_string(q) +
                ", which no key-value pair binds: there is no answer to change");
  }
  std::vector<int64_t> corrupted_twin(const std::vector<int64_t>& clean) const override {
    return twin(clean).tokens;
  }

 protected:
  Example example(std::mt19937_64& rng, bool) const override {
    const int L = c_.context, n = c_.length, V = c_.vocab, half = V / 2, context = 2 * n;
    auto keys = distinct_symbols(rng, n, half - 1);
    auto values = distinct_symbols(rng, n, V - half);
    Example e;
    e.tokens.assign(L, 0);
    e.targets.assign(L, -1);
    for (int i = 0; i < n; ++i) {
      e.tokens[2 * i] = keys[i] + 1;
      e.tokens[2 * i + 1] = values[i] + half;
    }
    const int space = (L - context) / 2;
    std::vector<double> weight(space);
    for (int i = 0; i < space; ++i) weight[i] = kPowerA * std::pow(i + 1.0, kPowerA - 1.0);
    for (int j = 0; j < n; ++j) {  // np.random.choice(replace=False, p): draw, remove, renormalise
      double total = 0;
      for (double w : weight) total += w;
      std::uniform_real_distribution<double> u(0.0, total);
      double r = u(rng);
      int gap = space - 1;
      for (int i = 0; i < space; ++i) {
        if (weight[i] <= 0) continue;
        if (r < weight[i]) {
          gap = i;
          break;
        }
        r -= weight[i];
      }
      while (weight[gap] <= 0) --gap;  // rounding past the end: the last one still open
      weight[gap] = 0;
      e.tokens[context + 2 * gap] = keys[j] + 1;
      e.targets[context + 2 * gap] = values[j] + half;
    }
    return e;
  }
};

// MAD (athms/mad-lab, mad/data/instances.py, generate_selective_copying_instance): n tokens to
// copy, drawn with replacement from 0..V-3, with L-2n-1 blanks (V-2) scattered before them (each
// blank goes before a uniformly chosen one of the n tokens, as np.insert does, so none follows
// the last), then the copy token (V-1) and n blanks. The targets of those last n blanks are the
// n tokens in order; nothing else is scored.
class SelectiveCopyTask : public SyntheticTask {
 public:
  using SyntheticTask::SyntheticTask;
  int vocab_size() const override { return c_.vocab; }
  int sequence_length() const override { return c_.context; }
  std::string token_label(int64_t t) const override {
    return label_with_specials(t, c_.vocab, "_", ">");
  }
  std::string label_legend() const override { return "_ = blank (noise), > = copy"; }

  // The blanks after the copy token, one per copied token.
  std::vector<int64_t> scored_positions(const std::vector<int64_t>& tokens) const override {
    const int64_t c = copy_position(tokens), L = static_cast<int64_t>(tokens.size());
    std::vector<int64_t> out;
    for (int64_t t = c + 1; c >= 0 && t < L && t <= c + c_.length; ++t) out.push_back(t);
    return out;
  }
  // The last copied token whose answer the probe holds changes; so does that answer alone.
  Twin twin(const std::vector<int64_t>& clean) const override {
    const int64_t c = copy_position(clean), blank = c_.vocab - 2;
    std::vector<int64_t> data;
    for (int64_t t = 0; t < c; ++t)
      if (clean[t] != blank) data.push_back(t);
    const int64_t i =
        std::min<int64_t>(data.size(), static_cast<int64_t>(clean.size()) - 1 - c) - 1;
    if (c < 0 || i < 0)
      throw Error(
          "this selective-copy probe has no copied token with an answer after the copy "
          "token (>): there is no answer to change");
    Twin t{clean, {c + 1 + i}};
    t.tokens[data[i]] = (clean[data[i]] + 1) % blank;
    t.answers = {clean[data[i]]};  // the blank's target is the token it copies
    t.twin_answers = {t.tokens[data[i]]};
    return t;
  }
  std::vector<int64_t> corrupted_twin(const std::vector<int64_t>& clean) const override {
    return twin(clean).tokens;
  }

 private:
  int64_t copy_position(const std::vector<int64_t>& tokens) const {
    const auto it = std::find(tokens.begin(), tokens.end(), int64_t{c_.vocab - 1});
    return it == tokens.end() ? -1 : static_cast<int64_t>(it - tokens.begin());
  }

 protected:
  Example example(std::mt19937_64& rng, bool) const override {
    const int L = c_.context, n = c_.length, blank = c_.vocab - 2, copy = c_.vocab - 1;
    const auto data = random_symbols(rng, n, c_.vocab - 2);
    std::vector<int> blanks_before(n, 0);
    std::uniform_int_distribution<int> where(0, n - 1);
    for (int b = 0; b < L - 2 * n - 1; ++b) ++blanks_before[where(rng)];
    Example e;
    for (int i = 0; i < n; ++i) {
      e.tokens.insert(e.tokens.end(), blanks_before[i], blank);
      e.tokens.push_back(data[i]);
    }
    e.tokens.push_back(copy);
    e.targets.assign(e.tokens.size(), -1);
    for (int i = 0; i < n; ++i) {
      e.tokens.push_back(blank);
      e.targets.push_back(data[i]);
    }
    return e;
  }
};

// Safari (HazyResearch/safari, src/dataloaders/synthetics.py, generate_induction_head): L tokens
// uniform over the V-2 ordinary symbols, then the trigger "=>" (V-2); a trigger also replaces
// position p, uniform in 0..L-3, and the answer is the token after it. Inputs are the L+1 tokens;
// training scores every next token (Safari's training loss is the plain LM loss), the eval set
// only the last (the answer). Safari's vocabulary also holds a no-op token (V-1, unused) and
// numbers its tokens by sorting their strings; ids here are plain. Safari also regenerates
// duplicate sequences; at 18^30 possible sequences that never matters, so it is not done here.
class InductionHeadTask : public SyntheticTask {
 public:
  using SyntheticTask::SyntheticTask;
  int vocab_size() const override { return c_.vocab; }
  int sequence_length() const override { return c_.context + 1; }
  std::string token_label(int64_t t) const override {
    return label_with_specials(t, c_.vocab, "=>", ".");
  }
  std::string label_legend() const override { return "=> = trigger"; }

  // The eval set scores the last position only (the answer after the final trigger).
  // The token after the earlier trigger (the answer the last position copies) changes.
  Twin twin(const std::vector<int64_t>& clean) const override {
    const int64_t last = static_cast<int64_t>(clean.size()) - 1, trigger = c_.vocab - 2;
    int64_t p = -1;
    for (int64_t t = 0; t + 1 < last; ++t)
      if (clean[t] == trigger) p = t;
    if (p < 0)
      throw Error(
          "this induction-head probe has no trigger (=>) before its last position: "
          "there is no answer to change");
    Twin t{clean, {last}};
    t.tokens[p + 1] = (clean[p + 1] + 1) % trigger;
    t.answers = {clean[p + 1]};  // the last position's target is the token after the trigger
    t.twin_answers = {t.tokens[p + 1]};
    return t;
  }
  std::vector<int64_t> corrupted_twin(const std::vector<int64_t>& clean) const override {
    return twin(clean).tokens;
  }

 protected:
  Example example(std::mt19937_64& rng, bool eval) const override {
    const int L = c_.context, trigger = c_.vocab - 2;
    std::vector<int64_t> seq = random_symbols(rng, L, c_.vocab - 2);
    seq.push_back(trigger);
    std::uniform_int_distribution<int> where(0, L - 3);
    const int p = where(rng);
    seq[p] = trigger;
    seq.push_back(seq[p + 1]);
    Example e;
    e.tokens.assign(seq.begin(), seq.end() - 1);
    if (eval) {
      e.targets.assign(e.tokens.size(), -1);
      e.targets.back() = seq.back();
    } else {
      e.targets.assign(seq.begin() + 1, seq.end());
    }
    return e;
  }
};

// The Chomsky-hierarchy benchmark (google-deepmind/neural_networks_chomsky_hierarchy: tasks/
// regular/parity_check.py, tasks/dcf/reverse_string.py, tasks/cs/duplicate_string.py, and
// experiments/utils.py's make_model_with_empty_targets): n symbols of 0..V-1, then one
// placeholder (id V) per output token; the outputs are read at the placeholders and scored per
// token. Parity answers sum mod 2 (one token), reverse the n symbols reversed, duplicate them
// twice (2n). Training draws n uniformly in 1..N for each sequence (the reference draws one n
// per batch) and pads with placeholders to the longest (the model is causal, so padding after
// the outputs changes nothing before them); the eval set is at n = N exactly, and `attnlab eval
// --context` sets N to test longer strings.
class ChomskyTask : public SyntheticTask {
 public:
  using SyntheticTask::SyntheticTask;
  int vocab_size() const override { return c_.vocab + 1; }
  int sequence_length() const override { return c_.length + outputs(c_.length); }
  std::string token_label(int64_t t) const override {
    return t == c_.vocab ? "_" : std::to_string(t);
  }
  std::string label_legend() const override { return "_ = output placeholder"; }

  // The placeholders that answer: n symbols, then outputs(n) placeholders are read.
  std::vector<int64_t> scored_positions(const std::vector<int64_t>& tokens) const override {
    const int64_t n = symbols(tokens), L = static_cast<int64_t>(tokens.size());
    std::vector<int64_t> out;
    for (int64_t t = n; n > 0 && t < L && t < n + outputs(static_cast<int>(n)); ++t)
      out.push_back(t);
    return out;
  }
  // The first symbol changes (parity: its lowest bit, so the sum's parity flips); read where
  // the outputs copy it (reverse: the last output; duplicate: both copies).
  Twin twin(const std::vector<int64_t>& clean) const override {
    const int64_t n = symbols(clean), L = static_cast<int64_t>(clean.size());
    if (n <= 0 || n >= L)
      throw Error(
          "this probe has no input symbol followed by an output placeholder (_): there "
          "is no answer to change");
    Twin t{clean, {}};
    const int64_t x = clean[0];
    if (c_.name == "parity") {
      t.tokens[0] = (x ^ 1) < c_.vocab ? x ^ 1 : x - 1;
      t.read = {n};
    } else {
      t.tokens[0] = (x + 1) % c_.vocab;
      if (c_.name == "reverse_string") t.read = {2 * n - 1};
      if (c_.name == "duplicate_string") t.read = {n, 2 * n};
    }
    t.read.erase(std::remove_if(t.read.begin(), t.read.end(), [&](int64_t p) { return p >= L; }),
                 t.read.end());
    if (t.read.empty())
      throw Error("this probe is cut before the output that copies its first symbol");
    if (c_.name == "parity") {  // the sum of the symbols mod 2, as example() scores it
      auto parity = [&](const std::vector<int64_t>& s) {
        int64_t sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += s[i];
        return sum % 2;
      };
      t.answers = {parity(clean)};
      t.twin_answers = {parity(t.tokens)};
    } else {  // every read output copies the first symbol
      t.answers.assign(t.read.size(), x);
      t.twin_answers.assign(t.read.size(), t.tokens[0]);
    }
    return t;
  }
  std::vector<int64_t> corrupted_twin(const std::vector<int64_t>& clean) const override {
    return twin(clean).tokens;
  }

 protected:
  // The input symbols before the first placeholder.
  int64_t symbols(const std::vector<int64_t>& tokens) const {
    const auto it = std::find(tokens.begin(), tokens.end(), int64_t{c_.vocab});
    return it == tokens.end() ? -1 : static_cast<int64_t>(it - tokens.begin());
  }
  int outputs(int n) const {
    if (c_.name == "parity") return 1;
    return c_.name == "duplicate_string" ? 2 * n : n;
  }
  Example example(std::mt19937_64& rng, bool eval) const override {
    std::uniform_int_distribution<int> length(1, c_.length);
    const int n = eval ? c_.length : length(rng);
    const auto x = random_symbols(rng, n, c_.vocab);
    std::vector<int64_t> y;
    if (c_.name == "parity") {
      int64_t sum = 0;
      for (auto s : x) sum += s;
      y = {sum % 2};
    } else {
      y = x;
      if (c_.name == "reverse_string") std::reverse(y.begin(), y.end());
      if (c_.name == "duplicate_string") y.insert(y.end(), x.begin(), x.end());
    }
    Example e;
    e.tokens = x;
    e.targets.assign(n, -1);
    for (auto s : y) {
      e.tokens.push_back(c_.vocab);
      e.targets.push_back(s);
    }
    const int total = sequence_length();
    e.tokens.resize(total, c_.vocab);
    e.targets.resize(total, -1);
    return e;
  }
};

}  // namespace

std::unique_ptr<Task> make_benchmark_task(const TaskConfig& c, uint64_t seed, int eval_batches,
                                          int batch_size) {
  check_benchmark_task(c, "task");
  if (c.name == "mqar") return std::make_unique<MqarTask>(c, seed, eval_batches, batch_size);
  if (c.name == "selective_copy")
    return std::make_unique<SelectiveCopyTask>(c, seed, eval_batches, batch_size);
  if (c.name == "induction_head")
    return std::make_unique<InductionHeadTask>(c, seed, eval_batches, batch_size);
  if (is_length_generalisation_task(c.name))
    return std::make_unique<ChomskyTask>(c, seed, eval_batches, batch_size);
  return nullptr;
}

}  // namespace attn
