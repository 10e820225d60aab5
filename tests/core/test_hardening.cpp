// Hardening (issue 11): divergence caught and undone, checkpoints that survive SIGKILL and
// refuse damage without loading half, atomic files, out-of-memory as a state, not a crash.
#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/training/session/session.h"
#include "core/training/session/training_errors.h"
#include "core/training/trainer.h"
#include "helpers.h"

extern char** environ;

using namespace attn;
using test::fast_options;
using test::in_state;
using test::params_of;
using test::same;
namespace fs = std::filesystem;
using test::wait_until;

namespace {

bool all_finite(const std::vector<torch::Tensor>& ps) {
  for (const auto& p : ps)
    if (!torch::isfinite(p).all().item<bool>()) return false;
  return true;
}
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

namespace attn::test {
// The child of "a checkpoint survives SIGKILL during a save" (see main.cpp).
int save_loop_child(const char* dir) {
  torch::set_num_threads(1);
  auto c = tiny_config();
  c.train.steps = 1000000;
  TrainingSession s(c);
  if (fs::exists(fs::path(dir) / "state.json")) s.load(dir);  // go on from the last save
  for (;;) {
    s.train_step();
    s.save(dir);
  }
}
}  // namespace attn::test

TEST_CASE("lr 1e6: the blow-up is caught one step after the update that caused it") {
  auto c = test::diverging_config();
  c.train.steps = 1000;
  TrainingSession s(c);
  std::vector<torch::Tensor> last_good;
  int64_t last_good_step = -1;
  std::string message;
  for (int i = 0; i < 20 && message.empty(); ++i) {
    auto before = params_of(s);
    const int64_t step = s.step();
    try {
      s.train_step();
      last_good = std::move(before);  // the weights this successful update started from
      last_good_step = step;
    } catch (const DivergedError& e) {
      message = e.what();
    }
  }
  REQUIRE(!message.empty());
  INFO(message);
  REQUIRE(last_good_step >= 0);
  // Caught at the first step after the bad update: one successful update, then the catch.
  CHECK(s.step() == last_good_step);
  CHECK(same(params_of(s), last_good));  // the last good weights, bit for bit
  CHECK(all_finite(params_of(s)));
  CHECK(s.restores() == 1);
  CHECK(message.find("restored the weights of step " + std::to_string(last_good_step)) !=
        std::string::npos);
  CHECK(message.find("Lower the learning rate") != std::string::npos);

  // The optimiser's moments and the step came back too: after the restore, a lower learning
  // rate continues exactly like a run that never saw lr 1e6 past that step.
  TrainingSession reference(c);
  for (int64_t i = 0; i < last_good_step; ++i) reference.train_step();
  REQUIRE(same(params_of(reference), params_of(s)));
  s.set_peak_learning_rate(1e-3);
  reference.set_peak_learning_rate(1e-3);
  for (int i = 0; i < 5; ++i) {
    const double a = s.train_step(), b = reference.train_step();
    CHECK(a == b);
    CHECK(std::isfinite(a));
  }
  CHECK(same(params_of(s), params_of(reference)));
}

TEST_CASE("an update that makes the weights non-finite is undone at once") {
  auto c = test::tiny_config();
  TrainingSession s(c);
  for (int i = 0; i < 3; ++i) s.train_step();
  const auto before = params_of(s);
  s.set_peak_learning_rate(std::numeric_limits<double>::infinity());
  CHECK_THROWS_WITH_AS(s.train_step(), doctest::Contains("weights became non-finite"),
                       DivergedError);
  CHECK(s.step() == 3);
  CHECK(same(params_of(s), before));
  s.set_peak_learning_rate(1e-3);
  CHECK(std::isfinite(s.train_step()));
  CHECK(s.step() == 4);
}

TEST_CASE("trainer: lr 1e6 -> Diverged with the good weights; lower lr, start -> trains on") {
  auto c = test::diverging_config();
  c.train.steps = 100000;
  Trainer t(c, fast_options());
  t.start();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Diverged); }));
  auto diverged = t.latest();
  INFO(diverged->message);
  CHECK(diverged->message.find("restored the weights of step") != std::string::npos);
  const int64_t at = diverged->step;
  t.set_learning_rate(1e-3);
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step >= at + 30; }));
  auto s = t.latest();
  CHECK(s->state == TrainerState::Running);
  REQUIRE(!s->train_loss.values.empty());
  const float last = s->train_loss.values.back();
  CHECK(std::isfinite(last));
  CHECK(last < 2 * std::log(8.0f));  // a sane model again: within 2x a uniform guess
  t.pause();
}

TEST_CASE("out of memory in a step: Error state with a message, the trainer lives on") {
  auto c = test::tiny_config();
  c.train.steps = 100000;
  auto o = fast_options();
  std::atomic<bool> inject{true};
  o.before_step = [&](int64_t step) {
    if (step == 3 && inject.exchange(false))
      throw c10::Error({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                       "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.11 GiB "
                       "total capacity)");
  };
  Trainer t(c, o);
  t.start();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Error); }));
  const auto msg = t.latest()->message;
  INFO(msg);
  CHECK(msg.find("out of memory on cpu at step 3") != std::string::npos);
  CHECK(msg.find("batch_size") != std::string::npos);
  CHECK(t.latest()->step == 3);
  t.reset();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Idle); }));
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step >= 10; }));
}

TEST_CASE("is_allocation_failure matches LibTorch's OOM errors, CPU and CUDA, and nothing else") {
  const c10::Error oom({"f", "file", 1}, "CUDA out of memory. Tried to allocate 20.00 MiB");
  const c10::Error cpu_oom({"f", "file", 1},
                           "DefaultCPUAllocator: not enough memory: you tried to allocate 8 GB");
  const c10::Error other({"f", "file", 1}, "size mismatch");
  CHECK(is_allocation_failure(oom));
  CHECK(is_allocation_failure(cpu_oom));  // the window frees memory after this one too
  CHECK(is_allocation_failure(std::bad_alloc()));
  CHECK_FALSE(is_allocation_failure(other));
  CHECK_FALSE(is_allocation_failure(Error("out of memory")));  // our own errors say what they mean
  CHECK(training_failure_message(other, test::tiny_config(), 7, "cpu") == "size mismatch");
}

TEST_CASE("damaged checkpoints are refused naming the file, and nothing is half loaded") {
  auto c = test::tiny_config();
  const auto root = test::temp_dir("ckpt-damaged");
  const auto dir = root + "/checkpoint";
  TrainingSession saved(c);
  for (int i = 0; i < 5; ++i) saved.train_step();
  saved.save(dir);

  TrainingSession target(c);
  for (int i = 0; i < 2; ++i) target.train_step();
  const auto before = params_of(target);
  REQUIRE_FALSE(same(before, params_of(saved)));
  auto refused = [&](const std::string& expected) {
    CHECK_THROWS_WITH_AS(target.load(dir), doctest::Contains(expected.c_str()), Error);
    CHECK(target.step() == 2);
    CHECK(same(params_of(target), before));     // exactly as it was
    CHECK(std::isfinite(target.train_step()));  // and still trains
    CHECK(target.step() == 3);
  };
  SUBCASE("truncated optimizer.safetensors after a good model.safetensors: nothing is loaded") {
    const auto p = fs::path(dir) / "optimizer.safetensors";
    fs::resize_file(p, fs::file_size(p) / 3);
    refused((fs::path(dir) / "optimizer.safetensors").string() + " is corrupt");
  }
  SUBCASE("truncated model.safetensors") {
    const auto p = fs::path(dir) / "model.safetensors";
    fs::resize_file(p, fs::file_size(p) - 100);
    refused((fs::path(dir) / "model.safetensors").string() + " is corrupt");
  }
  SUBCASE("model.safetensors with flipped bytes") {
    const auto p = fs::path(dir) / "model.safetensors";
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
    f.close();
    refused((fs::path(dir) / "model.safetensors").string() + " is corrupt");
  }
  SUBCASE("missing optimizer.safetensors") {
    fs::remove(fs::path(dir) / "optimizer.safetensors");
    refused("optimizer.safetensors is missing");
  }
  // An attacker writes state.json too: with its records rewritten to match, the bounded reader's
  // own checks still refuse what is not this model's, naming the file and the tensor.
  SUBCASE("a dtype changed in model.safetensors, with state.json's record rewritten to match") {
    const auto p = fs::path(dir) / "model.safetensors";
    std::string bytes = slurp(p);
    const size_t at = bytes.find("\"F32\"");
    REQUIRE(at != std::string::npos);
    bytes.replace(at, 5, "\"I32\"");
    std::ofstream(p, std::ios::binary) << bytes;
    const auto sp = fs::path(dir) / "state.json";
    auto j = nlohmann::json::parse(slurp(sp));
    j["files"]["model.safetensors"] = {
        {"size", bytes.size()},
        {"crc32", static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()),
                                              static_cast<uInt>(bytes.size())))}};
    std::ofstream(sp) << j.dump();
    refused("has dtype \"I32\", expected \"F32\"");
  }
  SUBCASE("state.json cut short") {
    const auto p = fs::path(dir) / "state.json";
    fs::resize_file(p, fs::file_size(p) / 2);
    refused("state.json is corrupt");
  }
  SUBCASE("state.json without its history") {
    const auto p = fs::path(dir) / "state.json";
    auto j = nlohmann::json::parse(slurp(p));
    j.erase("history");
    std::ofstream(p) << j.dump();
    refused("state.json is incomplete");
  }
  fs::remove_all(root);
}

TEST_CASE("atomic files: whole or nothing, no temporaries left, failures name the path") {
  const auto root = test::temp_dir("atomic");
  const auto path = root + "/out.txt";
  write_file_atomic(path, "first\n");
  write_file_atomic(path, "second\n");
  CHECK(slurp(path) == "second\n");
  CHECK(!fs::exists(temporary_path(path)));
  int entries = 0;
  for (auto& e : fs::directory_iterator(root)) (void)e, ++entries;
  CHECK(entries == 1);
  CHECK_THROWS_WITH_AS(write_file_atomic(root + "/no/such/dir/x.txt", "x"),
                       doctest::Contains((root + "/no/such/dir/x.txt").c_str()), Error);

  // A directory swap interrupted between its renames leaves "<target>.old-<pid>": the next
  // reader puts it back.
  const auto target = root + "/ckpt";
  fs::create_directories(target + ".old-999999");
  write_file_atomic(target + ".old-999999/state.json", "{}");
  CHECK(recover_directory(target));
  CHECK(fs::exists(target + "/state.json"));
  CHECK_FALSE(recover_directory(target));  // target exists: nothing to do

  // Leftovers of killed writers (dead pids) go; a live process's temporary stays.
  fs::create_directories(target + ".tmp-999999");
  fs::create_directories(target + ".tmp-" + std::to_string(getppid()));
  remove_stale_siblings(target);
  CHECK_FALSE(fs::exists(target + ".tmp-999999"));
  CHECK(fs::exists(target + ".tmp-" + std::to_string(getppid())));
  fs::remove_all(root);
}

TEST_CASE("atomic file sets: all written, or none and no temporaries") {
  const auto root = test::temp_dir("atomic_set");
  const auto a = root + "/fig.pdf", b = root + "/fig.csv", c = root + "/fig.json";
  write_file_atomic(b, "old csv\n");  // one of the set exists before
  write_files_atomic({{a, "pdf"}, {b, "csv"}, {c, "json"}});
  CHECK(slurp(a) == "pdf");
  CHECK(slurp(b) == "csv");
  CHECK(slurp(c) == "json");
  auto entries = [&] {
    int n = 0;
    for (auto& e : fs::directory_iterator(root)) (void)e, ++n;
    return n;
  };
  CHECK(entries() == 3);  // no temporaries left

  // A member that cannot be written (a directory in its place): nothing changes, nothing left.
  fs::create_directories(root + "/blocked.csv");
  CHECK_THROWS_WITH_AS(
      write_files_atomic({{root + "/new.pdf", "x"}, {root + "/blocked.csv", "y"}, {a, "changed"}}),
      doctest::Contains((root + "/blocked.csv").c_str()), Error);
  CHECK_FALSE(fs::exists(root + "/new.pdf"));
  CHECK(slurp(a) == "pdf");
  CHECK(entries() == 4);  // the three files and the blocking directory

  // A member whose directory is missing fails after others were staged: their temporaries go.
  CHECK_THROWS_AS(write_files_atomic({{root + "/x.pdf", "x"}, {root + "/no/dir/x.csv", "y"}}),
                  Error);
  CHECK_FALSE(fs::exists(root + "/x.pdf"));
  CHECK_FALSE(fs::exists(temporary_path(root + "/x.pdf")));
  CHECK(entries() == 4);
  fs::remove_all(root);
}

TEST_CASE("a checkpoint survives SIGKILL during a save: the previous one stays loadable") {
  const auto root = test::temp_dir("sigkill");
  const auto dir = root + "/checkpoint";
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::mt19937 rng(11);
  int interrupted_saves = 0;  // kills that landed inside a save (its temporary was left)
  int64_t last_step = 0;
  const int rounds = 12;
  for (int round = 0; round < rounds; ++round) {
    pid_t pid = 0;
    char* argv[] = {const_cast<char*>(self.c_str()), const_cast<char*>("--save-loop"),
                    const_cast<char*>(dir.c_str()), nullptr};
    REQUIRE(posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, environ) == 0);
    // Wait for this child's first completed save, then kill it at a random moment.
    const auto stamp = [&] {
      std::error_code ec;
      return fs::exists(dir + "/state.json", ec) ? fs::last_write_time(dir + "/state.json", ec)
                                                 : fs::file_time_type{};
    };
    const auto start_stamp = stamp();
    REQUIRE(wait_until([&] { return stamp() != start_stamp; }, 60));
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(0, 150000)(rng)));
    REQUIRE(kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFSIGNALED(status));
    std::error_code ec;
    if (fs::exists(dir + ".tmp-" + std::to_string(pid), ec)) ++interrupted_saves;

    // The checkpoint loads, whole, at a step no earlier than before.
    TrainingSession loaded(TrainingSession::checkpoint_config(dir));
    REQUIRE_NOTHROW(loaded.load(dir));
    CHECK(loaded.step() >= last_step);
    CHECK(all_finite(params_of(loaded)));
    last_step = loaded.step();
  }
  MESSAGE("kills inside a save: " << interrupted_saves << " of " << rounds);
  // Saves take most of each child's time, so random kills land inside one; a test whose kills
  // all missed the window would prove nothing.
  CHECK(interrupted_saves >= 1);
  // The next save clears what the killed ones left.
  TrainingSession s(test::tiny_config());
  s.save(dir);
  int entries = 0;
  for (auto& e : fs::directory_iterator(root)) (void)e, ++entries;
  CHECK(entries == 1);
  fs::remove_all(root);
}
