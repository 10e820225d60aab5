#include "app/cli/repro/repro_plan.h"

#include <filesystem>
#include <map>

#include "core/base/error.h"
#include "core/training/interventions/length_eval.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void apply_overrides(json& config, const json* overrides) {
  if (overrides && overrides->is_object())
    for (const auto& [key, value] : overrides->items()) set_dotted(config, key, value);
}

const json* member(const json& j, const char* key) {
  return j.is_object() && j.contains(key) ? &j[key] : nullptr;
}

std::vector<double> read_grid(const json& j, const std::string& where) {
  if (!j.is_array() || j.empty())
    throw Error(where + " must be a non-empty list of multipliers of train.lr");
  std::vector<double> out;
  for (const auto& g : j) {
    if (!g.is_number() || !(g.get<double>() > 0 && g.get<double>() < 1000))
      throw Error(where + ": " + g.dump() + " must be a number in (0, 1000)");
    out.push_back(g.get<double>());
  }
  return out;
}

int read_seeds(const json& j, const std::string& where) {
  if (!j.is_number_integer() || j.get<int>() < 1 || j.get<int>() > 100)
    throw Error(where + " must be an integer from 1 to 100, got " + j.dump());
  return j.get<int>();
}

}  // namespace

ReproPlan load_repro_plan(const std::string& configs_dir, const std::string& paper, bool quick,
                          int seeds_override) {
  ReproPlan plan;
  plan.paper = paper;
  plan.dir = (fs::path(configs_dir) / paper).string();
  const std::string file = (fs::path(plan.dir) / "repro.json").string();
  plan.manifest = read_json_file(file);
  const json& m = plan.manifest;
  plan.title = m.value("title", paper);
  const json* quick_block = quick ? member(m, "quick") : nullptr;
  std::vector<double> grid = {0.5, 1.0, 2.0};
  if (const json* g = member(m, "lr_grid")) grid = read_grid(*g, file + ": lr_grid");
  if (quick_block && member(*quick_block, "lr_grid"))
    grid = read_grid((*quick_block)["lr_grid"], file + ": quick.lr_grid");
  int seeds = m.contains("seeds") ? read_seeds(m["seeds"], file + ": seeds") : 3;
  const int extend = read_lr_extend(m, quick_block, file, 2);
  if (quick_block && member(*quick_block, "seeds"))
    seeds = read_seeds((*quick_block)["seeds"], file + ": quick.seeds");
  // quick's own keys that are not config overrides.
  json quick_set = quick_block ? *quick_block : json::object();
  quick_set.erase("lr_grid");
  quick_set.erase("seeds");
  quick_set.erase("lr_extend");

  std::map<std::string, std::pair<std::string, int64_t>> steps_of_task;  // task -> (arm, steps)
  for (const auto& a : m.at("arms")) {
    TunedArm arm;
    arm.name = a.at("name").get<std::string>();
    const std::string where = file + ": arm \"" + arm.name + "\"";
    for (const auto& other : plan.arms)
      if (other.name == arm.name) throw Error(where + " appears twice");
    arm.dir = sanitize_run_name(arm.name);
    arm.config =
        read_config_json((fs::path(plan.dir) / a.at("config").get<std::string>()).string());
    // The arm's own keys (a window, a position), then --quick's (the manifest's, the arm's).
    apply_overrides(arm.config, member(a, "set"));
    if (quick) {
      apply_overrides(arm.config, &quick_set);
      apply_overrides(arm.config, member(a, "quick"));
    }
    arm.lr_grid =
        a.contains("lr_grid") && !quick ? read_grid(a["lr_grid"], where + ".lr_grid") : grid;
    arm.seeds = a.contains("seeds") && !quick ? read_seeds(a["seeds"], where + ".seeds") : seeds;
    if (seeds_override > 0) arm.seeds = seeds_override;
    arm.extend = extend;
    const ExperimentConfig parsed = parse_config(arm.config, where);
    if (arm.lr_grid.size() > 1)
      if (const std::string why = validation_refusal(parsed.task); !why.empty())
        throw Error(where + " has a learning-rate grid but " + why);
    // Equal step budgets per task: arms trained for different lengths are no comparison.
    const auto [it, fresh] =
        steps_of_task.emplace(parsed.task.name, std::make_pair(arm.name, parsed.train.steps));
    if (!fresh && it->second.second != parsed.train.steps)
      throw Error(file + ": arm \"" + arm.name + "\" trains " + std::to_string(parsed.train.steps) +
                  " steps (train.steps) but arm \"" + it->second.first + "\" trains " +
                  std::to_string(it->second.second) + " on the same task (" + parsed.task.name +
                  "): every arm of a task must train the same number of steps");
    plan.notes.push_back(a.value("note", ""));
    plan.arms.push_back(std::move(arm));
  }
  if (plan.arms.empty()) throw Error(file + ": no arms");
  // The rate is chosen on the metric the claims judge: an arm a claim on eval_loss names (as
  // "arm" or "than") is chosen on its validation loss, every other on its accuracy.
  for (const auto& c : m.value("claims", json::array()))
    if (c.value("metric", "") == "eval_loss")
      for (const char* key : {"arm", "than"})
        for (TunedArm& arm : plan.arms)
          if (c.contains(key) && c[key].is_string() && c[key].get<std::string>() == arm.name)
            arm.criterion = LrCriterion::loss;
  return plan;
}

std::vector<const RunDirectory*> ReproRuns::of(const std::string& arm) const {
  std::vector<const RunDirectory*> out;
  for (size_t i = 0; i < runs.size(); ++i)
    if (group_of[i] == arm) out.push_back(&runs[i]);
  return out;
}

ReproRuns collect_repro_runs(const ReproPlan& plan, const std::string& runs_dir) {
  ReproRuns r;
  if (const json* size = member(plan.manifest, "paper_size")) {
    for (size_t k = 0; k < plan.arms.size(); ++k) {
      json config = plan.arms[k].config;
      apply_overrides(config, member(*size, "set"));
      apply_overrides(config, member(plan.manifest["arms"][k], "paper_size_set"));
      const ExperimentConfig c = parse_config(config, plan.dir + "/repro.json: paper_size");
      r.paper_size[plan.arms[k].name] = model_parameter_count(
          c.model, size->value("vocab", 0), size->value("length", 0), size->value("patch_dim", 0));
    }
  }
  for (const auto& arm : plan.arms) {
    r.configs[arm.name] = to_json_every_key(parse_config(arm.config, plan.dir + "/repro.json"));
    r.tuned.push_back(tuned_runs(arm, runs_dir));
    for (const auto& rel : r.tuned.back().runs) {
      r.runs.push_back(read_run_directory((fs::path(runs_dir) / rel).string()));
      r.group_of.push_back(arm.name);
    }
  }
  return r;
}

}  // namespace attn
