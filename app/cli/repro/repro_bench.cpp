#include "app/cli/repro/repro_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "app/cli/cli.h"
#include "app/cli/repro/repro_provenance.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/base/version.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

int spec_int(const json& spec, const char* key, int fallback, int lo, int hi,
             const std::string& where) {
  if (!spec.contains(key)) return fallback;
  const json& v = spec[key];
  if (!v.is_number_integer() || v.get<int>() < lo || v.get<int>() > hi)
    throw Error(where + ".benchmark." + key + " must be an integer from " + std::to_string(lo) +
                " to " + std::to_string(hi) + ", got " + v.dump());
  return v.get<int>();
}

json round_json(const BenchRound& r) {
  json j = {{"mean_seconds", r.mean_seconds},
            {"best_seconds", r.best_seconds},
            {"increment_mib", r.increment_mib},
            {"floor_mib", r.floor_mib},
            {"fused_path", r.fused_path}};
  if (std::isfinite(r.heap_increment_mib)) j["heap_increment_mib"] = r.heap_increment_mib;
  return j;
}

BenchRound round_from(const json& j) {
  BenchRound r;
  r.mean_seconds = j.at("mean_seconds");
  r.best_seconds = j.at("best_seconds");
  r.increment_mib = j.at("increment_mib").is_number() ? j["increment_mib"].get<double>() : NAN;
  r.floor_mib = j.at("floor_mib").is_number() ? j["floor_mib"].get<double>() : NAN;
  r.fused_path = j.at("fused_path");
  if (j.contains("heap_increment_mib") && j["heap_increment_mib"].is_number())
    r.heap_increment_mib = j["heap_increment_mib"];
  return r;
}

}  // namespace

BenchRound bench_once(const std::string& exe, const std::string& config_file, int warmup, int steps,
                      bool unfused, const std::string& environment) {
  const std::string cmd = (environment.empty() ? "" : environment + " ") + shell_word(exe) +
                          " bench-step --config " + shell_word(config_file) + " --warmup " +
                          std::to_string(warmup) + " --steps " + std::to_string(steps) +
                          (unfused ? " --unfused" : "");
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw Error("cannot start " + cmd);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  if (status != 0) throw Error(cmd + " failed (exit status " + std::to_string(status) + ")");
  const json j = json::parse(out);
  BenchRound r;
  r.mean_seconds = j.at("mean_seconds");
  r.best_seconds = j.at("best_seconds");
  r.increment_mib = j.value("increment_mib", std::nan(""));
  r.floor_mib = j.value("floor_mib", std::nan(""));
  r.fused_path = j.at("fused_path");
  r.allocator = j.value("allocator", "");
  return r;
}

const char* const kMemoryPassEnvironment = "MALLOC_MMAP_THRESHOLD_=131072";

int memory_pass_warmup(int warmup) {
  return std::min(warmup, 1);
}

int memory_pass_steps(int steps) {
  return std::min(steps, 3);
}

BenchRound bench_timed_then_measured(const std::string& exe, const std::string& config_file,
                                     int warmup, int steps, bool unfused) {
  BenchRound r = bench_once(exe, config_file, warmup, steps, unfused);
  const BenchRound m = bench_once(exe, config_file, memory_pass_warmup(warmup),
                                  memory_pass_steps(steps), unfused, kMemoryPassEnvironment);
  if (m.allocator.find(kMemoryPassEnvironment) == std::string::npos)
    throw Error("the memory pass of " + config_file + " ran under allocator \"" + m.allocator +
                "\", not " + kMemoryPassEnvironment + ": is this attnlab's own binary?");
  r.heap_increment_mib = r.increment_mib;
  r.increment_mib = m.increment_mib;
  r.floor_mib = m.floor_mib;
  return r;
}

json memory_pass_json(int warmup, int steps) {
  return {{"process", "separate"},
          {"environment", kMemoryPassEnvironment},
          {"warmup", memory_pass_warmup(warmup)},
          {"steps", memory_pass_steps(steps)}};
}

json measured_by_json() {
  return {
      {"commit", commit_string()}, {"binary_sha256", this_binary_sha256()}, {"date", utc_now()}};
}

std::string measured_by_text(const json& m) {
  if (m.is_null()) return "";
  const std::string commit = m.value("commit", std::string("unknown"));
  const json& sha = m.contains("binary_sha256") ? m["binary_sha256"] : json();
  return "Measured " + m.value("date", std::string("(no date)")) + " by commit `" +
         commit.substr(0, 12) + "`" +
         (sha.is_string() ? " (binary sha256 `" + sha.get<std::string>().substr(0, 16) + "`)"
                          : std::string()) +
         ".";
}

std::string memory_method_text(const json& memory, const std::string& per) {
  if (memory.is_null())
    return "taken in the timed process, whose allocator keeps freed blocks under 32 MiB in its "
           "heap (attnlab's default): such an increment follows how that heap fragments and "
           "moved by a third between builds (comparing.md, \"Memory figures across builds\"), "
           "so compare it only within this file";
  return "taken in a second process per " + per + " and round, `" +
         memory.value("environment", std::string("?")) + " attnlab bench-step` with " +
         std::to_string(memory.value("warmup", 0)) + " warm-up and " +
         std::to_string(memory.value("steps", 0)) +
         " measured steps: every block of 128 KiB or more is then its own mapping, returned "
         "when freed, so the peak follows the live tensors and repeats across builds "
         "(comparing.md, \"Memory figures across builds\"); the timed "
         "process's own increment stays in the file as heap_increment_mib";
}

std::string shell_word(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_./=+,:@%") == std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool ArmBench::fused() const {
  return std::any_of(as_trained.begin(), as_trained.end(),
                     [](const BenchRound& r) { return r.fused_path; });
}

const ArmBench* ReproBench::find(const std::string& arm) const {
  for (const auto& a : arms)
    if (a.arm == arm) return &a;
  return nullptr;
}

void validate_bench_spec(const json& spec, const std::vector<std::string>& arms,
                         const std::string& where) {
  if (spec.is_null()) return;
  if (!spec.is_object() || !spec.contains("arms") || !spec["arms"].is_array())
    throw Error(where + ".benchmark must be an object with a list \"arms\"");
  for (const auto& a : spec["arms"])
    if (!a.is_string() || std::find(arms.begin(), arms.end(), a.get<std::string>()) == arms.end())
      throw Error(where + ".benchmark.arms names " + a.dump() + ", which is not an arm");
  spec_int(spec, "rounds", 5, 1, 100, where);
  spec_int(spec, "warmup", 3, 0, 10000, where);
  spec_int(spec, "steps", 20, 1, 100000, where);
}

ReproBench run_repro_bench(const ReproPlan& plan, const json& spec, const std::string& work_dir,
                           const std::function<void(const std::string&)>& log) {
  ReproBench b;
  const std::string where = plan.dir + "/repro.json";
  b.rounds = spec_int(spec, "rounds", 5, 1, 100, where);
  b.warmup = spec_int(spec, "warmup", 3, 0, 10000, where);
  b.steps = spec_int(spec, "steps", 20, 1, 100000, where);
  b.memory = memory_pass_json(b.warmup, b.steps);
  b.measured_by = measured_by_json();
  std::error_code ec;
  const std::string exe = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec)
    throw Error("the benchmark needs this executable's path (/proc/self/exe): " + ec.message());
  fs::create_directories(work_dir);
  std::vector<std::string> files;
  for (const auto& name : spec.at("arms")) {
    const auto it = std::find_if(plan.arms.begin(), plan.arms.end(),
                                 [&](const TunedArm& a) { return a.name == name; });
    ArmBench arm;
    arm.arm = it->name;
    b.arms.push_back(arm);
    files.push_back((fs::path(work_dir) / (it->dir + ".json")).string());
    write_file_atomic(files.back(), it->config.dump(2) + "\n");
  }
  const size_t n = b.arms.size();
  for (int r = 0; r < b.rounds; ++r)
    for (size_t k = 0; k < n; ++k) {
      if (const int sig = stop_signal()) throw Interrupted{sig};
      const size_t i = r % 2 == 0 ? k : n - 1 - k;  // A B, then B A
      ArmBench& arm = b.arms[i];
      const BenchRound fused = bench_timed_then_measured(exe, files[i], b.warmup, b.steps, false);
      arm.as_trained.push_back(fused);
      arm.libtorch.push_back(fused.fused_path
                                 ? bench_timed_then_measured(exe, files[i], b.warmup, b.steps, true)
                                 : fused);
      if (log)
        log("benchmark round " + std::to_string(r + 1) + "/" + std::to_string(b.rounds) + ": " +
            arm.arm + " " + fixed_number(1.0 / fused.mean_seconds, 2) + " steps/s" +
            (fused.fused_path
                 ? " (fused), " + fixed_number(1.0 / arm.libtorch.back().mean_seconds, 2) +
                       " steps/s (libtorch)"
                 : ""));
    }
  return b;
}

json bench_json(const ReproBench& b) {
  json arms = json::array();
  for (const auto& a : b.arms) {
    json t = json::array(), l = json::array();
    for (const auto& r : a.as_trained) t.push_back(round_json(r));
    for (const auto& r : a.libtorch) l.push_back(round_json(r));
    arms.push_back({{"arm", a.arm},
                    {"path", a.fused() ? "fused" : "libtorch"},
                    {"as_trained", t},
                    {"libtorch", l}});
  }
  json out = {{"rounds", b.rounds},
              {"warmup", b.warmup},
              {"steps", b.steps},
              {"threads", 1},
              {"how",
               "attnlab bench-step: a fresh process per arm and round, one torch thread, CPU; "
               "rounds alternate the arms"},
              {"arms", arms}};
  if (!b.memory.is_null()) out["memory"] = b.memory;  // absent in files that predate it
  if (!b.measured_by.is_null()) out["measured_by"] = b.measured_by;
  return out;
}

ReproBench bench_from_json(const json& j) {
  ReproBench b;
  b.rounds = j.at("rounds");
  b.warmup = j.at("warmup");
  b.steps = j.at("steps");
  b.memory = j.value("memory", json());
  b.measured_by = j.value("measured_by", json());
  for (const auto& a : j.at("arms")) {
    ArmBench arm;
    arm.arm = a.at("arm");
    for (const auto& r : a.at("as_trained")) arm.as_trained.push_back(round_from(r));
    for (const auto& r : a.at("libtorch")) arm.libtorch.push_back(round_from(r));
    b.arms.push_back(std::move(arm));
  }
  return b;
}

std::vector<double> bench_values(const ArmBench& arm, const std::string& metric,
                                 const std::string& path) {
  const auto& rounds = path == "libtorch" ? arm.libtorch : arm.as_trained;
  std::vector<double> out;
  for (const auto& r : rounds)
    out.push_back(metric == "steps_per_second" ? 1.0 / r.mean_seconds : r.increment_mib);
  return out;
}

std::string bench_markdown(const ReproBench& b) {
  std::ostringstream md;
  md << "| arm | path as trained | steps/s as trained (best, mean) | steps/s LibTorch ops (best, "
        "mean) | memory increment MiB as trained | memory increment MiB LibTorch ops | process "
        "floor MiB |\n|---|---|---|---|---|---|---|\n";
  for (const auto& a : b.arms) {
    auto cell = [](const std::vector<double>& v, int p) {
      if (v.empty()) return std::string("-");
      double best = v[0], sum = 0;
      for (double x : v) best = std::max(best, x), sum += x;
      return fixed_number(best, p) + ", " + fixed_number(sum / v.size(), p);
    };
    auto min_of = [](const std::vector<double>& v) {
      double m = INFINITY;
      for (double x : v) m = std::min(m, x);
      return v.empty() ? std::string("-") : fixed_number(m, 1);
    };
    std::vector<double> floors;
    for (const auto& r : a.as_trained) floors.push_back(r.floor_mib);
    md << "| " << a.arm << " | " << (a.fused() ? "fused CPU kernel" : "LibTorch ops") << " | "
       << cell(bench_values(a, "steps_per_second", "as_trained"), 2) << " | "
       << cell(bench_values(a, "steps_per_second", "libtorch"), 2) << " | "
       << min_of(bench_values(a, "memory_increment_mib", "as_trained")) << " | "
       << min_of(bench_values(a, "memory_increment_mib", "libtorch")) << " | " << min_of(floors)
       << " |\n";
  }
  md << "\nEach figure is " << b.rounds << " rounds of `attnlab bench-step` (a fresh process, one "
     << "torch thread, " << b.warmup << " warm-up steps, then " << b.steps
     << " timed steps). Memory is the smallest increment of the peak resident memory over the "
        "process's floor before the first step, across rounds, "
     << memory_method_text(b.memory) << ".";
  if (!b.measured_by.is_null()) md << " " << measured_by_text(b.measured_by);
  md << "\n";
  return md.str();
}

}  // namespace attn
