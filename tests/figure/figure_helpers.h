// Shared by the figure tests: a small figure with every kind of element, and file helpers.
#pragma once
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "render/plot/figure.h"

namespace attn::fig::testing {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a shell command, returning its stdout; status gets the exit status.
inline std::string run(const std::string& cmd, int& status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab_fig_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Two panels: a loss-like line panel (log y, legend) and a 3 x 4 signed heatmap (matrix rows
// downwards) with a colorbar.
inline Figure sample_figure() {
  Figure f;
  f.name = "sample";
  f.title = "Sample figure";
  f.cols = 2;
  Panel lines;
  lines.title = "loss";
  lines.x.label = "step";
  lines.y.label = "loss (nats)";
  lines.y.log = true;
  LineSeries train{"train", {}, {}, {}, 1.0, LineStyle::Solid};
  LineSeries eval{"eval", {}, {}, {}, 1.0, LineStyle::Dashed};
  for (int i = 0; i <= 50; ++i) {
    train.x.push_back(i * 10), train.y.push_back(3.0 * std::exp(-i / 15.0) + 0.1);
    eval.x.push_back(i * 10), eval.y.push_back(3.2 * std::exp(-i / 17.0) + 0.15);
  }
  lines.lines = {train, eval};
  Panel heat;
  heat.title = "C";
  heat.y.inverted = true;
  heat.x.label = "slot";
  Heatmap h;
  h.name = "C";
  h.rows = 3, h.cols = 4;
  h.values = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 0.25f, -0.25f, 0.75f, 0.125f, -0.875f, 0.375f, 0.0625f};
  h.x0 = 0, h.x1 = 4, h.y0 = 0, h.y1 = 3;
  h.colormap = render::Colormap::Diverging;
  h.colorbar_label = "C_ij";
  heat.heatmaps = {h};
  f.panels = {lines, heat};
  return f;
}

}  // namespace attn::fig::testing
