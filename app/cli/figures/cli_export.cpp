// `attnlab export`: regenerate any figure the window can export from a saved run, by script.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>

#include "app/cli/cli.h"
#include "app/figures/catalog/figures.h"
#include "app/figures/runs/causal_figures.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/data/task_regions.h"
#include "core/runs/directory/run_lock.h"
#include "core/runs/formats/tensorboard_events.h"
#include "core/runs/records/view_records.h"
#include "core/runs/records/view_timeline.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/recording/saved_run.h"
#include "render/plot/export/figure_export.h"
#include "render/plot/map_view.h"

namespace attn {
namespace {
namespace fs = std::filesystem;

constexpr const char* kExportFooter =
    R"(Figures come from a run directory (`attnlab train --out DIR`): its metrics.csv, and its
checkpoint loaded on the CPU and probed (attention maps, C, eigenvalues, g_h(t), ...).
--list names the figures the run has. Beside FILE go FILE's stem .csv (the figure's data,
long format) and .json (version, run id, config hash, seed, step, mechanism, date, font).
Sizes: --width-in 3.5 (single column) or 7 (full width); --height-in 0 keeps the figure's
aspect. PDFs embed the font (DejaVu Sans unless --font or $ATTNLAB_FONT); PNGs record --dpi.
--json prints {"run", "checkpoint", "figures": [{"name", "description"}]} for --list, else
{"files": [...], "font_family", "font_file"}. Bad input writes no file.
--tensorboard writes a TensorBoard event file into the run directory for a run that has none
(runs trained since issue 51 write theirs as they train): metrics.csv's scalars, the head
metrics of views.rec and the config (tags: docs/guide/runs.md).)";

fig::ExportFormat format_for(const ExportArgs& a, const std::string& path) {
  std::string name = a.format;
  if (name.empty()) {
    name = fs::path(path).extension().string();
    if (!name.empty()) name = name.substr(1);
  }
  fig::ExportFormat f;
  if (!fig::parse_export_format(name, f))
    throw Error(a.format.empty() ? "--out " + path +
                                       ": cannot tell the format from the extension; use .pdf, "
                                       ".svg, .png or .csv, or --format"
                                 : "--format " + a.format + " is not one of pdf, svg, png, csv");
  return f;
}

fig::ExportRequest request_for(const ExportArgs& a, fig::ExportFormat format,
                               const std::string& path) {
  fig::ExportRequest r = a.request;
  r.format = format;
  r.path = path;
  return r;
}

void print_list(const RunDirectory& run, const std::vector<figures::FigureSpec>& specs,
                const std::string& no_checkpoint, bool as_json) {
  if (as_json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& s : specs) list.push_back({{"name", s.name}, {"description", s.description}});
    std::cout << nlohmann::json{{"run", run.dir},
                                {"checkpoint", run.has_checkpoint},
                                {"figures", list}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "figures of " << run.dir << no_checkpoint << ":\n";
  for (const auto& s : specs) std::cout << "  " << s.name << "  " << s.description << "\n";
}

// `--list-steps`: the steps of the run's views.rec, one per line or {"steps": [...]}.
int print_steps(const std::string& dir, bool as_json) {
  const RunDirectory run = read_run_directory(dir);  // refuses what is not a run
  // Read in place, never whole; another run's recording (its identity, or for an older file
  // without one its first record's shape) is refused.
  const std::string path = (fs::path(run.dir) / kViewRecordsFile).string();
  const ViewRun owner = view_run_of(run.dir, run.config);
  const auto index = index_view_records(path, owner);
  if (!index.empty()) read_view_record(path, index.front(), owner.shape);
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& e : index) steps.push_back(e.step);
  if (as_json) {
    std::cout << nlohmann::json{{"steps", steps}}.dump() << "\n";
  } else {
    for (const auto& s : steps) std::cout << s.get<int64_t>() << "\n";
    if (index.empty())
      std::cerr << "attnlab export: " << run.dir
                << " has no recorded views (views.rec): no timeline, only its final step\n";
  }
  return kExitOk;
}

// The figures drawn from what views.rec records, so --step can pick one of its steps
// (connections and mechanism-views read the run's mechanism views over training through
// FigureOptions::step instead: history_figure). One list for the checks and their messages.
const std::vector<std::string> kRecordedFigures = {
    "attention",        "image-attention", "connections", "mechanism-views", "conn-matrix",
    "conn-eigenvalues", "neural-surface",  "importance",  "attribution"};
// Drawn from the snapshot's mechanism views over training, picked by FigureOptions::step.
bool history_figure(const std::string& name) {
  return name == "connections" || name == "mechanism-views";
}
bool recorded_figure(const std::string& name) {
  return !history_figure(name) && std::find(kRecordedFigures.begin(), kRecordedFigures.end(),
                                            name) != kRecordedFigures.end();
}
std::string recorded_figure_names() {
  std::string out;
  for (size_t i = 0; i < kRecordedFigures.size(); ++i)
    out += (i == 0 ? "" : i + 1 == kRecordedFigures.size() ? " and " : ", ") + kRecordedFigures[i];
  return out;
}

// The run's snapshot as it was at the view recorded at or before `step` (said on stderr): the
// probe's maps and tokens, image, C and its spectrum (core/runs/records/view_timeline.h). `option`
// names what asked for the step in messages ("--step 300", "--steps 0:60:20").
std::shared_ptr<const Snapshot> at_recorded_step(const RunDirectory& run, const Snapshot& saved,
                                                 const std::vector<ViewIndexEntry>& index,
                                                 int64_t step, const std::string& option) {
  const std::string path = (fs::path(run.dir) / kViewRecordsFile).string();
  if (index.empty())
    throw Error(option + ": " + run.dir +
                " has no recorded views (views.rec; runs before recording, or train.record_every "
                "0): only its final step, " +
                std::to_string(saved.step) + ", can be exported");
  const ViewRecord r =
      read_view_record(path, view_record_at(index, step), view_shape_of(run.config));
  std::cerr << "attnlab export: the view recorded at step " << r.step
            << (r.step == step ? "" : " (the last at or before " + std::to_string(step) + ")")
            << "\n";
  auto snap = std::make_shared<Snapshot>(snapshot_at_record(saved, r));
  snap->step = r.step;
  return snap;
}

// --steps: "a:b:k" (a, a + k, ... up to b) or "s1,s2,..." (ascending after sorting); at most
// kMaxFilmSteps, none past the run's train.steps `last` (so no range can overflow).
constexpr int64_t kMaxFilmSteps = 64;
std::vector<int64_t> parse_steps(const std::string& text, int64_t last) {
  auto bad = [&](const std::string& why) {
    return Error("--steps " + text + ": " + why +
                 " (give a:b:k, from a to b every k, or a list like 0,100,1000)");
  };
  auto number = [&](const std::string& s) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + s + "' is not a step (a whole number >= 0)");
    try {
      return static_cast<int64_t>(std::stoll(s));
    } catch (const std::exception&) {
      throw bad("'" + s + "' is too large");
    }
  };
  std::vector<int64_t> steps;
  if (text.find(':') != std::string::npos) {
    const size_t c1 = text.find(':'), c2 = text.find(':', c1 + 1);
    if (c2 == std::string::npos || text.find(':', c2 + 1) != std::string::npos)
      throw bad("a range has three parts");
    const int64_t a = number(text.substr(0, c1)), b = number(text.substr(c1 + 1, c2 - c1 - 1)),
                  k = number(text.substr(c2 + 1));
    if (k <= 0) throw bad("the step k must be at least 1");
    if (b < a) throw bad("the range ends before it starts");
    if (b > last) throw bad("it ends past the run's last step, " + std::to_string(last));
    if ((b - a) / k >= kMaxFilmSteps) throw bad("more than 64 steps");
    for (int64_t i = 0; i <= (b - a) / k; ++i) steps.push_back(a + i * k);  // b - a >= 0: exact
  } else {
    size_t at = 0;
    while (at <= text.size()) {
      const size_t comma = std::min(text.find(',', at), text.size());
      steps.push_back(number(text.substr(at, comma - at)));
      at = comma + 1;
    }
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    if (steps.size() > static_cast<size_t>(kMaxFilmSteps)) throw bad("more than 64 steps");
    if (steps.back() > last)
      throw bad("step " + std::to_string(steps.back()) + " is past the run's last step, " +
                std::to_string(last));
  }
  return steps;
}

// The figure at each of `steps` (the recorded step at or before each; steps that land on the
// same record are drawn once), side by side (figures::filmstrip_figure).
fig::Figure filmstrip(const RunDirectory& run, const Snapshot& saved,
                      const std::vector<ViewIndexEntry>& index, const std::string& figure,
                      const figures::FigureOptions& options, const std::vector<int64_t>& steps,
                      const std::string& option) {
  std::vector<fig::Figure> frames;
  for (const int64_t step : steps) {
    fig::Figure f;
    if (history_figure(figure)) {
      figures::FigureOptions at = options;
      at.step = step;
      f = figures::build_figure(figure, saved, at);
    } else {
      f = figures::build_figure(figure, *at_recorded_step(run, saved, index, step, option),
                                options);
    }
    if (!frames.empty() && frames.back().step == f.step) continue;
    // The paraboloid is the same reference at every step: drawn once per frame it would only
    // stretch the shared colour scale over the learned surfaces. The filmstrip shows what moves.
    if (figure == "neural-surface")
      f.panels.erase(std::remove_if(f.panels.begin(), f.panels.end(),
                                    [](const fig::Panel& p) {
                                      return !p.heatmaps.empty() &&
                                             p.heatmaps.front().name == "paraboloid";
                                    }),
                     f.panels.end());
    frames.push_back(std::move(f));
  }
  return figures::filmstrip_figure(frames);
}

// --weights: the checkpoint's tensors as safetensors, with what a reader needs to rebuild the
// model (the resolved config) in the metadata.
int write_weights(const ExportArgs& a) {
  if (fs::path(a.weights).extension() != ".safetensors")
    throw Error("--weights " + a.weights + ": the file must end in .safetensors");
  const RunDirectory run = read_run_directory(a.run);
  int64_t step = 0, count = 0;
  size_t tensors = 0;
  write_file_atomic(a.weights, weights_file_of_run(run, &step, &tensors, &count));
  if (a.json)
    std::cout << nlohmann::json{{"files", {a.weights}},
                                {"tensors", tensors},
                                {"values", count},
                                {"step", step}}
                     .dump(2)
              << "\n";
  else
    std::cout << a.weights << "\n"
              << tensors << " tensors, " << count << " values, step " << step << "\n";
  return kExitOk;
}

// The figure options of export's flags (layer, step, connections' layout, colormap).
figures::FigureOptions figure_options(const ExportArgs& a) {
  figures::FigureOptions options;
  options.layer = a.layer;
  options.step = a.step;
  options.connections_overlaid = !a.multiples;
  options.connections_beta = a.beta;
  options.connections_history = a.history;
  options.connections_cols = a.cols;
  if (!render::parse_colormap(a.colormap, options.colormap) ||
      options.colormap == render::Colormap::Diverging)
    throw Error("--colormap " + a.colormap + " is not one of viridis, cividis, magma, hot, gray");
  return options;
}

using ExportJobs = std::vector<std::pair<std::string, fig::ExportRequest>>;  // figure -> request

// --figure's request, or --all's format (its requests follow once the run's figures are known):
// checked before the (slower) checkpoint load.
ExportJobs checked_requests(const ExportArgs& a, fig::ExportFormat* all_format) {
  ExportJobs jobs;
  *all_format = fig::ExportFormat::Pdf;
  if (!a.figure.empty()) {
    const auto format = format_for(a, a.out);
    jobs.emplace_back(a.figure, request_for(a, format, a.out));
    fig::validate(jobs.back().second);
  } else if (a.all) {
    if (!a.format.empty() && !fig::parse_export_format(a.format, *all_format))
      throw Error("--format " + a.format + " is not one of pdf, svg, png, csv");
    fig::validate(request_for(a, *all_format, (fs::path(".") / "probe").string()));
    if (fs::exists(a.out) && !fs::is_directory(a.out))
      throw Error("--out " + a.out + " is a file; --all writes into a directory");
  }
  return jobs;
}

// The run as export draws it: its snapshot (at --step's recorded view when given), its
// recorded views indexed once, and --steps' filmstrip steps.
struct ExportedRun {
  RunDirectory run;
  std::shared_ptr<const Snapshot> snap;
  std::string no_checkpoint;  // said by --list when the run has no checkpoint
  std::string views_path;
  ViewRun owner;
  std::vector<ViewIndexEntry> views;
  std::vector<int64_t> film;
};

ExportedRun load_exported_run(const ExportArgs& a) {
  ExportedRun e;
  e.run = read_run_directory(a.run);
  const RunDirectory& run = e.run;
  if (run.has_checkpoint) {
    e.snap = snapshot_of_run(run, a.image);
  } else {
    e.snap = curves_of_run(run);
    e.no_checkpoint = " (no checkpoint/: only the loss curves)";
  }
  // The recorded views (views.rec): --step's maps and the head metrics; indexed once.
  e.views_path = (fs::path(run.dir) / kViewRecordsFile).string();
  e.owner = view_run_of(run.dir, run.config);
  e.views = index_view_records(e.views_path, e.owner);
  if (!a.steps.empty() && (a.figure.empty() || a.step >= 0))
    throw Error("--steps draws one --figure at several steps (without --step)");
  if (!a.steps.empty())
    e.film = parse_steps(a.steps, std::max(run.config.train.steps, e.snap->step));
  if (!e.film.empty() && !recorded_figure(a.figure) && !history_figure(a.figure))
    throw Error("--steps: " + a.figure + " is not recorded over training (--steps applies to " +
                recorded_figure_names() + ")");
  if (a.step >= 0 && !history_figure(a.figure) && !a.list) {
    if (!recorded_figure(a.figure))
      throw Error("--step " + std::to_string(a.step) + ": " + a.figure +
                  " is not recorded over training (--step applies to " + recorded_figure_names() +
                  "); the checkpoint is at step " + std::to_string(e.snap->step));
    e.snap = at_recorded_step(run, *e.snap, e.views, a.step, "--step " + std::to_string(a.step));
  }
  return e;
}

// --figure attribution: attribution patching as views.rec recorded it (train.record_attribution)
// at each of `steps` (-1: the last record; the record at or before each, drawn once), side by
// side on one colour scale: when each head became causally necessary.
fig::Figure attribution_filmstrip(const ExportedRun& e, const std::vector<int64_t>& steps,
                                  const std::string& option) {
  if (e.views.empty())
    throw Error(option + ": " + e.run.dir +
                " has no recorded views (views.rec; train.record_every 0, or a run from before "
                "recording): attribution over training is drawn from them");
  std::vector<fig::Figure> frames;
  for (const int64_t step : steps) {
    const ViewRecord r =
        read_view_record(e.views_path, view_record_at(e.views, step), e.owner.shape);
    if (!frames.empty() && frames.back().step == r.step) continue;
    if (r.attribution.empty())
      throw Error(option + ": the view recorded at step " + std::to_string(r.step) + " of " +
                  e.run.dir +
                  " holds no attribution (recorded with train.record_attribution true, for token "
                  "tasks with a corrupted twin, since issue 48)");
    frames.push_back(figures::recorded_attribution_figure(r.attribution, r.step));
  }
  return frames.size() == 1 ? frames.front() : figures::filmstrip_figure(frames);
}

using RowsOf = std::function<std::vector<int>(const std::vector<std::string>&)>;

// The head metrics of every record of the run's views.rec, in step order (none without one),
// averaged over the query rows `rows_of` gives for each record's probe (none: every row).
std::vector<HeadMetric> recorded_head_metrics(const std::string& views_path, const ViewRun& owner,
                                              const std::vector<ViewIndexEntry>& index,
                                              const RowsOf& rows_of = {}) {
  std::vector<HeadMetric> rows;
  for (const auto& entry : index) {
    const ViewRecord r = read_view_record(views_path, entry, owner.shape);
    for (HeadMetric& m : head_metrics(r, rows_of ? rows_of(r.probe_tokens) : std::vector<int>{}))
      rows.push_back(std::move(m));
  }
  return rows;
}

// --tensorboard: an older run's event file from its files (core/runs/formats/
// tensorboard_events.h), refused for a run being written or one that has an event file already
// (TensorBoard would draw every curve twice). Everything is read and checked before the file is
// made.
int write_tensorboard(const ExportArgs& a) {
  const RunDirectory run = read_run_directory(a.run);  // refuses what is not a run
  const std::string holder = run_lock_holder(run.dir);
  if (!holder.empty())
    throw Error("--tensorboard: run " + run.dir + " is being written by " + holder +
                ", which writes its own event file as it trains");
  for (const auto& entry : fs::directory_iterator(run.dir))
    if (entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
      throw Error("--tensorboard: run " + run.dir + " has an event file already, " +
                  entry.path().filename().string() +
                  ": TensorBoard would show every curve twice (move it away to write a new one)");
  const std::string views = (fs::path(run.dir) / kViewRecordsFile).string();
  const ViewRun owner = view_run_of(run.dir, run.config);
  const auto heads = recorded_head_metrics(views, owner, index_view_records(views, owner));
  const std::string path =
      write_run_events(run.dir, read_regular_file((fs::path(run.dir) / "config.json").string()),
                       read_regular_file((fs::path(run.dir) / "metrics.csv").string()), heads);
  if (a.json)
    std::cout << nlohmann::json{{"files", {path}}, {"head_metrics", heads.size()}}.dump(2) << "\n";
  else
    std::cout << path << "\n";
  return kExitOk;
}

// The head metrics over the recorded steps as CSV: one row per step, layer, head and metric; a
// metric that was not measured is empty, and the model's metrics (conn's rho(I + C)) belong to
// no layer or head.
std::string heads_csv(const std::vector<HeadMetric>& rows) {
  std::string csv = "step,layer,head,metric,value\n";
  char value[32];
  for (const HeadMetric& m : rows) {
    std::snprintf(value, sizeof value, "%.9g", m.value);
    csv += std::to_string(m.step) + "," + (m.layer < 0 ? "" : std::to_string(m.layer)) + "," +
           (m.head < 0 ? "" : std::to_string(m.head)) + "," + m.metric + "," +
           (std::isfinite(m.value) ? value : "") + "\n";
  }
  return csv;
}

// --crop: the attention maps cut to the task region called `name` of the probe they show, as the
// window's Crop combo cuts them (fig::MapView; the title names the rows and columns shown).
fig::Figure cropped(const fig::Figure& figure, const ExportedRun& e, const std::string& name) {
  const auto regions = task_regions_of_labels(e.run.config, e.snap->probe_tokens);
  const TaskRegion* r = find_region(regions, name);
  if (!r)
    throw Error("--crop " + name + ": not a region of this run's probe (task " +
                e.run.config.task.name + "); give one of: " + region_names(regions));
  const fig::Heatmap* map = fig::MapView::first_map(figure);
  if (!map) throw Error("--crop " + name + ": the figure has no attention maps to crop");
  fig::MapView view;
  view.set_size(map->rows, map->cols);
  view.set_crop({static_cast<int>(r->first), static_cast<int>(r->last) + 1},
                {static_cast<int>(r->key_first), static_cast<int>(r->key_last) + 1});
  return view.apply(figure, /*name_range=*/true);
}

// Builds every job's figure first, so that a bad name fails before any file is written, then
// writes them (the heads CSV from the rows, not a figure) and prints what was written.
void write_jobs(const ExportArgs& a, const ExportedRun& e, const ExportJobs& jobs,
                const figures::FigureOptions& options) {
  std::vector<HeadMetric> rows;
  auto is_heads = [&](const std::string& name) { return name == "heads" && !e.views.empty(); };
  for (const auto& job : jobs)
    if (is_heads(job.first) && rows.empty())
      rows = recorded_head_metrics(e.views_path, e.owner, e.views,
                                   probe_rows(e.run.config, a.positions, "--positions"));
  std::vector<fig::Figure> built;
  for (const auto& job : jobs)
    built.push_back(
        job.first == "attribution"
            ? attribution_filmstrip(e, e.film.empty() ? std::vector<int64_t>{a.step} : e.film,
                                    e.film.empty() ? "--figure attribution" : "--steps " + a.steps)
        : !e.film.empty()
            ? filmstrip(e.run, *e.snap, e.views, job.first, options, e.film, "--steps " + a.steps)
        : !a.crop.empty() ? cropped(figures::build_figure(job.first, *e.snap, options), e, a.crop)
        : !is_heads(job.first) ? figures::build_figure(job.first, *e.snap, options)
        : job.second.format == fig::ExportFormat::Csv ? fig::Figure{}
                                                      : figures::heads_figure(rows));
  const fig::Provenance prov = figures::provenance_for(*e.snap, e.run.config, e.run.id);
  nlohmann::json written = nlohmann::json::array();
  fig::ExportResult res;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (is_heads(jobs[i].first) && jobs[i].second.format == fig::ExportFormat::Csv) {
      write_file_atomic(jobs[i].second.path, heads_csv(rows));
      res.files = {jobs[i].second.path};
    } else {
      res = fig::export_figure(built[i], jobs[i].second, prov);
    }
    for (const auto& f : res.files) {
      written.push_back(f);
      if (!a.json) std::cout << f << "\n";
    }
  }
  if (jobs.empty()) return;
  if (a.json)
    std::cout << nlohmann::json{{"files", written},
                                {"font_family", res.font_family},
                                {"font_file", res.font_file}}
                     .dump(2)
              << "\n";
  else if (!res.font_family.empty())  // a data-only CSV has no font
    std::cout << "font: " << res.font_family << " (" << res.font_file << ")\n";
}

}  // namespace

CLI::App* add_command(CLI::App& app, ExportArgs& a) {
  auto* cmd = app.add_subcommand("export", "Export a saved run's figures as PDF, SVG, PNG or CSV");
  cmd->add_option("--run", a.run, "Run directory (attnlab train --out)")->required();
  cmd->add_option("--figure", a.figure, "Figure name (see --list)");
  cmd->add_flag("--all", a.all, "Every figure the run has, into the --out directory");
  cmd->add_flag("--list", a.list, "List the run's figures and exit");
  cmd->add_flag("--list-steps", a.list_steps,
                "List the steps the run recorded its views at (views.rec) and exit");
  cmd->add_option(
      "--step", a.step,
      recorded_figure_names() + ": the view recorded at or before this step (said on stderr)");
  cmd->add_option("--steps", a.steps,
                  "A filmstrip of --figure (" + recorded_figure_names() +
                      ") at several recorded steps, one column each, one colour scale: a:b:k or "
                      "s1,s2,... (at most 64 steps, none past the run's train.steps)");
  cmd->add_option("--format", a.format, "pdf, svg, png or csv (default: --out's extension)");
  fig::ExportRequest& r = a.request;
  cmd->add_option("--dpi", r.dpi, "PNG resolution (30..2400, default 300)");
  cmd->add_option("--width-in", r.width_in, "Width in inches (1..20; 3.5 or 7 for papers)");
  cmd->add_option("--height-in", r.height_in, "Height in inches (0: the figure's aspect)");
  cmd->add_option("--font-pt", r.font_pt, "Font size in points (4..24, default 8)");
  cmd->add_option("--font", r.font_file, "TrueType font file (default DejaVu Sans)");
  cmd->add_flag("--dark", r.dark, "Dark theme (exports are light by default)");
  cmd->add_option("--layer", a.layer, "attention, image-attention, connections: one layer only");
  cmd->add_flag("--multiples", a.multiples, "connections: one plot per head (default: overlaid)");
  cmd->add_flag("--beta", a.beta, "connections: beta_h = softmax_j g_h(t_j) under the curves");
  cmd->add_option("--history", a.history, "connections: earlier frames drawn faded (0..8)")
      ->check(CLI::Range(0, 8));
  cmd->add_option("--cols", a.cols, "connections: plots per row (0: automatic)")
      ->check(CLI::Range(0, 64));
  cmd->add_option("--image", a.image, "image-attention: test image index");
  cmd->add_option("--colormap", a.colormap, "attention heatmaps: viridis, cividis, magma");
  cmd->add_option("--out", a.out, "Output file (--all: output directory)");
  cmd->add_flag("--json", a.json,
                "Print as one JSON document: with --list the figures, else the files written");
  cmd->add_option("--weights", a.weights,
                  "Write the checkpoint's tensors to this .safetensors file (names: "
                  "docs/guide/python.md; metadata: attnlab version, resolved config, step)");
  cmd->add_option("--positions", a.positions,
                  "heads: the query rows the head metrics average over: answer (the positions "
                  "the task scores), query (from the first scored one on) or all (default)");
  cmd->add_option("--crop", a.crop,
                  "attention: the maps cut to a region of the task's probe, as the window's Crop "
                  "combo (whole; mqar: context, queries, queries-context; selective_copy: copied, "
                  "answers, answers-copied; induction_head: trigger, answer, answer-trigger; "
                  "parity, reverse_string, duplicate_string: input, output, output-input)");
  cmd->add_flag("--tensorboard", a.tensorboard,
                "Write a TensorBoard event file into the run directory (a run without one): "
                "metrics.csv's scalars, the head metrics, the config");
  return with_footer(cmd, kExportFooter);
}

int run_command(const ExportArgs& a) {
  return run_reporting_errors("export", [&] {
    const int modes = (a.list ? 1 : 0) + (a.list_steps ? 1 : 0) + (a.all ? 1 : 0) +
                      (a.figure.empty() ? 0 : 1) + (a.weights.empty() ? 0 : 1) +
                      (a.tensorboard ? 1 : 0);
    if (modes != 1)
      throw Error(
          "give exactly one of --list, --list-steps, --figure NAME, --all, --weights FILE or "
          "--tensorboard");
    if (a.positions != "all" && a.positions != "answer" && a.positions != "query")
      throw Error("--positions " + a.positions + ": give answer, query or all");
    if (a.positions != "all" && a.figure != "heads" && !a.all)
      throw Error("--positions goes with --figure heads (or --all)");
    if (!a.crop.empty() && (a.figure != "attention" || !a.steps.empty()))
      throw Error("--crop " + a.crop + " goes with --figure attention (one step, not --steps)");
    if (a.list_steps) return print_steps(a.run, a.json);
    if (a.tensorboard) return write_tensorboard(a);
    if (!a.weights.empty()) return write_weights(a);
    if (!a.list && a.out.empty()) throw Error("--out is required (a file; with --all a directory)");
    const figures::FigureOptions options = figure_options(a);
    fig::ExportFormat all_format;
    ExportJobs jobs = checked_requests(a, &all_format);
    const ExportedRun e = load_exported_run(a);
    auto specs = figures::figures_for(*e.snap);
    if (!e.views.empty())
      specs.push_back({"heads",
                       "head metrics (entropy, diagonal, previous-token, induction, ky's "
                       "effective window) over the recorded steps"});
    if (a.list) {
      print_list(e.run, specs, e.no_checkpoint, a.json);
      return kExitOk;
    }
    if (a.all) {
      std::error_code ec;
      fs::create_directories(a.out, ec);
      if (ec) throw Error("--out: cannot create " + a.out + ": " + ec.message());
      for (const auto& s : specs)
        jobs.emplace_back(
            s.name,
            request_for(a, all_format,
                        (fs::path(a.out) / (s.name + "." + fig::to_string(all_format))).string()));
    }
    write_jobs(a, e, jobs, options);
    return kExitOk;
  });
}

}  // namespace attn
