// The Export dialog: one window every panel's "Export..." button opens. It previews the figure
// as it will be exported (the export's own page: size, natural height, font size, theme; the
// same layout, scaled to the space left), warns when texts would not fit a custom page, and
// writes it (PDF, SVG, PNG or CSV, with the data CSV and JSON sidecar) on a background thread
// whose state the UI polls, so the window never stalls.
// Contract: UI thread only. request_figure_export() may be called from any panel's draw code;
// the dialog picks the request up in its next draw(). Provenance is completed by the window
// (run id "live", config hash, seed) when the request says the figure comes from the run.
#pragma once
#include <imgui.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "app/figures/catalog/figures.h"
#include "app/gui/plot/figure_view.h"
#include "render/plot/export/figure_export.h"
#include "render/plot/figure.h"

namespace attn::gui {

struct FigureExportRequest {
  fig::Figure figure;
  bool from_run = true;  // fill the sidecar from the live run (false: geometry, KY lab)
};

// Queues a figure for the dialog (the last request of a frame wins).
void request_figure_export(fig::Figure figure, bool from_run = true);
// A small "Export..." button that builds figure `name` of the snapshot and opens the dialog on
// it; disabled (with a tooltip saying why) while the snapshot cannot give that figure.
void export_button(const std::string& name, const Snapshot& snap,
                   const figures::FigureOptions& options = {}, const char* label = "Export...");
// Takes the queued request, if any.
std::optional<FigureExportRequest> take_figure_export_request();

class ExportDialog {
 public:
  enum class JobState { None, Running, Done, Failed };
  struct Status {
    JobState state = JobState::None;
    std::string message;             // the files written, or the error
    std::vector<std::string> files;  // Done only
    std::string figure;
  };

  // Opens the dialog on a figure (replacing the previous one; a running job finishes).
  void open(FigureExportRequest request, fig::Provenance provenance);
  // Draws the dialog when open. font: the window font (loaded from the same file as exports).
  void draw(ImFont* font);
  // Starts the export now with the dialog's current settings (the Export button does this).
  void start_export();
  bool is_open() const { return open_; }
  Status status() const;
  // Test hooks: the request the dialog will use, and the preview's last pixel rectangle.
  fig::ExportRequest& settings() { return settings_; }
  void set_path(const std::string& path);  // also picks the format from the extension
  const fig::Figure* figure() const { return request_ ? &request_->figure : nullptr; }
  ImVec4 preview_rect() const { return preview_rect_; }

 private:
  void poll();
  bool open_ = false;
  std::optional<FigureExportRequest> request_;
  fig::Provenance provenance_;
  fig::ExportRequest settings_;
  int size_choice_ = 0;    // 0 single column, 1 full width, 2 custom
  int format_choice_ = 0;  // pdf, svg, png, csv
  char path_[512] = {};
  FigureView preview_;
  ImVec4 preview_rect_{0, 0, 0, 0};
  // The layout check of the previewed page (render/plot/figure_check.h), per figure and page.
  struct FitKey {
    uint64_t serial = 0;
    double width = 0, height = 0, font = 0;
    bool operator==(const FitKey& o) const {
      return serial == o.serial && width == o.width && height == o.height && font == o.font;
    }
  };
  uint64_t serial_ = 0;  // counts open() calls: a new figure
  FitKey fit_key_;
  std::vector<std::string> fit_problems_;
  std::future<fig::ExportResult> job_;
  Status status_;
};

}  // namespace attn::gui
