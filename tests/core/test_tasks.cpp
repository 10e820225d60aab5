// Tasks: each batch encodes its task correctly, is a pure function of its seed, and the eval
// set is fixed (and disjoint from training where the task is finite).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/base/error.h"
#include "core/data/tasks.h"
#include "core/data/text_corpus.h"
#include "task_helpers.h"

using namespace attn;

namespace {
TaskConfig task(const std::string& name, int length = 6, int vocab = 10) {
  TaskConfig t;
  t.name = name;
  t.length = length;
  t.vocab = vocab;
  return t;
}
}  // namespace
using test::row;

TEST_CASE("copy, reverse and sort: the scored targets are f(x)") {
  for (std::string name : {"copy", "reverse", "sort"}) {
    auto t = make_task(task(name), 1, 2, 4);
    CHECK(t->sequence_length() == 12);
    auto b = t->train_batch(16, 42);
    CHECK(b.inputs.sizes() == torch::IntArrayRef({16, 12}));
    for (int64_t i = 0; i < 16; ++i) {
      auto in = row(b.inputs, i), tg = row(b.targets, i);
      std::vector<int64_t> x(in.begin(), in.begin() + 6);
      CHECK(in[6] == 10);  // separator
      if (name == "reverse") std::reverse(x.begin(), x.end());
      if (name == "sort") std::sort(x.begin(), x.end());
      std::vector<int64_t> scored;
      for (auto v : tg)
        if (v != -1) scored.push_back(v);
      CHECK(scored == x);
      // Teacher forcing: the target at position p is the input at p + 1.
      for (int p = 6; p < 11; ++p) CHECK(tg[p] == in[p + 1]);
    }
  }
}

TEST_CASE("recall: every answer is the value bound to its query key") {
  auto t = make_task(task("recall", 5, 12), 3, 1, 8);
  CHECK(t->sequence_length() == 20);
  auto b = t->train_batch(32, 7);
  for (int64_t i = 0; i < 32; ++i) {
    auto in = row(b.inputs, i), tg = row(b.targets, i);
    std::map<int64_t, int64_t> bound;
    for (int k = 0; k < 5; ++k) bound[in[2 * k]] = in[2 * k + 1];
    CHECK(bound.size() == 5);  // distinct keys
    CHECK(in[10] == 24);       // separator
    std::set<int64_t> queried;
    for (int q = 0; q < 5; ++q) {
      const int64_t pos = 11 + 2 * q;  // query token position
      queried.insert(in[pos]);
      CHECK(tg[pos] == bound.at(in[pos]));  // predicting the answer after the query
      CHECK(tg[pos - 1] == -1);             // the query itself is not scored
    }
    CHECK(queried.size() == 5);  // each key asked once
    CHECK(std::count(tg.begin(), tg.end(), -1) == 20 - 5);
  }
}

TEST_CASE("modadd: c = (a + b) mod p and eval pairs are never trained on") {
  TaskConfig c;
  c.name = "modadd";
  c.modulus = 11;
  c.train_fraction = 0.7;
  auto t = make_task(c, 5, 4, 16);
  std::set<std::pair<int64_t, int64_t>> train, eval;
  for (int s = 0; s < 200; ++s) {
    auto b = t->train_batch(16, s);
    for (int64_t i = 0; i < 16; ++i) {
      auto in = row(b.inputs, i), tg = row(b.targets, i);
      CHECK(in[2] == 11);
      CHECK(tg[2] == (in[0] + in[1]) % 11);
      train.insert({in[0], in[1]});
    }
  }
  int64_t n_eval = 0;
  for (const auto& b : t->eval_set()) {
    for (int64_t i = 0; i < b.inputs.size(0); ++i) {
      auto in = row(b.inputs, i);
      eval.insert({in[0], in[1]});
      ++n_eval;
    }
  }
  CHECK(n_eval == 121 - 84);  // every held-out pair exactly once
  CHECK(eval.size() == static_cast<size_t>(n_eval));
  for (const auto& p : eval) CHECK(train.count(p) == 0);
  CHECK(train.size() == 84);
}

TEST_CASE("induction: each scored target follows the previous occurrence of its input") {
  auto t = make_task(task("induction", 6, 10), 2, 1, 4);
  CHECK(t->sequence_length() == 17);
  auto b = t->train_batch(64, 1);
  std::set<int64_t> offsets;
  for (int64_t i = 0; i < 64; ++i) {
    auto in = row(b.inputs, i), tg = row(b.targets, i);
    int scored = 0;
    for (size_t p = 0; p < in.size(); ++p) {
      if (tg[p] == -1) continue;
      ++scored;
      int64_t prev = -1;  // brute force: last earlier position holding the same token
      for (size_t j = 0; j < p; ++j)
        if (in[j] == in[p]) prev = j;
      REQUIRE(prev >= 0);
      CHECK(tg[p] == in[prev + 1]);
      offsets.insert(p - prev);
    }
    CHECK(scored == 5);
  }
  CHECK(offsets.size() > 3);  // the copy distance varies: no positional shortcut
}

TEST_CASE("batches are pure functions of their seed; eval set is fixed by the run seed") {
  auto t = make_task(task("copy"), 1, 2, 4);
  CHECK(torch::equal(t->train_batch(8, 5).inputs, t->train_batch(8, 5).inputs));
  CHECK(!torch::equal(t->train_batch(8, 5).inputs, t->train_batch(8, 6).inputs));
  auto again = make_task(task("copy"), 1, 2, 4);
  CHECK(torch::equal(t->eval_set()[0].inputs, again->eval_set()[0].inputs));
  auto other = make_task(task("copy"), 2, 2, 4);
  CHECK(!torch::equal(t->eval_set()[0].inputs, other->eval_set()[0].inputs));
}

TEST_CASE("text: UTF-8 decoding, eval tail, unigram baseline against a brute-force count") {
  const auto dir = std::filesystem::temp_directory_path() / "attnlab-text-test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "t.txt";
  std::string text;
  for (int i = 0; i < 60; ++i) text += "héllo wörld " + std::to_string(i % 7) + "\n";
  { std::ofstream(file) << text; }
  auto corpus = load_text_corpus(file.string());
  CHECK(corpus.invalid_bytes == 0);
  CHECK(std::count(corpus.alphabet.begin(), corpus.alphabet.end(), 0xE9u) == 1);  // é
  std::string round;
  for (auto tok : corpus.tokens) round += utf8_encode(corpus.alphabet[tok]);
  CHECK(round == text);

  // Brute-force unigram cross-entropy.
  const int64_t split = corpus.tokens.size() * 3 / 4;
  std::map<int64_t, double> counts;
  for (int64_t i = 0; i < split; ++i) counts[corpus.tokens[i]] += 1;
  double nll = 0;
  const double V = corpus.alphabet.size();
  for (size_t i = split; i < corpus.tokens.size(); ++i)
    nll -= std::log((counts[corpus.tokens[i]] + 1) / (split + V));
  CHECK(unigram_cross_entropy(corpus, split) ==
        doctest::Approx(nll / (corpus.tokens.size() - split)).epsilon(1e-12));

  TaskConfig c;
  c.name = "text";
  c.text_path = file.string();
  c.context = 16;
  c.eval_fraction = 0.2;
  auto t = make_task(c, 1, 2, 4);
  auto b = t->train_batch(4, 3);
  CHECK(torch::equal(b.inputs.slice(1, 1, 16), b.targets.slice(1, 0, 15)));
  CHECK(t->baseline_loss() > 0);
  CHECK(t->token_label(corpus.tokens[5]) == "\xE2\x90\xA3");  // the space after "héllo"
}

TEST_CASE("text: a missing corpus names the path and the Debian package") {
  TaskConfig c;
  c.name = "text";
  c.text_path = "/usr/share/games/fortunes-nonexistent";
  CHECK_THROWS_WITH_AS(make_task(c, 1, 1, 1),
                       doctest::Contains("/usr/share/games/fortunes-nonexistent does not exist"),
                       Error);
  CHECK_THROWS_WITH_AS(make_task(c, 1, 1, 1), doctest::Contains("apt-get install fortunes"), Error);
  c.text_path = "/no/such/file.txt";
  CHECK_THROWS_WITH_AS(make_task(c, 1, 1, 1), doctest::Contains("/no/such/file.txt"), Error);
}

TEST_CASE("label legends explain every probe label that is not a plain symbol") {
  // A label is explained when the legend names it, or names its pattern: ".k" for ".3", "vk"
  // for "v2".
  auto explained = [](const std::string& label, const std::string& legend) {
    if (legend.find(label) != std::string::npos) return true;
    return !label.empty() && legend.find(label.substr(0, 1) + "k") != std::string::npos;
  };
  for (const std::string name : {"copy", "reverse", "recall", "induction", "modadd"}) {
    CAPTURE(name);
    auto t = make_task(task(name, 4, 6), 1, 1, 4);
    const std::string legend = t->label_legend();
    for (const std::string& label : t->probe_labels()) {
      const bool plain = !label.empty() && std::all_of(label.begin(), label.end(), ::isdigit);
      if (!plain) CHECK_MESSAGE(explained(label, legend), label << " not in \"" << legend << "\"");
    }
  }
  CHECK(make_task(task("induction", 4, 6), 1, 1, 4)->label_legend().find("filler") !=
        std::string::npos);
}

// Issue 34: task.split "blocks". Each 4096-character block is one distinct character, so a
// token id names its block (the alphabet is sorted by code point).
TEST_CASE(
    "text split blocks: eval, validation and training hold disjoint blocks, the same for every "
    "seed") {
  const auto dir = std::filesystem::temp_directory_path() / "attnlab-text-blocks-test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "blocks.txt";
  const int blocks = 40;
  {
    std::string text;
    for (int b = 0; b < blocks; ++b)
      for (int i = 0; i < 4096; ++i) text += utf8_encode(0x4E00 + b);
    std::ofstream(file) << text;
  }
  TaskConfig c;
  c.name = "text";
  c.text_path = file.string();
  c.context = 16;
  c.split = "blocks";
  c.eval_fraction = 0.1;
  c.validation_fraction = 0.05;
  auto task = make_task(c, 1, 2, 8);
  auto blocks_of = [](const std::vector<Batch>& batches) {
    std::set<int64_t> s;
    for (const auto& b : batches)
      for (const auto& t : {b.inputs, b.targets}) {
        auto v = t.flatten().contiguous();
        s.insert(v.data_ptr<int64_t>(), v.data_ptr<int64_t>() + v.numel());
      }
    return s;
  };
  const auto eval = blocks_of(task->eval_set());
  const auto validation = blocks_of(task->validation_set());
  std::vector<Batch> train;
  for (uint64_t s = 0; s < 200; ++s) train.push_back(task->train_batch(8, s));
  const auto trained = blocks_of(train);
  CHECK(eval.size() == 4);        // round(40 * 0.1)
  CHECK(validation.size() == 2);  // round(40 * 0.05)
  for (int64_t b : eval) CHECK(validation.count(b) + trained.count(b) == 0);
  for (int64_t b : validation) CHECK(trained.count(b) == 0);
  CHECK(trained.size() == 34);  // 1600 windows reach every training block
  // Eval tiles its blocks: every eval character after a span's first is scored once (spans of
  // 4096 or more characters lose at most a tail shorter than a window of 16).
  int64_t scored = 0;
  for (const auto& b : task->eval_set()) scored += b.targets.numel();
  CHECK(scored <= 4 * 4096);
  CHECK(scored >= 4 * 4096 - 4 * 17);
  // The batches are batch_size windows (the last may be smaller), whatever eval_batches says.
  CHECK(task->eval_set().front().inputs.size(0) == 8);
  // Another seed holds out the same text.
  auto other = make_task(c, 99, 5, 8);
  REQUIRE(other->eval_set().size() == task->eval_set().size());
  CHECK(torch::equal(other->eval_set()[0].inputs, task->eval_set()[0].inputs));
  CHECK(blocks_of(other->validation_set()) == validation);
  // The unigram baseline is finite and positive; a tail split has no validation set.
  CHECK(task->baseline_loss() > 0);
  c.split = "tail";
  CHECK(make_task(c, 1, 2, 8)->validation_set().empty());
  // Too small a corpus for the shares names the keys.
  c.split = "blocks";
  c.eval_fraction = 0.01;
  CHECK_THROWS_WITH_AS(make_task(c, 1, 2, 8), doctest::Contains("leaves no eval text"), Error);
}
