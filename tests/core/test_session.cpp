// TrainingSession: schedule, divergence, checkpoints that resume bit-exactly, learning.
#include <doctest/doctest.h>
#ifdef __linux__
#include <malloc.h>  // mallinfo2
#endif

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <thread>

#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/random/run_random.h"
#include "core/training/session/session.h"
#include "helpers.h"

using namespace attn;
using test::params_of;
using test::same;
namespace fs = std::filesystem;

TEST_CASE("learning-rate schedule: linear warmup then cosine to min_lr_ratio") {
  auto c = test::tiny_config();
  c.train.lr = 1.0;
  c.train.warmup = 10;
  c.train.steps = 110;
  c.train.min_lr_ratio = 0.1;
  TrainingSession s(c);
  CHECK(s.learning_rate() == doctest::Approx(0.1));  // step 0: 1/10 of peak
  for (int i = 0; i < 10; ++i) s.train_step();
  CHECK(s.learning_rate() == doctest::Approx(1.0));  // end of warmup: peak
  for (int i = 0; i < 50; ++i) s.train_step();
  CHECK(s.learning_rate() == doctest::Approx(0.1 + 0.9 * 0.5));  // halfway down the cosine
}

TEST_CASE("a default-constructed config builds: one mechanism name covers every layer") {
  ExperimentConfig c;
  c.train.batch_size = 4;
  TrainingSession s(c);
  CHECK(s.model()->attention_modules().size() == static_cast<size_t>(c.model.layers));
  Snapshot snap;
  s.fill_snapshot(snap);
  CHECK(snap.mechanisms == std::vector<std::string>(c.model.layers, "dot"));
  CHECK(std::isfinite(s.train_step()));
}

TEST_CASE("two sessions with one seed train identically; another seed differs") {
  auto c = test::tiny_config();
  c.model.dropout = 0.1;
  TrainingSession a(c), b(c);
  for (int i = 0; i < 5; ++i) CHECK(a.train_step() == b.train_step());
  CHECK(same(params_of(a), params_of(b)));
  c.seed = 2;
  TrainingSession d(c);
  CHECK(!same(params_of(a), params_of(d)));
}

// The Compare panel trains runs on threads side by side in one process. torch's default
// generator is process-wide, so a run must neither seed nor draw from it while another trains.
TEST_CASE("runs trained side by side on threads match a run trained alone (dropout on)") {
  auto c = test::tiny_config();
  c.model.dropout = 0.2;
  auto train = [&c] {
    TrainingSession s(c);
    std::vector<double> losses;
    for (int i = 0; i < 12; ++i) losses.push_back(s.train_step());
    return losses;
  };
  const std::vector<double> alone = train();
  std::atomic<bool> done{false};
  std::thread disturber([&done] {  // another user of torch's default generator, by the contract
    while (!done) {
      auto rng = init_rng_lock();
      torch::manual_seed(7);
      (void)torch::rand({64});
    }
  });
  std::vector<double> left, right;
  std::thread a([&] { left = train(); }), b([&] { right = train(); });
  a.join();
  b.join();
  done = true;
  disturber.join();
  CHECK(left == alone);  // exact: the same arithmetic on the same draws
  CHECK(right == alone);
  c.model.dropout = 0.0;
  TrainingSession no_dropout(c);
  CHECK(no_dropout.train_step() != alone[0]);  // the masks were really applied
}

TEST_CASE("run_dropout: keeps 1-p of the entries scaled by 1/(1-p); one seed, one mask") {
  const auto x = torch::ones({200000}, torch::kFloat64);
  auto g = make_private_generator(torch::kCPU, 11);
  DropoutStreamScope scope(&g);
  const auto y = run_dropout(x, 0.25);
  const double kept = (y != 0).sum().item<double>() / x.numel();
  CHECK(kept == doctest::Approx(0.75).epsilon(0.01));  // 5 sd of a binomial is 0.5%
  CHECK(y.max().item<double>() == doctest::Approx(1 / 0.75));
  auto g2 = make_private_generator(torch::kCPU, 11);
  DropoutStreamScope inner(&g2);
  CHECK(torch::equal(run_dropout(x, 0.25), y));
}

TEST_CASE("run_dropout_scale: bit for bit run_dropout of ones, with a stream and without") {
  const auto o = torch::TensorOptions().dtype(torch::kFloat32);
  for (const bool stream : {true, false}) {
    CAPTURE(stream);
    auto draw = [&](bool scale_only) {
      auto g = make_private_generator(torch::kCPU, 12);
      DropoutStreamScope scope(stream ? &g : nullptr);
      torch::manual_seed(12);  // the default generator, used without a stream
      return scale_only ? run_dropout_scale({3, 4, 50, 50}, o, 0.3)
                        : run_dropout(torch::ones({3, 4, 50, 50}, o), 0.3);
    };
    const auto scale = draw(true), reference = draw(false);
    CHECK(torch::equal(scale, reference));
    CHECK((scale == 0).any().item<bool>());  // some dropped, the rest scaled
    CHECK(scale.max().item<float>() == doctest::Approx(1 / 0.7));
  }
}

namespace {
// Bytes malloc holds for the program (every arena, and its mmapped blocks); -1 where malloc is not
// glibc's or is replaced (sanitizers), found by checking that a 1 MiB block shows.
int64_t heap_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  auto in_use = [] {
    const struct mallinfo2 m = mallinfo2();
    return static_cast<int64_t>(m.uordblks + m.hblkhd);
  };
  const int64_t before = in_use();
  void* volatile block = std::malloc(1 << 20);
  const int64_t with_block = in_use();
  std::free(block);
  if (with_block < before + (1 << 20)) return -1;
  return in_use();
#else
  return -1;
#endif
}
}  // namespace

// LibTorch 1.13's Generator::clone() never frees the clone: a generator made per step by
// cloning held 2.6 KiB a step (2.9 KiB/step RSS, 3 GB per 1e6 steps; bench/memory_growth.sh).
TEST_CASE("training steps and private generators hold no heap memory per step (dropout on)") {
  if (heap_in_use() < 0) {
    MESSAGE("skipped: malloc statistics unavailable (not glibc >= 2.33, or a sanitizer)");
    return;
  }
  constexpr int kMany = 2000;  // a leak of 2.6 KiB each would be 5 MiB
  const int64_t generators_before = heap_in_use();
  for (int i = 0; i < kMany; ++i) (void)make_private_generator(torch::kCPU, i);
  CHECK(heap_in_use() - generators_before < 256 * 1024);

  auto c = test::tiny_config();
  c.model.dropout = 0.1;
  c.model.layers = 1;
  c.model.attention.assign(1, "dot");
  c.train.steps = 100000;
  TrainingSession s(c);
  for (int i = 0; i < 200; ++i) s.train_step();  // warm-up: allocator pools, histories' buffers
  const int64_t steps_before = heap_in_use();
  for (int i = 0; i < kMany; ++i) s.train_step();
  // The loss histories grow by a few bytes a step up to their cap (64 KiB in all): far below.
  CHECK(heap_in_use() - steps_before < 512 * 1024);
}

TEST_CASE("checkpoint round trip resumes bit-exactly (dropout on)") {
  auto c = test::tiny_config();
  c.model.dropout = 0.1;
  c.train.steps = 40;
  const auto dir = test::temp_dir("ckpt") + "/checkpoint";

  TrainingSession straight(c);
  std::vector<double> straight_losses;
  for (int i = 0; i < 20; ++i) straight_losses.push_back(straight.train_step());
  straight.evaluate();

  TrainingSession first(c);
  for (int i = 0; i < 10; ++i) first.train_step();
  first.save(dir);
  CHECK(fs::exists(fs::path(dir) / "state.json"));

  TrainingSession resumed(TrainingSession::checkpoint_config(dir));
  resumed.load(dir);
  CHECK(resumed.step() == 10);
  std::vector<double> losses(straight_losses.begin(), straight_losses.begin() + 10);
  for (int i = 0; i < 10; ++i) losses.push_back(resumed.train_step());
  CHECK(losses == straight_losses);  // exact equality, not approximate
  CHECK(same(params_of(resumed), params_of(straight)));
  resumed.evaluate();
  CHECK(resumed.last_eval_loss() == straight.last_eval_loss());
}

// Every registered mechanism's weights survive a checkpoint. (A submodule named "in", a Python
// keyword, once made torch::load fail for pseudo, semi-fusion and linear-sim checkpoints.)
TEST_CASE("checkpoints of every mechanism load back with identical weights") {
  for (const std::string& mechanism : attention_mechanism_names()) {
    CAPTURE(mechanism);
    auto c = test::tiny_config();
    c.model.attention.assign(2, mechanism);
    if (mechanism == "neural") c.model.attention_options["neural"]["placement"] = "all-layers";
    const auto dir = test::temp_dir("ckpt-" + mechanism) + "/checkpoint";
    TrainingSession trained(c);
    for (int i = 0; i < 3; ++i) trained.train_step();
    trained.save(dir);
    TrainingSession loaded(TrainingSession::checkpoint_config(dir));
    REQUIRE_NOTHROW(loaded.load(dir));
    CHECK(same(params_of(loaded), params_of(trained)));
    fs::remove_all(fs::path(dir).parent_path());
  }
}

TEST_CASE("a corrupt or mismatched checkpoint is refused with a message") {
  auto c = test::tiny_config();
  const auto root = test::temp_dir("ckpt-bad");
  const auto dir = root + "/checkpoint";
  TrainingSession s(c);
  s.train_step();
  s.save(dir);

  SUBCASE("other config") {
    auto other = c;
    other.model.d_model = 32;
    TrainingSession t(other);
    CHECK_THROWS_WITH_AS(t.load(dir), doctest::Contains("model.d_model: 16 vs 32"), Error);
  }
  SUBCASE("truncated weights") {
    const auto model = fs::path(dir) / "model.safetensors";
    fs::resize_file(model, fs::file_size(model) / 2);
    TrainingSession t(c);
    CHECK_THROWS_WITH_AS(t.load(dir), doctest::Contains("model.safetensors is corrupt"), Error);
  }
  SUBCASE("garbage state") {
    { std::ofstream(fs::path(dir) / "state.json") << "{not json"; }
    CHECK_THROWS_WITH_AS(TrainingSession::checkpoint_config(dir), doctest::Contains("corrupt"),
                         Error);
  }
  SUBCASE("not a checkpoint") {
    CHECK_THROWS_WITH_AS(TrainingSession::checkpoint_config(root),
                         doctest::Contains("not an attnlab checkpoint"), Error);
  }
}

namespace {
std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

// Weights, buffers, AdamW's moments and steps and the books survive save -> load bit for bit:
// the loaded session saves the very same bytes, and both continue identically.
TEST_CASE("checkpoint save -> load -> save gives identical files; moments and steps included") {
  auto c = test::tiny_config();
  c.model.dropout = 0.1;
  const auto root = test::temp_dir("ckpt-bits");
  TrainingSession first(c);
  for (int i = 0; i < 7; ++i) first.train_step();
  first.evaluate();
  first.save(root + "/a");
  TrainingSession second(TrainingSession::checkpoint_config(root + "/a"));
  second.load(root + "/a");
  second.save(root + "/b");
  for (const char* name : {"model.safetensors", "optimizer.safetensors", "state.json"}) {
    CAPTURE(name);
    const std::string a = file_bytes(fs::path(root) / "a" / name);
    CHECK(a.size() > 100);
    CHECK(a == file_bytes(fs::path(root) / "b" / name));
  }
  // Every parameter has its two moments in optimizer.safetensors, and its step in state.json.
  const auto state = nlohmann::json::parse(file_bytes(fs::path(root) / "a" / "state.json"));
  CHECK(state.at("format_version") == 2);
  const std::string moments = file_bytes(fs::path(root) / "a" / "optimizer.safetensors");
  int params = 0;
  for (const auto& p : first.model()->named_parameters()) {
    ++params;
    CHECK(state["optimizer"]["steps"].at(p.key()) == 7);
    CHECK(moments.find("\"" + p.key() + ".exp_avg\"") != std::string::npos);
    CHECK(moments.find("\"" + p.key() + ".exp_avg_sq\"") != std::string::npos);
  }
  CHECK(params > 5);
  CHECK(same(params_of(second), params_of(first)));
  for (int i = 0; i < 3; ++i) CHECK(second.train_step() == first.train_step());
  CHECK(same(params_of(second), params_of(first)));
  fs::remove_all(root);
}

// The old format (model.pt, optimizer.pt: TorchScript archives, which can run code) is refused
// without being opened, by every reader, with a message naming `attnlab migrate`.
TEST_CASE("an old-format checkpoint is refused unopened, naming attnlab migrate") {
  auto c = test::tiny_config();
  const auto root = test::temp_dir("ckpt-old");
  const auto dir = root + "/checkpoint";
  TrainingSession s(c);
  s.train_step();
  s.save(dir);
  auto state = nlohmann::json::parse(file_bytes(fs::path(dir) / "state.json"));
  SUBCASE("format_version 1") {
    state["format_version"] = 1;
    std::ofstream(fs::path(dir) / "state.json") << state.dump();
  }
  SUBCASE("model.pt without model.safetensors") {
    fs::remove(fs::path(dir) / "model.safetensors");
  }
  std::ofstream(fs::path(dir) / "model.pt") << "not opened";
  TrainingSession t(c);
  CHECK_THROWS_WITH_AS(t.load(dir), doctest::Contains(("attnlab migrate --run " + root).c_str()), Error);
  CHECK_THROWS_WITH_AS(TrainingSession::checkpoint_config(dir),
                       doctest::Contains("TorchScript archives"), Error);
  CHECK_THROWS_WITH_AS(load_checkpoint_weights(*t.model(), dir),
                       doctest::Contains("attnlab migrate"), Error);
  CHECK(t.step() == 0);
  fs::remove_all(root);
}

TEST_CASE("saving over a checkpoint replaces it whole") {
  auto c = test::tiny_config();
  const auto dir = test::temp_dir("ckpt-over") + "/checkpoint";
  TrainingSession s(c);
  s.train_step();
  s.save(dir);
  s.train_step();
  s.save(dir);
  TrainingSession t(c);
  t.load(dir);
  CHECK(t.step() == 2);
  CHECK(same(params_of(t), params_of(s)));
  int entries = 0;
  for (auto& e : fs::directory_iterator(fs::path(dir).parent_path())) (void)e, ++entries;
  CHECK(entries == 1);  // no temporary or old directories left behind
}

TEST_CASE("a NaN loss throws DivergedError and leaves the weights untouched") {
  TrainingSession s(test::diverging_config());
  s.set_recovery(false);  // with recovery on, the last good weights come back (test_hardening)
  bool diverged = false;
  for (int i = 0; i < 50 && !diverged; ++i) {
    auto before = params_of(s);
    try {
      s.train_step();
    } catch (const DivergedError& e) {
      diverged = true;
      CHECK(std::string(e.what()).find("weights were not updated") != std::string::npos);
      CHECK(same(before, params_of(s)));
    }
  }
  CHECK(diverged);
}

TEST_CASE("loss falls on every synthetic task") {
  // Training loss (mean of the first vs the last 10 steps): modadd's held-out eval loss may
  // rise early while the model memorises, which is the point of holding pairs out.
  for (std::string task : {"copy", "reverse", "sort", "recall", "modadd", "induction"}) {
    INFO(task);
    auto c = test::tiny_config(task);
    c.model.d_model = 32;
    c.train.steps = 80;
    c.train.batch_size = 32;
    c.train.lr = 3e-3;
    if (task == "modadd") c.task.modulus = 7;
    TrainingSession s(c);
    std::vector<double> losses;
    for (int i = 0; i < 80; ++i) losses.push_back(s.train_step());
    const double first = std::accumulate(losses.begin(), losses.begin() + 10, 0.0) / 10;
    const double last = std::accumulate(losses.end() - 10, losses.end(), 0.0) / 10;
    CHECK(last < 0.85 * first);
  }
}

TEST_CASE("probe attention: one row-stochastic map per layer and head") {
  auto c = test::tiny_config();
  TrainingSession s(c);
  Snapshot snap;
  s.probe_attention(snap);
  CHECK(snap.layers == 2);
  CHECK(snap.heads == 2);
  REQUIRE(snap.attention_maps().size() == 4);
  const int n = static_cast<int>(snap.probe_tokens.size());
  CHECK(n == s.task().sequence_length());
  for (const auto& m : snap.attention_maps()) {
    CHECK(m.size == n);
    for (int i = 0; i < n; ++i) {
      double row = 0;
      for (int j = 0; j < n; ++j) row += m.weights[i * n + j];
      CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
      for (int j = i + 1; j < n; ++j) CHECK(m.weights[i * n + j] == 0.0f);
    }
  }
}

TEST_CASE("AdamW decays weight matrices only: not biases (per-head ones included), norms or CLS") {
  // A classifier (CLS token) with a ky layer (per-head biases b1, b2: H x hidden matrices) and
  // a neural layer with a down-projection bias: every kind of parameter the rule must sort.
  ModelConfig m;
  m.d_model = 32;
  m.heads = 4;
  m.layers = 2;
  m.attention = {"ky", "neural"};
  m.attention_options = {
      {"ky", {{"window", 4}, {"hidden", 8}}},
      {"neural", {{"down", 2}, {"down_bias", true}, {"hidden", 8}, {"placement", "all-layers"}}}};
  m.head = "classifier";
  m.classes = 3;
  Transformer model(m, /*vocab=*/0, /*max_length=*/16, /*patch_dim=*/12);
  std::set<std::string> decayed, kept;
  for (const auto& p : model->named_parameters())
    (weight_decayed(p.key(), p.value()) ? decayed : kept).insert(p.key());
  const auto any = [](const std::set<std::string>& names, const std::string& tail) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return n.size() >= tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0;
    });
  };
  // The names the model really has, each on the side the optimiser's documentation puts it.
  for (const std::string tail :
       {"cls", ".b1", ".b2", ".b3", "hidden_bias", "score_bias", "query_down_bias", "qkv.bias"}) {
    CAPTURE(tail);
    CHECK(any(kept, tail));
    CHECK_FALSE(any(decayed, tail));
  }
  for (const std::string tail :
       {".w1", ".w2", ".w3", "qkv.weight", "hidden_query", "query_down", "score_weight"}) {
    CAPTURE(tail);
    CHECK(any(decayed, tail));
    CHECK_FALSE(any(kept, tail));
  }
  for (const auto& p : model->named_parameters())
    if (p.value().dim() < 2) CHECK(kept.count(p.key()) == 1);  // norms and plain biases
}
