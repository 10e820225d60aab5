#include "core/training/headless/pack.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "core/base/error.h"
#include "core/base/interrupt.h"

#ifdef ATTN_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace attn {
namespace {

using Clock = std::chrono::steady_clock;

// The pack's common start: every run arrives once, when it is about to take its first step
// (and waits for the others) or when it ended before that (and does not wait).
class StartLine {
 public:
  explicit StartLine(size_t runs) : left_(runs) {}
  void arrive(bool wait) {
    std::unique_lock<std::mutex> lock(mu_);
    if (--left_ == 0) {
      start_ = Clock::now();
      all_.notify_all();
    }
    if (wait) all_.wait(lock, [&] { return left_ == 0; });
  }
  // When the last run arrived (now, when none ever did).
  Clock::time_point start() {
    std::lock_guard<std::mutex> lock(mu_);
    return left_ == 0 ? start_ : Clock::now();
  }

 private:
  std::mutex mu_;
  std::condition_variable all_;
  size_t left_;
  Clock::time_point start_;
};

// One run of the pack, on the calling thread: its exit code and steps/s.
PackRunResult train_one(const PackRun& run, StartLine& line) {
#ifdef ATTN_WITH_CUDA
  // The thread's current stream: this run's eager kernels and graph replays queue on it, not on
  // the legacy default stream that would serialise the pack.
  std::optional<c10::cuda::CUDAStreamGuard> stream;
  if (torch::cuda::is_available()) stream.emplace(at::cuda::getStreamFromPool(false, 0));
#endif
  bool arrived = false;
  HeadlessOptions h = run.options;
  h.threads = 1;  // one torch intra-op thread per run: N runs share the cores
  h.max_threads = 0;
  h.on_start = [&] {
    arrived = true;
    line.arrive(/*wait=*/true);
  };
  auto log = [&](const std::string& s) {
    if (run.options.log) run.options.log(s);
  };
  PackRunResult r;
  try {
    if (!run.refused.empty()) throw Error(run.refused);
    const RunSummary s = train_headless(run.config, h);
    r.exit_code = s.diverged ? 3 : 0;
    r.steps_per_second = s.steps_per_second;
  } catch (const Interrupted& i) {
    r.exit_code = 128 + i.signal;  // the checkpoint and the interrupted summary are saved
  } catch (const std::exception& e) {
    log(std::string("failed: ") + e.what());
    r.exit_code = arrived ? 1 : 2;
  } catch (...) {
    log("failed with an unknown error");
    r.exit_code = 1;
  }
  if (!arrived) line.arrive(/*wait=*/false);
  return r;
}

}  // namespace

PackResult train_pack(const std::vector<PackRun>& runs) {
  PackResult out;
  out.runs.resize(runs.size());
  if (runs.empty()) return out;
  StartLine line(runs.size());
  std::vector<std::thread> threads;
  threads.reserve(runs.size());
  for (size_t i = 0; i < runs.size(); ++i)
    threads.emplace_back([&, i] { out.runs[i] = train_one(runs[i], line); });
  for (auto& t : threads) t.join();
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - line.start()).count();
  return out;
}

bool pack_gpu_present() {
  return torch::cuda::is_available();
}

int choose_pack_size(int requested, int cells, bool gpu) {
  const int n = requested > 0 ? requested : gpu ? 16 : 1;
  return std::max(1, std::min(n, cells));
}

nlohmann::json pack_result_json(const PackResult& r) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : r.runs)
    runs.push_back({{"exit_code", run.exit_code}, {"steps_per_second", run.steps_per_second}});
  return {{"wall_seconds", r.wall_seconds}, {"runs", runs}};
}

PackResult pack_result_from_json(const nlohmann::json& j, size_t runs, const std::string& what) {
  PackResult r;
  try {
    const auto& list = j.at("runs");
    if (!list.is_array() || list.size() != runs)
      throw Error("expected " + std::to_string(runs) + " runs");
    r.wall_seconds = j.at("wall_seconds").get<double>();
    for (const auto& run : list)
      r.runs.push_back({run.at("exit_code").get<int>(), run.at("steps_per_second").get<double>()});
  } catch (const std::exception& e) {
    throw Error(what + " is not a pack's result (" + e.what() + ")");
  }
  return r;
}

}  // namespace attn
