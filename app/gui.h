// Entry point of the interactive window (app/gui/*). Only built with ATTN_BUILD_GUI.
#pragma once
#include <string>

namespace attn {

struct GuiOptions {
  std::string config_path;  // experiment to open; empty = the default experiment
  int width = 1280, height = 800;
  bool autostart = false;       // start training as soon as the window is up
  int exit_after_frames = 0;    // > 0: quit after this many frames (tests, benchmarks)
  std::string screenshot_path;  // write the last frame as PNG before quitting
  std::string frame_stats_path;  // write frame-time statistics (JSON) before quitting
  std::string layout_path;       // ImGui layout file; empty = $XDG_CONFIG_HOME/attnlab/layout.ini
};

// Returns the process exit code. Prints a clear message (suggesting `attnlab train`) and returns
// 2 when no display can be opened.
int run_gui(const GuiOptions& options);

}  // namespace attn
