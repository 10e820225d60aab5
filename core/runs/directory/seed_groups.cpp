#include "core/runs/directory/seed_groups.h"

#include <cmath>
#include <map>

#include "core/analysis/statistics.h"

namespace attn {

std::string seed_group_key(const ExperimentConfig& config) {
  ExperimentConfig c = config;
  c.seed = 0;
  c.name.clear();
  c.device = "auto";
  c.threads = 0;
  return config_hash(c);
}

std::vector<SeedGroup> group_by_seed(const std::vector<const RunDirectory*>& runs) {
  std::vector<SeedGroup> groups;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string key = seed_group_key(runs[i]->config);
    size_t g = 0;
    while (g < groups.size() && groups[g].key != key) ++g;
    if (g == groups.size()) groups.push_back({key, {}});
    groups[g].members.push_back(i);
  }
  return groups;
}

MeanCurve mean_curve(const std::vector<const RunDirectory*>& runs, const SeedGroup& group,
                     Series RunDirectory::*series, BandKind band) {
  MeanCurve out;
  out.members = static_cast<int>(group.members.size());
  // step -> the members' values there; kept only where every member has one.
  std::map<int64_t, std::vector<double>> at;
  for (size_t m : group.members) {
    const Series& s = runs[m]->*series;
    for (size_t i = 0; i < s.steps.size(); ++i) at[s.steps[i]].push_back(s.values[i]);
  }
  for (const auto& [step, values] : at) {
    if (static_cast<int>(values.size()) != out.members) continue;
    const MeanInterval m = mean_interval(values);
    if (m.n != out.members) continue;  // a non-finite value (a diverged run) at this step
    out.steps.push_back(static_cast<double>(step));
    out.mean.push_back(m.mean);
    if (band == BandKind::sd) {
      out.lo.push_back(m.n >= 2 ? m.mean - m.sd : NAN);
      out.hi.push_back(m.n >= 2 ? m.mean + m.sd : NAN);
    } else {
      out.lo.push_back(m.lo);
      out.hi.push_back(m.hi);
    }
  }
  return out;
}

}  // namespace attn
