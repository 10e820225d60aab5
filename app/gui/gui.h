// Entry point of the interactive window (app/gui/*). Only built with ATTN_BUILD_GUI.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct GuiOptions {
  std::string config_path;  // experiment to open; empty = the default experiment
  std::vector<std::string> config_sets;  // --set key=value on it (core/config/config_set.h)
  int width = 1280, height = 800;
  bool autostart = false;           // start training as soon as the window is up
  int exit_after_frames = 0;        // > 0: quit after this many frames (tests, benchmarks)
  std::string screenshot_path;      // write the last frame as PNG before quitting
  std::string frame_stats_path;     // write frame-time statistics (JSON) before quitting
  std::string layout_path;          // ImGui settings; empty = $XDG_CONFIG_HOME/attnlab/layout.ini.
                                    // The workspace's tiles go beside it as layout.json.
  float ui_scale = 0;               // > 0: UI scale (fonts and sizes); 0: saved, else the monitor's
  std::vector<std::string> panels;  // open (and focus) these at start; see gui_panel_names()
  std::vector<std::string> compare_runs;  // saved image runs shown beside the live one
  int64_t image_index = -1;               // test image the Image attention panel shows first
  // Test hook (--export-figure NAME --export-out FILE): once the run can give figure NAME, open
  // the Export dialog on it exactly as the panel's button does, export to FILE with the dialog's
  // defaults, and close the window a few frames after the job ends (the report's "export").
  // A drawn panel showing NAME exports its own figure (its controls applied). With
  // --export-after-step S it waits until the probe has seen step S.
  std::string export_figure, export_out;
  int64_t export_after_step = 0;
  std::vector<std::string> compare_dirs;  // saved run directories added to the Compare panel
  std::string compare_vary;               // "key=v1,v2": Compare starts one run per value
  int compare_bands = 0;  // Compare's and Runs' seed groups: 0 each run, 1 mean ± sd, 2 ± 95% CI
  std::string compare_out;  // where Compare records its runs ("" = <runs_dir>/compare)
  // Where runs trained in the window are recorded (core/training/recording/run_recorder.h) and what the
  // Runs panel lists; empty: $XDG_DATA_HOME/attnlab/runs (~/.local/share/attnlab/runs).
  std::string runs_dir;
  std::vector<std::string> follow_runs;  // --run DIR: listed, ticked and followed in Runs
  std::string probe_text;                // --probe TEXT: the probe input typed at start
  // --step N (with one --run DIR): open DIR's checkpoint and put the timeline (gui/timeline.h) at
  // the view recorded at or before step N; -1: the live model.
  int64_t start_step = -1;
  // --checkpoint-seconds S: the recorded run's periodic checkpoint while training
  // (TrainerOptions::checkpoint_every_s; 0 = only on pause, finish and close).
  double checkpoint_every_s = 60;
  int cycle_panels_every = 0;  // > 0: every N frames show the next panel of gui_panel_names()
                               // beside Run and focus it (soak tests: scripts/soak.sh)
};

// Names accepted by GuiOptions::panels (--panel): the panel table's (app/panels/panel_table.cpp):
// run, loss, attention, connections, ky-lab, geometry, neural, image-attention, conn, compare,
// heads (head metrics over the recorded steps), runs (shown at start with --run).
// A fresh layout shows Run, Loss and Attention; Connections for a ky experiment, Neural for a
// neural one, Connection Transformer for a conn model; Image attention instead of Attention for
// a fashion-mnist experiment or with compare_runs; Geometry instead of Attention when neither a
// config nor a panel was given (a bare `attnlab`).
const std::vector<std::string>& gui_panel_names();

// --set given: the experiment the window would open, with them applied, or attn::Error naming the
// bad key or value (run_gui's caller refuses it with exit 2 before any window opens).
void check_config_sets(const GuiOptions& options);

// Returns the process exit code. Prints a clear message and returns 2 for a panel name not in
// gui_panel_names() (naming the allowed ones), and when no display can be opened (suggesting
// `attnlab train`). Returns 1 (kExitRunFailed) when a run the window trained (the Run panel's or
// Compare's) could not be recorded whole: a read-only or full runs root, a failed checkpoint or
// summary at close; each such run is named on stderr with the file and why (the window showed it
// too while open). With ATTN_GUI_SAVE_DIR=dir the Save field starts with dir typed (tests). With
// the environment variable ATTN_GUI_REPORT=path it writes, at exit, a JSON report of the last
// frame: "window" [w, h]; "panels": per panel title, open, drawn, tile and "rect" [x, y, w, h]
// (window pixels) when drawn; each panel's own report under its name
// ('-' -> '_'; e.g. geometry: tokens, query, z, weights, canvas transform, grid path; see
// GeometryPanel::report(), NeuralPanel::Report; "runs": the Runs panel's list, see
// panels/runs/runs_panel.h; "attention": the probe editor's probe); "help": the Help windows
// (gui/help/menus.h, opened for tests by ATTN_GUI_OPEN_HELP=guide,experiments); "export": the
// Export dialog's state; "timeline": {"step", "steps", "latest", "playing", "sources", "error"}
// (gui/timeline.h), with "latest_rect" and "slider_rect" where it drew Latest and its slider;
// "draw_faults": [{"where", "what"}] the drawing faults caught (gui/window/draw_guard.h) and
// "draw_fault_saves" the saves they caused. With
// ATTN_GUI_FIGURES_DIR=dir as well, every live figure of the last frame (gui/plot/live_figure.h) is
// also written to dir as a PNG of the same page, theme and pixel size, and the report lists them
// under "live_figures": [{name, file, rect}] (the screen/export agreement test).
int run_gui(const GuiOptions& options);

}  // namespace attn
