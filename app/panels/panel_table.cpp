// The panel table (gui/panel.h): one row per panel, in View-menu order. A row says the panel's
// name, title, the tile it opens in, when a fresh layout shows it, and how to make it. The
// mechanism panels register their own rows (app/panels/mechanism_panels.h): this file names no
// mechanism.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "app/gui/panel.h"
#include "app/panels/attention/attention_panel.h"
#include "app/panels/attention/heads_panel.h"
#include "app/panels/attention/image_attention_panel.h"
#include "app/panels/attention/interventions_panel.h"
#include "app/panels/geometry/geometry_panel.h"
#include "app/panels/mechanism_panels.h"
#include "app/panels/runs/runs_panel.h"
#include "app/panels/training/compare_panel.h"
#include "app/panels/training/loss_panel.h"
#include "app/panels/training/run_panel.h"

namespace attn::gui {
namespace {

std::vector<MechanismPanelRow>& registered_rows() {
  static std::vector<MechanismPanelRow> rows;  // filled by static initialisers: a function static
  return rows;
}

// A mechanism panel stands in for the Attention panel at start (an architecture without maps).
bool replaced_attention(const PanelSetup& s) {
  for (const MechanismPanelRow& m : mechanism_panel_rows())
    if (m.replaces_attention && m.row.open_at_start(s)) return true;
  return false;
}
bool image_task(const PanelSetup& s) {
  return s.config.task.name == "fashion-mnist" || !s.options.compare_runs.empty();
}
// A bare `attnlab` (no experiment, no panel asked for) is how a newcomer starts: the Geometry
// explorer needs no model and answers at once.
bool bare_launch(const PanelSetup& s) {
  return s.options.config_path.empty() && s.options.panels.empty();
}

template <class T>
std::unique_ptr<Panel> make(const PanelSetup&) {
  return std::make_unique<T>();
}

std::unique_ptr<Panel> make_image_attention(const PanelSetup& s) {
  auto p = std::make_unique<ImageAttentionPanel>();
  for (const std::string& dir : s.options.compare_runs) p->add_run(dir);
  if (s.options.image_index >= 0) p->request_image(s.options.image_index);
  return p;
}

// Compare: saved runs (--compare-dir) and live ones (--compare-vary key=v1,v2).
std::unique_ptr<Panel> make_compare(const PanelSetup& s) {
  auto p = std::make_unique<ComparePanel>();
  // Compare's runs are recorded under the runs root, so the Runs panel lists them.
  if (!s.options.compare_out.empty())
    p->set_save_root(s.options.compare_out);
  else if (!s.options.runs_dir.empty())
    p->set_save_root((std::filesystem::path(s.options.runs_dir) / "compare").string());
  p->set_seed_bands(s.options.compare_bands);
  for (const std::string& dir : s.options.compare_dirs)
    if (!p->add_saved_run(dir))
      std::fprintf(stderr, "attnlab: --compare-dir: %s\n", p->error().c_str());
  const std::string& vary = s.options.compare_vary;
  if (!vary.empty()) {
    const auto eq = vary.find('=');
    if (!p->start_runs(s.config, vary.substr(0, eq),
                       eq == std::string::npos ? "" : vary.substr(eq + 1)))
      std::fprintf(stderr, "attnlab: --compare-vary: %s\n", p->error().c_str());
  }
  return p;
}

// Runs: the runs root (resolved by run_gui into options.runs_dir) and every --run DIR.
std::unique_ptr<Panel> make_runs(const PanelSetup& s) {
  auto p = std::make_unique<RunsPanel>(s.options.runs_dir);
  p->set_seed_bands(s.options.compare_bands);
  for (const std::string& dir : s.options.follow_runs)
    if (!p->add_dir(dir, /*select=*/true))
      std::fprintf(stderr, "attnlab: --run: %s\n", p->error().c_str());
  return p;
}

// The panels that show no particular mechanism, in View-menu order.
std::vector<PanelRow> generic_rows() {
  return {
      {"run", "Run", TilePlace::Side, [](const PanelSetup&) { return true; }, make<RunPanel>},
      {"loss", "Loss", TilePlace::Top, [](const PanelSetup&) { return true; }, make<LossPanel>},
      {"attention", "Attention", TilePlace::Bottom,
       [](const PanelSetup& s) {
         return !image_task(s) && !bare_launch(s) && !replaced_attention(s);
       },
       make<AttentionPanel>},
      {"geometry", "Geometry", TilePlace::Bottom, bare_launch, make<GeometryPanel>},
      {"image-attention", "Image attention", TilePlace::Bottom, image_task, make_image_attention},
      {"compare", "Compare", TilePlace::Right,
       [](const PanelSetup& s) {
         return !s.options.compare_dirs.empty() || !s.options.compare_vary.empty();
       },
       make_compare},
      {"heads", "Heads", TilePlace::Right, [](const PanelSetup&) { return false; },
       make<HeadsPanel>},
      {"interventions", "Interventions", TilePlace::Right, [](const PanelSetup&) { return false; },
       make<InterventionsPanel>},
      {"runs", "Runs", TilePlace::Right,
       [](const PanelSetup& s) { return !s.options.follow_runs.empty(); }, make_runs},
  };
}

}  // namespace

bool register_mechanism_panel(const MechanismPanelRow& row) {
  for (const MechanismPanelRow& m : registered_rows())
    if (std::string(m.row.name) == row.row.name) {
      std::fprintf(stderr, "attnlab: a second mechanism panel named %s is ignored\n", row.row.name);
      return true;
    }
  registered_rows().push_back(row);
  return true;
}

std::vector<MechanismPanelRow> mechanism_panel_rows() {
  std::vector<MechanismPanelRow> rows = registered_rows();
  std::sort(rows.begin(), rows.end(), [](const MechanismPanelRow& a, const MechanismPanelRow& b) {
    const int by_mechanism = std::string(a.mechanism).compare(b.mechanism);
    return by_mechanism != 0 ? by_mechanism < 0 : std::string(a.row.name) < b.row.name;
  });
  return rows;
}

bool experiment_uses(const PanelSetup& setup, const char* name) {
  const auto& attention = setup.config.model.attention;
  return setup.config.model.architecture == name ||
         std::find(attention.begin(), attention.end(), name) != attention.end();
}

// The generic panels, with every mechanism panel after Attention.
const std::vector<PanelRow>& panel_table() {
  static const std::vector<PanelRow> rows = [] {
    std::vector<PanelRow> out = generic_rows();
    const auto attention = std::find_if(out.begin(), out.end(), [](const PanelRow& r) {
      return std::string(r.name) == "attention";
    });
    std::vector<PanelRow> mechanisms;
    for (const MechanismPanelRow& m : mechanism_panel_rows()) mechanisms.push_back(m.row);
    out.insert(attention + 1, mechanisms.begin(), mechanisms.end());
    return out;
  }();
  return rows;
}

}  // namespace attn::gui
