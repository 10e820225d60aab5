// Issue 48 item 7 in the window's own drawing code: a LiveFigure (gui/plot/live_figure.h) showing a
// grid of 64-token attention maps in a headless ImGui context, driven with real ImGui input. The
// wheel zooms about the mouse (the cell under it stays under it), the figure for Export is the
// visible cells of every map, a drag pans, a click shows the clicked head alone and Esc goes back,
// and a double-click shows the whole map again. A figure drawn at its colorbar label height
// (LiveFigure::colorbar_label_height) shows every colorbar's label whole.
#include <doctest/doctest.h>
#include <imgui.h>

#include <optional>
#include <string>
#include <vector>

#include "app/figures/runs/intervention_figures.h"
#include "app/gui/plot/live_figure.h"
#include "headless_imgui.h"

using namespace attn;

namespace {

constexpr int kTokens = 64;

// Two 64 x 64 attention maps (layer 0, heads 0 and 1): cell (r, c) of head h holds
// 1000 h + 64 r + c. No title: a zoom that changed the title would move the plot.
fig::Figure two_heads() {
  fig::Figure f;
  f.name = "attention";
  f.cols = 2;
  f.share_x = f.share_y = true;
  for (int h = 0; h < 2; ++h) {
    fig::Panel p = fig::matrix_panel("key", "query");
    p.title = "layer 0, head " + std::to_string(h);
    std::vector<float> v;
    for (int r = 0; r < kTokens; ++r)
      for (int c = 0; c < kTokens; ++c) v.push_back(static_cast<float>(1000 * h + kTokens * r + c));
    fig::Heatmap m = fig::square_heatmap("layer0_head" + std::to_string(h), kTokens, v);
    m.layer = 0, m.head = h;
    p.heatmaps.push_back(m);
    f.panels.push_back(p);
  }
  return f;
}

struct Driver {
  gui::LiveFigure plot;
  fig::Figure source = two_heads();
  std::optional<gui::CellHover> hover;
  ImFont* font = nullptr;

  // One frame with the mouse at `mouse`, the left button `down`, `wheel` notches and Esc.
  void frame(ImVec2 mouse, bool down = false, float wheel = 0, bool escape = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.DeltaTime = 1.0f / 60;
    io.MousePos = mouse;
    io.MouseDown[0] = down;
    io.MouseWheel = wheel;
    io.KeysDown[io.KeyMap[ImGuiKey_Escape]] = escape;
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    ImGui::Begin("maps", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove);
    plot.draw(source, ImGui::GetContentRegionAvail(), font);
    hover = plot.hover_cell(source);
    ImGui::End();
    ImGui::Render();
  }
  void idle(ImVec2 mouse, int frames = 40) {  // past the double-click time
    for (int i = 0; i < frames; ++i) frame(mouse);
  }
};

}  // namespace

TEST_CASE("map view in the window: wheel zoom about the mouse, export range, drag, one head") {
  test::HeadlessImGui imgui(1280, 720);
  Driver d;
  d.font = imgui.small_font();
  d.idle(ImVec2(-100, -100), 2);
  // The centre of cell (query 40, key 20) of head 1.
  const ImVec2 at = d.plot.to_screen(1, 20.5, 40.5);
  d.frame(at);
  REQUIRE(d.hover);
  CHECK(d.hover->panel == 1);
  CHECK(d.hover->row == 40);
  CHECK(d.hover->col == 20);

  // Five wheel notches in: the maps show fewer cells, and the same cell is under the mouse.
  for (int i = 0; i < 5; ++i) d.frame(at, false, 1.0f);
  d.idle(at, 2);
  const fig::MapView& view = d.plot.map_view();
  const fig::CellRange rows = view.visible_rows(), cols = view.visible_cols();
  CHECK(rows.size() < kTokens / 2);
  CHECK(cols.size() < kTokens / 2);
  REQUIRE(d.hover);
  CHECK(d.hover->panel == 1);
  CHECK(d.hover->row == 40);
  CHECK(d.hover->col == 20);
  CHECK(d.hover->value == 1000 + kTokens * 40 + 20);

  // What Export gets: both maps, only the visible cells, named as in the whole map.
  const fig::Figure shown = d.plot.on_screen(d.source);
  REQUIRE(shown.panels.size() == 2);
  for (const fig::Panel& p : shown.panels) {
    const fig::Heatmap& h = p.heatmaps.at(0);
    CHECK(h.rows == rows.size());
    CHECK(h.cols == cols.size());
    CHECK(h.first_row == rows.begin);
    CHECK(h.first_col == cols.begin);
    CHECK(h.values.at(0) == 1000 * h.head + kTokens * rows.begin + cols.begin);
  }
  CHECK(shown.title.find("rows (queries) " + std::to_string(rows.begin) + "-") !=
        std::string::npos);

  // A drag to the right by 100 px shows cells further left.
  d.idle(at);
  d.frame(at, true);
  for (int i = 1; i <= 10; ++i) d.frame(ImVec2(at.x + 10.0f * i, at.y), true);
  d.frame(ImVec2(at.x + 100, at.y), false);
  CHECK(view.visible_cols().begin < cols.begin);
  CHECK(view.visible_cols().size() == cols.size());
  CHECK(view.visible_rows() == rows);
  CHECK(view.selected() == -1);  // a drag is not a click

  // A click shows head 1 alone (Export too); Esc goes back to the grid.
  d.idle(at);
  d.frame(at, true);
  d.frame(at, false);
  CHECK(view.selected() == 1);
  CHECK(d.plot.on_screen(d.source).panels.size() == 1);
  CHECK(d.plot.on_screen(d.source).panels[0].title == "layer 0, head 1");
  d.frame(at, false, 0, true);
  d.frame(at);
  CHECK(view.selected() == -1);
  CHECK(d.plot.on_screen(d.source).panels.size() == 2);

  // A double-click shows the whole map (and, two clicks, leaves the head selection as it was).
  d.idle(at);
  d.frame(at, true);
  d.frame(at, false);
  d.frame(at, true);
  d.frame(at, false);
  d.idle(at, 2);
  CHECK_FALSE(view.zoomed());
  CHECK(view.selected() == -1);
  CHECK(d.plot.on_screen(d.source).panels[0].heatmaps[0].rows == kTokens);
}

TEST_CASE("a figure drawn at its colorbar label height shows each colorbar's label whole") {
  // Issue 48 item 8: the Interventions panel's recorded attribution, drawn in what was left of a
  // 1920x1080 tile, cut its colorbar label to "attribution (metri...". The panels now draw such
  // figures at least LiveFigure::colorbar_label_height tall.
  test::HeadlessImGui imgui(1920, 1080);
  fig::Figure f;
  f.name = "recorded-attribution";
  f.title = "attribution patching and direct logit attribution recorded at step 200";
  f.cols = 2;
  f.panels.push_back(figures::layer_head_panel("attribution", "attribution (metric units)", 2, 2,
                                               {0.1f, -0.2f, 5.0f, 0.3f},
                                               render::Colormap::Diverging));
  f.panels.push_back(figures::layer_head_panel("dla", "logit units", 2, 2, {1, 0, -1, 0.5f},
                                               render::Colormap::Diverging));
  gui::LiveFigure plot;
  // The labels of the colorbars on the page of a draw `height` pixels tall.
  auto labels = [&](float height) {
    std::vector<std::string> out;
    for (int frame = 0; frame < 2; ++frame) {
      ImGui::GetIO().DeltaTime = 1.0f / 60;
      ImGui::NewFrame();
      ImGui::Begin("tile");
      plot.draw(f, ImVec2(605, height), imgui.small_font());
      ImGui::End();
      ImGui::Render();
    }
    for (const fig::PlacedText& t : plot.layout().texts)
      if (t.role == fig::TextRole::ColorbarLabel) out.push_back(t.text);
    return out;
  };
  const float least = gui::LiveFigure::colorbar_label_height(f, imgui.small_font());
  CHECK(labels(least) == std::vector<std::string>{"attribution (metric units)", "logit units"});
  // Why: at the height the panel used to leave it (ten font sizes), the label was cut.
  const std::vector<std::string> short_tile = labels(10 * 15.0f);
  REQUIRE(short_tile.size() == 2);
  CHECK(short_tile[0] != "attribution (metric units)");
}
