// Issue 48 item 7, "Export writes what is on screen, crop included", for the window's export:
// the Attention panel (a real trainer's MQAR maps, drawn in a headless ImGui context) zoomed with
// the wheel answers shown_figure("attention") (what the window's export and --export-figure
// write: gui/layout/workspace.cpp) with the cells it drew, not the whole maps.
#include <doctest/doctest.h>
#include <imgui.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "app/gui/plot/live_figure.h"
#include "app/gui/ui_state.h"
#include "app/panels/attention/attention_panel.h"
#include "core/config/config.h"
#include "core/training/trainer.h"
#include "headless_imgui.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

const char* const kMqar = R"({"name": "crop", "seed": 1, "threads": 1,
  "task": {"name": "mqar", "vocab": 32, "length": 3, "context": 16},
  "model": {"d_model": 16, "heads": 2, "layers": 1, "attention": "dot"},
  "train": {"steps": 10, "batch_size": 8, "lr": 3e-3, "warmup": 2, "eval_every": 5,
            "eval_batches": 1, "record_every": 0}})";

std::vector<const fig::Heatmap*> maps(const fig::Figure& f) {
  std::vector<const fig::Heatmap*> out;
  for (const fig::Panel& p : f.panels)
    for (const fig::Heatmap& h : p.heatmaps)
      if (h.layer >= 0) out.push_back(&h);
  return out;
}

}  // namespace

TEST_CASE("attention panel: the window's export of a zoomed map is what the panel drew") {
  const fs::path root =
      fs::temp_directory_path() / ("attnlab_crop_gui_" + std::to_string(getpid()));
  fs::create_directories(root);
  TrainerOptions o;
  o.threads = 1;
  o.publish_interval_ms = 20;
  o.runs_root = root.string();
  Trainer trainer(parse_config(nlohmann::json::parse(kMqar), "test config"), o);
  trainer.start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (trainer.state() != TrainerState::Finished && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(trainer.state() == TrainerState::Finished);
  const std::shared_ptr<const Snapshot> snap = trainer.latest();
  REQUIRE(snap->attention_step >= 0);
  {
    test::HeadlessImGui imgui(1280, 720);
    gui::AttentionPanel panel;
    gui::UiState ui;
    gui::LiveFigure::set_capture(true);
    auto frame = [&](ImVec2 mouse, float wheel) {
      gui::LiveFigure::captured().clear();
      ImGuiIO& io = ImGui::GetIO();
      io.DeltaTime = 1.0f / 60;
      io.MousePos = mouse;
      io.MouseWheel = wheel;
      ImGui::NewFrame();
      ImGui::SetNextWindowPos(ImVec2(0, 0));
      ImGui::SetNextWindowSize(io.DisplaySize);
      ImGui::Begin("attention", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove);
      gui::FrameContext ctx{*snap, trainer.state(), trainer, ui, imgui.small_font()};
      panel.update(ctx);
      panel.draw(ctx);
      ImGui::End();
      ImGui::Render();
    };
    frame(ImVec2(-100, -100), 0);
    frame(ImVec2(-100, -100), 0);
    REQUIRE(gui::LiveFigure::captured().size() == 1);
    const gui::CapturedFigure whole = gui::LiveFigure::captured().front();
    const int tokens = maps(whole.figure).at(0)->rows;
    CHECK(tokens == 16);
    // The wheel over the middle of the first map zooms in.
    const ImVec2 middle(whole.x + whole.w * 0.25f, whole.y + whole.h * 0.5f);
    frame(middle, 0);
    frame(middle, 4);
    frame(middle, 0);
    REQUIRE(gui::LiveFigure::captured().size() == 1);
    const fig::Figure drawn = gui::LiveFigure::captured().front().figure;
    const fig::Figure* exported = panel.shown_figure("attention");
    REQUIRE(exported != nullptr);
    const auto shown = maps(drawn), written = maps(*exported);
    REQUIRE(!shown.empty());
    REQUIRE(written.size() == shown.size());
    CHECK(shown.front()->rows < tokens);  // zoomed: fewer cells than the whole map
    for (size_t i = 0; i < shown.size(); ++i) {
      CHECK(written[i]->rows == shown[i]->rows);
      CHECK(written[i]->cols == shown[i]->cols);
      CHECK(written[i]->first_row == shown[i]->first_row);
      CHECK(written[i]->first_col == shown[i]->first_col);
      CHECK(written[i]->values == shown[i]->values);
    }
    CHECK(panel.shown_figure("loss") == nullptr);
    gui::LiveFigure::set_capture(false);
  }
  trainer.close();
  std::error_code ec;
  fs::remove_all(root, ec);
}
