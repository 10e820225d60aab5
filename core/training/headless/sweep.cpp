#include "core/training/headless/sweep.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "core/base/atomic_file.h"
#include "core/base/enum_names.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/interrupt.h"
#include "core/base/memory.h"
#include "core/models/memory_estimate.h"
#include "core/runs/directory/run_dir.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/directory/run_lock.h"
#include "core/runs/directory/run_writer.h"
#include "core/training/headless/headless.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

VaryAxis parse_vary(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--vary " + spec + ": expected key=v1,v2,... (e.g. model.position=rope,alibi)");
  VaryAxis axis;
  axis.key = spec.substr(0, eq);
  const std::string rest = spec.substr(eq + 1);
  // Split on commas outside brackets/quotes, so a JSON list value ["rope","alibi"] stays whole.
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  bool quoted = false;
  for (char c : rest) {
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '[' || c == '{')) ++depth;
    if (!quoted && (c == ']' || c == '}')) --depth;
    if (c == ',' && depth == 0 && !quoted) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  for (const auto& p : parts) {
    if (p.empty()) throw Error("--vary " + spec + ": empty value in the list for " + axis.key);
    json v = json::parse(p, nullptr, /*allow_exceptions=*/false);
    axis.values.push_back(v.is_discarded() ? json(p) : v);
  }
  return axis;
}

std::string sanitize_run_name(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                      c == '=' || c == ',' || c == '+' || c == '-';
    out += keep ? c : '_';
  }
  return out.empty() ? "_" : out;
}

std::string assignment_text(const std::string& key, const json& value) {
  if (value.is_string()) return key + "=" + value.get<std::string>();
  if (value.is_number_float()) {
    std::ostringstream s;
    s << value.get<double>();  // 0.001, not 0.0010000000000000000208
    return key + "=" + s.str();
  }
  return key + "=" + value.dump();
}

SweepPlan plan_sweep(const std::vector<SweepArm>& arms, const std::vector<VaryAxis>& axes,
                     int seeds) {
  if (arms.empty()) throw Error("sweep: no base config");
  if (seeds < 1 || seeds > 1000)
    throw Error("--seeds " + std::to_string(seeds) + ": must be between 1 and 1000");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].values.empty()) throw Error("--vary " + axes[i].key + ": no values");
    for (size_t k = 0; k < i; ++k)
      if (axes[k].key == axes[i].key)
        throw Error("--vary " + axes[i].key + " is given twice; list every value in one --vary");
  }
  SweepPlan plan;
  plan.arms = arms;
  plan.axes = axes;
  plan.seeds = seeds;
  // Mixed-radix counter over the axes, first axis slowest.
  size_t grid = 1;
  for (const auto& a : axes) grid *= a.values.size();
  for (const auto& arm : arms) {
    if (!arm.config.is_object()) throw Error("sweep: arm " + arm.name + " is not a JSON object");
    for (size_t g = 0; g < grid; ++g) {
      json assignment = json::object();
      json cfg = arm.config;
      std::string where = arm.name.empty() ? "" : arm.name;
      size_t rem = g;
      std::vector<size_t> idx(axes.size());
      for (size_t a = axes.size(); a-- > 0;) {
        idx[a] = rem % axes[a].values.size();
        rem /= axes[a].values.size();
      }
      std::string group = arm.name;
      for (size_t a = 0; a < axes.size(); ++a) {
        const auto& v = axes[a].values[idx[a]];
        assignment[axes[a].key] = v;
        const std::string text = assignment_text(axes[a].key, v);
        try {
          set_dotted(cfg, axes[a].key, v);
        } catch (const Error& e) {
          throw Error("--vary " + text + ": " + e.what());
        }
        group += (group.empty() ? "" : ",") + text;
        where += (where.empty() ? "--vary " : " --vary ") + text;
      }
      if (group.empty()) group = "base";
      if (where.empty()) where = "base config";
      const uint64_t base_seed =
          cfg.contains("seed") && cfg["seed"].is_number_integer() && cfg["seed"].get<int64_t>() >= 0
              ? cfg["seed"].get<uint64_t>()
              : ExperimentConfig{}.seed;
      for (int s = 0; s < seeds; ++s) {
        SweepCell cell;
        cell.index = static_cast<int>(plan.cells.size());
        cell.arm = arm.name;
        cell.group = sanitize_run_name(group);
        cell.seed = base_seed + static_cast<uint64_t>(s);
        cell.assignment = assignment;
        json c = cfg;
        c["seed"] = cell.seed;
        cell.config = parse_config(c, where);  // names the --vary assignment on bad keys/values
        cell.dir = cell.group + "/seed-" + std::to_string(cell.seed);
        plan.cells.push_back(std::move(cell));
      }
      const std::string gname = sanitize_run_name(group);
      for (const auto& existing : plan.groups)
        if (existing == gname)
          throw Error("sweep: two cells are both named " + gname +
                      " (arm names and values must differ after sanitising)");
      plan.groups.push_back(gname);
    }
  }
  return plan;
}

json sweep_manifest(const SweepPlan& plan) {
  json arms = json::array(), axes = json::array(), cells = json::array();
  for (const auto& a : plan.arms) arms.push_back({{"name", a.name}, {"config", a.config}});
  for (const auto& a : plan.axes) axes.push_back({{"key", a.key}, {"values", a.values}});
  for (const auto& c : plan.cells)
    cells.push_back({{"index", c.index},
                     {"arm", c.arm},
                     {"group", c.group},
                     {"dir", c.dir},
                     {"seed", c.seed},
                     {"assignment", c.assignment},
                     {"config_hash", config_hash(c.config)}});
  return {{"format", "attnlab-sweep"}, {"version", 1},  {"arms", arms}, {"axes", axes},
          {"seeds", plan.seeds},       {"cells", cells}};
}

CellState cell_state(const std::string& out_dir, const SweepCell& cell) {
  const fs::path d = fs::path(out_dir) / cell.dir;
  std::error_code ec;
  // A damaged or interrupted summary must not count as done forever.
  if (summary_finished(d.string(), cell.config.train.steps)) return CellState::Done;
  if (fs::exists(d / "checkpoint" / "state.json", ec)) return CellState::Partial;
  return CellState::Pending;
}

constexpr EnumName<CellState> kCellStateNames[] = {
    {CellState::Done, "done"}, {CellState::Partial, "partial"}, {CellState::Pending, "pending"}};

const char* to_string(CellState s) {
  return enum_name(s, kCellStateNames);
}

void parse_shard(const std::string& spec, int& index, int& count) {
  const auto slash = spec.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    size_t u1 = 0, u2 = 0;
    index = std::stoi(spec.substr(0, slash), &u1);
    count = std::stoi(spec.substr(slash + 1), &u2);
    if (u1 != slash || u2 != spec.size() - slash - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw Error("--shard " + spec + ": expected i/n, e.g. 0/4");
  }
  if (count < 1 || index < 0 || index >= count)
    throw Error("--shard " + spec + ": need 0 <= i < n");
}

namespace {

// A cell's child stopped by a signal: this process's own signal when it has one (the child may
// report the one forwarded to it, app/cli's run_cell_in_child), else the child's.
Interrupted cell_interrupted(int exit_code) {
  const int own = stop_signal();
  return Interrupted{own ? own : exit_code - 128};
}

}  // namespace

void open_sweep_dir(const SweepPlan& plan, const std::string& out_dir) {
  const fs::path out = out_dir;
  const json manifest = sweep_manifest(plan);
  const fs::path manifest_path = out / "sweep.json";
  std::error_code ec;
  if (fs::exists(manifest_path, ec)) {
    const json old = read_json_file(manifest_path.string());  // names the file when invalid
    const json& old_cells = old.value("cells", json());
    if (old_cells == manifest["cells"]) return;
    // The same sweep with more seeds (a verdict that more seeds would resolve): every cell it
    // had is still planned, with the same config, so its runs stay valid; only indices move.
    auto same_cell = [](json a, json b) {
      a.erase("index");
      b.erase("index");
      return a == b;
    };
    bool grown = old_cells.is_array() && old_cells.size() < manifest["cells"].size();
    for (size_t i = 0; grown && i < old_cells.size(); ++i) {
      bool found = false;
      for (const auto& c : manifest["cells"]) found = found || same_cell(old_cells[i], c);
      grown = found;
    }
    if (!grown)
      throw Error(manifest_path.string() +
                  " describes a different sweep (other configs, values or seeds); give another "
                  "--out or remove that directory");
    write_file_atomic(manifest_path.string(), manifest.dump(2) + "\n");
  } else {
    fs::create_directories(out, ec);
    if (ec) throw Error("--out: cannot create " + out.string() + ": " + ec.message());
    write_file_atomic(fs::path(manifest_path).string(), manifest.dump(2) + "\n");
  }
}

namespace {

// What the cells of one run_sweep share: its options, the outcome and the log lines, guarded by
// `mu` when cells run in parallel.
struct SweepContext {
  SweepContext(const SweepRunOptions& options, fs::path out_dir, int cells)
      : o(options), out(std::move(out_dir)), n(cells) {}
  const SweepRunOptions& o;
  fs::path out;
  int n = 0;  // cells in the plan, for the "[i/n]" tags
  SweepOutcome outcome;
  std::mutex mu;

  void log(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (o.log) o.log(s);
  }
};

bool stopped_by_signal(int code) {
  return code == 129 || code == 130 || code == 143;
}

// True, said and counted as skipped (and as diverged when it did), for a cell done already.
bool skip_done_cell(SweepContext& c, const SweepCell& cell, const std::string& tag,
                    CellState state) {
  if (state != CellState::Done) return false;
  // A cell that diverged stays diverged: the table and the exit code say so on every re-run.
  bool diverged = false;
  try {
    diverged =
        read_json_file((c.out / cell.dir / "summary.json").string()).value("diverged", false);
  } catch (const std::exception&) {
  }
  c.log(tag +
        (diverged ? ": diverged (its summary.json says so), skipped" : ": done already, skipped"));
  std::lock_guard<std::mutex> lock(c.mu);
  ++c.outcome.skipped;
  if (diverged) ++c.outcome.diverged;
  return true;
}

// Trains one cell (through the runner when there is one); its exit code: 0, 3 diverged, else
// failed (129, 130, 143: stopped by a signal).
int train_cell(SweepContext& c, const SweepCell& cell, const HeadlessOptions& h,
               const std::string& tag) {
  if (c.o.runner) return c.o.runner(cell, h);
  try {
    return train_headless(cell.config, h).diverged ? 3 : 0;
  } catch (const Error& e) {
    c.log(tag + ": " + e.what());
    return 1;
  }
}

std::string cell_tag(const SweepContext& c, const SweepCell& cell) {
  return "[" + std::to_string(cell.index + 1) + "/" + std::to_string(c.n) + "] " + cell.dir;
}

// The cell's lock, taken for as long as the cell is this process's; none (said, and counted as
// skipped) when another process (a second sweep on this directory, a shard) trains it already
// or it is done. `state` is then its state.
std::unique_ptr<RunDirLock> claim_cell(SweepContext& c, const SweepCell& cell,
                                       const std::string& tag, CellState& state) {
  std::unique_ptr<RunDirLock> cell_lock;
  try {
    cell_lock = std::make_unique<RunDirLock>((c.out / cell.dir).string(),
                                             "attnlab sweep cell " + cell.dir, false);
  } catch (const Error& e) {
    c.log(tag + ": " + e.what() + "; skipped");
    std::lock_guard<std::mutex> lock(c.mu);
    ++c.outcome.skipped;
    return nullptr;
  }
  state = cell_state(c.o.out_dir, cell);
  if (skip_done_cell(c, cell, tag, state)) return nullptr;
  return cell_lock;
}

HeadlessOptions cell_options(SweepContext& c, const SweepCell& cell, const std::string& tag) {
  HeadlessOptions h;
  h.out_dir = (c.out / cell.dir).string();
  h.lock = false;  // the sweep holds it for the whole cell
  h.threads = c.o.threads;
  h.checkpoint_every = c.o.checkpoint_every;
  if (c.o.log) h.log = [&c, tag](const std::string& line) { c.log(tag + ": " + line); };
  return h;
}

// A cell about to start afresh: the metrics of an interrupted attempt must not mix with the new
// ones (the lock file stays).
void start_afresh(SweepContext& c, const SweepCell& cell, HeadlessOptions& h,
                  const std::string& tag) {
  h.resume_dir.clear();
  clear_run_files(h.out_dir);
  c.log(tag + ": training");
}

// After a cell trained (afresh, or resumed when `resumed`): counted; a stop throws Interrupted
// (the cell keeps its checkpoint for next time), a failed fresh run attn::Error.
void count_cell(SweepContext& c, const SweepCell& cell, int code, bool resumed) {
  if (stopped_by_signal(code)) throw cell_interrupted(code);
  if (!resumed && code != 0 && code != 3)
    throw Error("sweep cell " + std::to_string(cell.index) + " (" + cell.dir + ") failed (exit " +
                std::to_string(code) + ")");
  std::lock_guard<std::mutex> lock(c.mu);
  ++(resumed ? c.outcome.resumed : c.outcome.ran);
  if (code == 3) ++c.outcome.diverged;
}

void run_sweep_cell(SweepContext& c, const SweepCell& cell) {
  if (const int sig = stop_signal()) throw Interrupted{sig};  // no new cell after a stop
  const std::string tag = cell_tag(c, cell);
  CellState state = CellState::Pending;
  const auto cell_lock = claim_cell(c, cell, tag, state);
  if (!cell_lock) return;
  HeadlessOptions h = cell_options(c, cell, tag);
  int code = -1;
  if (state == CellState::Partial) {
    h.resume_dir = h.out_dir;
    c.log(tag + ": resuming from its checkpoint");
    code = train_cell(c, cell, h, tag);
    // A child stopped by a signal saved its checkpoint: stop, keep the cell for next time.
    if (stopped_by_signal(code)) throw cell_interrupted(code);
    // A checkpoint that does not load: train the cell again from the start.
    if (code != 0 && code != 3) c.log(tag + ": cannot resume; starting again");
  }
  const bool resumed = code == 0 || code == 3;
  if (!resumed) {
    start_afresh(c, cell, h, tag);
    code = train_cell(c, cell, h, tag);
  }
  count_cell(c, cell, code, resumed);
}

// The cells this process runs: the one --index names, else its shard's.
std::vector<const SweepCell*> selected_cells(const SweepPlan& plan, const SweepRunOptions& o) {
  std::vector<const SweepCell*> selected;
  for (const auto& cell : plan.cells) {
    if (o.index && cell.index != *o.index) continue;
    if (!o.index && cell.index % o.shard_count != o.shard_index) continue;
    selected.push_back(&cell);
  }
  return selected;
}

// Runs units (cells, or packs of cells) 0..count-1 on `jobs` threads; after a failure or a stop no
// worker starts another, and the stop (Interrupted), else the first failure (attn::Error), is
// thrown once all end.
void run_in_parallel(SweepContext& c, size_t count, int jobs,
                     const std::function<void(size_t)>& run_one) {
  std::atomic<size_t> next{0};
  std::string failure;
  int interrupted = 0;
  std::vector<std::thread> workers;
  for (int j = 0; j < jobs; ++j)
    workers.emplace_back([&] {
      for (size_t i; (i = next++) < count;) {
        {
          std::lock_guard<std::mutex> lock(c.mu);
          if (!failure.empty() || interrupted) return;
        }
        try {
          run_one(i);
        } catch (const Interrupted& stop) {
          std::lock_guard<std::mutex> lock(c.mu);
          interrupted = stop.signal;
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(c.mu);
          if (failure.empty()) failure = e.what();
        }
      }
    });
  for (auto& w : workers) w.join();
  if (interrupted) throw Interrupted{interrupted};
  if (!failure.empty()) throw Error(failure);
}

// --- packs (core/training/headless/pack.h) ---------------------------------------------------

// The pack launcher without a runner: train_pack on this process's threads.
class ThreadPack final : public PackLauncher {
 public:
  void add(const SweepCell& cell, const HeadlessOptions& h) override {
    runs_.push_back({cell.config, h, ""});
  }
  PackResult run() override { return train_pack(runs_); }

 private:
  std::vector<PackRun> runs_;
};

}  // namespace

std::unique_ptr<PackLauncher> PackBook::make() const {
  if (launcher) return launcher();
  return std::make_unique<ThreadPack>();
}

namespace {

// A cell of a pack, of the sweep `c`: held, with the options it trains under.
struct PackedCell {
  SweepContext* c = nullptr;
  const SweepCell* cell = nullptr;
  std::string tag;
  std::unique_ptr<RunDirLock> lock;
  HeadlessOptions h;
  bool resuming = false;
};

// A pack that trained: its line in the log and its entry in the pack file.
void record_pack(PackBook& book, const std::vector<PackedCell*>& cells, const PackResult& r) {
  json dirs = json::array(), codes = json::array(), sps = json::array();
  double sum = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    dirs.push_back((fs::relative(cells[i]->h.out_dir, fs::path(book.path).parent_path())).string());
    codes.push_back(r.runs[i].exit_code);
    sps.push_back(r.runs[i].steps_per_second);
    sum += r.runs[i].steps_per_second;
  }
  std::ostringstream line;
  line << "pack of " << cells.size() << " runs in one process: " << std::fixed
       << std::setprecision(1) << sum << " steps/s together over " << std::setprecision(2)
       << r.wall_seconds << " s (" << fs::path(book.path).filename().string() << ")";
  cells.front()->c->log(line.str());
  std::lock_guard<std::mutex> lock(book.mu);
  book.packs.push_back({{"cells", dirs},
                        {"exit_codes", codes},
                        {"steps_per_second", sps},
                        {"steps_per_second_sum", sum},
                        {"wall_seconds", r.wall_seconds}});
  write_file_atomic(book.path, json({{"pack", book.pack}, {"packs", book.packs}}).dump(2) + "\n");
}

// Claims the cells of one pack and adds them to `launcher` one by one (a cell that cannot be
// added stops there: the cells after it stay untouched).
std::vector<PackedCell> claim_pack(
    const std::vector<std::pair<SweepContext*, const SweepCell*>>& cells, PackLauncher& launcher) {
  std::vector<PackedCell> packed;
  for (const auto& [c, cell] : cells) {
    PackedCell p;
    p.c = c;
    p.cell = cell;
    p.tag = cell_tag(*c, *cell);
    CellState state = CellState::Pending;
    p.lock = claim_cell(*c, *cell, p.tag, state);
    if (!p.lock) continue;
    p.h = cell_options(*c, *cell, p.tag);
    p.resuming = state == CellState::Partial;
    if (p.resuming) {
      p.h.resume_dir = p.h.out_dir;
      c->log(p.tag + ": resuming from its checkpoint");
    } else {
      start_afresh(*c, *cell, p.h, p.tag);
    }
    launcher.add(*cell, p.h);
    packed.push_back(std::move(p));
  }
  return packed;
}

// Runs `cells` as one pack and records it; their exit codes, in order.
std::vector<int> launch(PackBook& book, std::unique_ptr<PackLauncher> launcher,
                        const std::vector<PackedCell*>& cells) {
  const PackResult r = launcher->run();
  if (r.runs.size() != cells.size()) throw Error("a pack returned the wrong number of runs");
  record_pack(book, cells, r);
  std::vector<int> codes;
  for (const auto& run : r.runs) codes.push_back(run.exit_code);
  return codes;
}

bool finished_code(int code) {
  return code == 0 || code == 3;
}

// Resumes whose checkpoint did not load train again from the start, together.
void retry_failed_resumes(PackBook& book, std::vector<PackedCell>& packed,
                          std::vector<int>& codes) {
  std::vector<PackedCell*> again;
  std::vector<size_t> at;
  for (size_t i = 0; i < packed.size(); ++i)
    if (packed[i].resuming && !finished_code(codes[i]) && !stopped_by_signal(codes[i])) {
      packed[i].c->log(packed[i].tag + ": cannot resume; starting again");
      packed[i].resuming = false;
      again.push_back(&packed[i]);
      at.push_back(i);
    }
  if (again.empty() || stop_signal()) return;
  auto retry = book.make();
  for (PackedCell* p : again) {
    start_afresh(*p->c, *p->cell, p->h, p->tag);
    retry->add(*p->cell, p->h);
  }
  const std::vector<int> second = launch(book, std::move(retry), again);
  for (size_t k = 0; k < again.size(); ++k) codes[at[k]] = second[k];
}

// One pack: its cells claimed and trained together, failed resumes again from the start; then
// every cell is counted, and the first stop, else the first failure, is thrown.
void run_sweep_pack(PackBook& book,
                    const std::vector<std::pair<SweepContext*, const SweepCell*>>& cells) {
  if (const int sig = stop_signal()) throw Interrupted{sig};  // no new pack after a stop
  auto launcher = book.make();
  std::vector<PackedCell> packed = claim_pack(cells, *launcher);
  if (packed.empty()) return;
  std::vector<PackedCell*> all;
  for (auto& p : packed) all.push_back(&p);
  std::vector<int> codes = launch(book, std::move(launcher), all);
  retry_failed_resumes(book, packed, codes);
  std::optional<Interrupted> stop;
  std::string failure;
  for (size_t i = 0; i < packed.size(); ++i) {
    try {
      count_cell(*packed[i].c, *packed[i].cell, codes[i],
                 packed[i].resuming && finished_code(codes[i]));
    } catch (const Interrupted& s) {
      if (!stop) stop = s;
    } catch (const std::exception& e) {
      if (failure.empty()) failure = e.what();
    }
  }
  if (stop) throw *stop;
  if (const int sig = stop_signal()) throw Interrupted{sig};
  if (!failure.empty()) throw Error(failure);
}

// A pack's runs share one process: the sum of their estimates must fit where one run's would.
void check_pack_memory(const std::vector<const SweepCell*>& selected, int pack) {
  uint64_t most = 0;
  std::string sizes;
  for (size_t first = 0; first < selected.size(); first += pack) {
    uint64_t sum = 0;
    for (size_t i = first; i < std::min(selected.size(), first + pack); ++i) {
      const auto& config = selected[i]->config;
      const MemoryEstimate e = estimate_memory(config, task_shape(config.task), MemoryUse::train);
      sum += e.bytes;
      if (sizes.empty()) sizes = e.sizes;
    }
    most = std::max(most, sum);
  }
  const size_t runs = std::min(selected.size(), static_cast<size_t>(pack));
  require_memory(most,
                 "--pack " + std::to_string(pack) + ": its " + std::to_string(runs) +
                     " runs train in one process, together (one: " + sizes + ")",
                 "lower --pack (0 to 4096; 1 trains one run at a time)");
}

}  // namespace

SweepOutcome run_sweep(const SweepPlan& plan, const SweepRunOptions& o) {
  if (o.out_dir.empty()) throw Error("--out: a sweep needs an output directory");
  if (o.index && (*o.index < 0 || *o.index >= static_cast<int>(plan.cells.size())))
    throw Error("--index " + std::to_string(*o.index) + ": the sweep has cells 0.." +
                std::to_string(plan.cells.size() - 1));
  const std::vector<const SweepCell*> selected = selected_cells(plan, o);
  const bool packs = o.pack > 1 || (o.pack == 1 && o.pack_launcher);
  if (packs) check_pack_memory(selected, o.pack);  // before anything is written
  open_sweep_dir(plan, o.out_dir);
  SweepContext c{o, fs::path(o.out_dir), static_cast<int>(plan.cells.size())};
  if (packs) {
    PackBook book(o);
    std::vector<std::vector<std::pair<SweepContext*, const SweepCell*>>> packs;
    for (size_t i = 0; i < selected.size(); ++i) {
      if (i % o.pack == 0) packs.emplace_back();
      packs.back().push_back({&c, selected[i]});
    }
    // Packs run on threads with one torch thread per run: they may share this process.
    const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(packs.size())));
    run_in_parallel(c, packs.size(), jobs, [&](size_t i) { run_sweep_pack(book, packs[i]); });
    return c.outcome;
  }
  // In-process training sets torch's global thread count: only child processes run in parallel.
  const int jobs =
      o.runner ? std::max(1, std::min<int>(o.jobs, static_cast<int>(selected.size()))) : 1;
  if (jobs == 1)
    for (const SweepCell* cell : selected) run_sweep_cell(c, *cell);
  else
    run_in_parallel(c, selected.size(), jobs, [&](size_t i) { run_sweep_cell(c, *selected[i]); });
  return c.outcome;
}

PackBook::PackBook(const SweepRunOptions& o) : pack(o.pack), launcher(o.pack_launcher) {
  const fs::path out = o.out_dir;
  path = (o.shard_count == 1 ? out / "pack.json"
                             : out / ("pack-" + std::to_string(o.shard_index) + "-of-" +
                                      std::to_string(o.shard_count) + ".json"))
             .string();
}

SweepOutcome run_sweep_packed(const std::vector<PackedSweepCell>& cells, const SweepRunOptions& o,
                              PackBook& book) {
  // One context per cell's sweep (a pack may hold cells of several), each with its own log.
  std::vector<std::unique_ptr<SweepRunOptions>> options;
  std::vector<std::unique_ptr<SweepContext>> contexts;
  std::vector<std::pair<SweepContext*, const SweepCell*>> pack;
  for (const auto& cell : cells) {
    if (cell.index < 0 || cell.index >= static_cast<int>(cell.plan->cells.size()))
      throw Error("a packed cell's index is outside its sweep");
    options.push_back(std::make_unique<SweepRunOptions>(o));
    options.back()->out_dir = cell.out_dir;
    options.back()->log = cell.log;
    contexts.push_back(std::make_unique<SweepContext>(*options.back(), fs::path(cell.out_dir),
                                                      static_cast<int>(cell.plan->cells.size())));
    pack.push_back({contexts.back().get(), &cell.plan->cells[cell.index]});
  }
  std::vector<const SweepCell*> members;
  for (const auto& [c, cell] : pack) members.push_back(cell);
  check_pack_memory(members, static_cast<int>(members.size()));  // before the pack starts
  SweepOutcome total;
  auto sum = [&] {
    for (const auto& c : contexts) {
      total.ran += c->outcome.ran;
      total.resumed += c->outcome.resumed;
      total.skipped += c->outcome.skipped;
      total.diverged += c->outcome.diverged;
    }
  };
  try {
    run_sweep_pack(book, pack);
  } catch (...) {
    sum();
    throw;
  }
  sum();
  return total;
}

Stat mean_sd(const std::vector<double>& values) {
  Stat s;
  double sum = 0;
  for (double v : values)
    if (std::isfinite(v)) {
      sum += v;
      ++s.n;
    }
  if (s.n == 0) return s;
  s.mean = sum / s.n;
  if (s.n < 2) return s;
  double sq = 0;
  for (double v : values)
    if (std::isfinite(v)) sq += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(sq / (s.n - 1));
  return s;
}

std::vector<GroupSummary> aggregate_runs(const std::vector<RunDirectory>& runs,
                                         const std::vector<std::string>& group_of) {
  if (group_of.size() != runs.size()) throw Error("aggregate_runs: one group per run");
  std::vector<GroupSummary> out;
  std::vector<std::vector<size_t>> members;
  for (size_t i = 0; i < runs.size(); ++i) {
    size_t g = 0;
    while (g < out.size() && out[g].group != group_of[i]) ++g;
    if (g == out.size()) {
      out.push_back({});
      out.back().group = group_of[i];
      out.back().mechanism = runs[i].mechanism();
      out.back().task = runs[i].config.task.name;
      members.emplace_back();
    }
    members[g].push_back(i);
  }
  for (size_t g = 0; g < out.size(); ++g) {
    std::vector<double> loss, acc, sps, rss, params, attn_params;
    auto num = [](const json& s, const char* k) {
      return s.contains(k) && s[k].is_number() ? s[k].get<double>() : NAN;
    };
    for (size_t i : members[g]) {
      ++out[g].runs;
      if (!runs[i].finished) continue;
      ++out[g].finished;
      const auto& s = runs[i].summary;
      params.push_back(num(s, "parameters"));
      attn_params.push_back(num(s, "attention_parameters"));
      if (s.contains("diverged") &&
          s["diverged"] == true) {  // its last losses are no result to average
        ++out[g].diverged;
        continue;
      }
      loss.push_back(num(s, "eval_loss"));
      acc.push_back(num(s, "eval_accuracy"));
      sps.push_back(num(s, "steps_per_second"));
      rss.push_back(num(s, "peak_rss_mib"));
    }
    out[g].eval_loss = mean_sd(loss);
    out[g].eval_accuracy = mean_sd(acc);
    out[g].steps_per_second = mean_sd(sps);
    out[g].peak_rss_mib = mean_sd(rss);
    out[g].parameters = mean_sd(params);
    out[g].attention_parameters = mean_sd(attn_params);
  }
  return out;
}

std::vector<GroupSummary> aggregate_sweep(const SweepPlan& plan, const std::string& out_dir,
                                          std::vector<RunDirectory>* runs_out) {
  std::vector<RunDirectory> runs;
  std::vector<std::string> groups;
  for (const auto& cell : plan.cells) {
    const fs::path d = fs::path(out_dir) / cell.dir;
    std::error_code ec;
    if (!fs::exists(d / "config.json", ec) || !fs::exists(d / "metrics.csv", ec)) continue;
    runs.push_back(read_run_directory(d.string()));
    groups.push_back(cell.group);
  }
  auto found = aggregate_runs(runs, groups);
  std::vector<GroupSummary> out;
  for (const auto& g : plan.groups) {
    GroupSummary s;
    s.group = g;
    for (const auto& f : found)
      if (f.group == g) s = f;
    if (s.mechanism.empty())
      for (const auto& c : plan.cells)
        if (c.group == g) {
          s.task = c.config.task.name;
          s.mechanism = run_mechanism(c.config);
          break;
        }
    out.push_back(s);
  }
  if (runs_out) *runs_out = std::move(runs);
  return out;
}

std::string format_stat(const Stat& s, int precision) {
  if (s.n == 0) return "-";
  std::ostringstream o;
  o << std::fixed << std::setprecision(precision) << s.mean;
  if (s.n >= 2) o << " ± " << std::setprecision(precision) << s.sd;
  return o.str();
}

json stat_json(const Stat& s) {
  if (s.n == 0) return {{"n", 0}};
  return {{"mean", s.mean}, {"sd", s.sd}, {"n", s.n}};
}

}  // namespace attn
