#include "app/gui/plot/export_dialog.h"

#include <cstdio>
#include <filesystem>
#include <thread>

#include "render/plot/figure_check.h"

namespace attn::gui {
namespace {

std::mutex g_request_mu;
std::optional<FigureExportRequest> g_request;

constexpr const char* kFormats[] = {"pdf", "svg", "png", "csv"};

}  // namespace

void request_figure_export(fig::Figure figure, bool from_run) {
  std::lock_guard<std::mutex> lock(g_request_mu);
  g_request = FigureExportRequest{std::move(figure), from_run};
}

void export_button(const std::string& name, const Snapshot& snap,
                   const figures::FigureOptions& options, const char* label) {
  bool available = false;
  for (const auto& spec : figures::figures_for(snap)) available = available || spec.name == name;
  ImGui::PushID(name.c_str());
  ImGui::BeginDisabled(!available);
  const bool clicked = ImGui::SmallButton(label);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(available ? "Export the %s figure (PDF, SVG, PNG, CSV)"
                                : "No %s figure yet (nothing recorded to draw)",
                      name.c_str());
  ImGui::PopID();
  if (!clicked) return;
  try {
    request_figure_export(figures::build_figure(name, snap, options));
  } catch (const std::exception& e) {
    fig::Figure empty;
    empty.name = name;
    empty.title = std::string("cannot build the figure: ") + e.what();
    request_figure_export(empty);
  }
}

std::optional<FigureExportRequest> take_figure_export_request() {
  std::lock_guard<std::mutex> lock(g_request_mu);
  std::optional<FigureExportRequest> out = std::move(g_request);
  g_request.reset();
  return out;
}

void ExportDialog::open(FigureExportRequest request, fig::Provenance provenance) {
  const std::string name = request.figure.name;
  request_ = std::move(request);
  ++serial_;
  provenance_ = std::move(provenance);
  open_ = true;
  std::snprintf(path_, sizeof path_, "exports/%s.%s", name.c_str(), kFormats[format_choice_]);
  ImGui::SetWindowFocus("Export figure");
}

void ExportDialog::set_path(const std::string& path) {
  std::snprintf(path_, sizeof path_, "%s", path.c_str());
  fig::ExportFormat f;
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext.size() > 1 && fig::parse_export_format(ext.substr(1), f))
    format_choice_ = static_cast<int>(f);
}

ExportDialog::Status ExportDialog::status() const {
  return status_;
}

void ExportDialog::poll() {
  if (status_.state != JobState::Running || !job_.valid()) return;
  if (job_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  try {
    const fig::ExportResult r = job_.get();
    status_.state = JobState::Done;
    status_.files = r.files;
    status_.message = "wrote";
    for (const auto& f : r.files) status_.message += " " + f;
  } catch (const std::exception& e) {
    status_.state = JobState::Failed;
    status_.message = e.what();
  }
}

void ExportDialog::start_export() {
  if (!request_ || status_.state == JobState::Running) return;
  settings_.path = path_;
  settings_.format = static_cast<fig::ExportFormat>(format_choice_);
  status_ = {};
  status_.figure = request_->figure.name;
  try {
    // The default exports/ folder is created on demand; any other folder must exist.
    std::error_code ec;
    if (std::filesystem::path(settings_.path).parent_path() == "exports")
      std::filesystem::create_directories("exports", ec);
    fig::validate(settings_);  // cheap checks at once, in the dialog's own words
  } catch (const std::exception& e) {
    status_.state = JobState::Failed;
    status_.message = e.what();
    return;
  }
  status_.state = JobState::Running;
  status_.message = "writing " + settings_.path + " ...";
  // The job owns copies: the panels may rebuild their figures meanwhile.
  job_ = std::async(std::launch::async,
                    [figure = request_->figure, req = settings_, prov = provenance_] {
                      return fig::export_figure(figure, req, prov);
                    });
}

void ExportDialog::draw(ImFont* font) {
  poll();
  if (!open_ || !request_) return;
  ImGui::SetNextWindowSize(ImVec2(720, 640), ImGuiCond_FirstUseEver);
  if (!ImGui::Begin("Export figure", &open_)) {
    ImGui::End();
    return;
  }
  const fig::Figure& figure = request_->figure;
  ImGui::Text("Figure: %s%s%s", figure.name.c_str(), figure.title.empty() ? "" : "  -  ",
              figure.title.c_str());
  ImGui::SetNextItemWidth(90);
  if (ImGui::Combo("Format", &format_choice_, kFormats, 4)) {
    std::filesystem::path p(path_);
    p.replace_extension(kFormats[format_choice_]);
    std::snprintf(path_, sizeof path_, "%s", p.string().c_str());
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(170);
  const char* sizes[] = {"single column 3.5 in", "full width 7 in", "custom"};
  if (ImGui::Combo("Size", &size_choice_, sizes, 3) && size_choice_ < 2)
    settings_.width_in = size_choice_ == 0 ? 3.5 : 7.0;
  if (size_choice_ == 2) {
    ImGui::SetNextItemWidth(80);
    float w = static_cast<float>(settings_.width_in);
    if (ImGui::InputFloat("width in", &w, 0, 0, "%.2f")) settings_.width_in = w;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(80);
    float h = static_cast<float>(settings_.height_in);
    if (ImGui::InputFloat("height in (0 = auto)", &h, 0, 0, "%.2f")) settings_.height_in = h;
  }
  ImGui::SetNextItemWidth(80);
  float pt = static_cast<float>(settings_.font_pt);
  if (ImGui::InputFloat("font pt", &pt, 0.5f, 1, "%.1f")) settings_.font_pt = pt;
  if (format_choice_ == 2) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    ImGui::InputInt("dpi", &settings_.dpi, 100, 300);
  }
  ImGui::SameLine();
  ImGui::Checkbox("dark theme", &settings_.dark);
  ImGui::SetNextItemWidth(420);
  ImGui::InputText("File", path_, sizeof path_);
  const fig::FigureFont* metrics = preview_.metrics();
  if (metrics)
    ImGui::TextDisabled("Font: %s (%s), the same file on screen and in the export",
                        metrics->family().c_str(), metrics->path().c_str());
  const bool running = status_.state == JobState::Running;
  ImGui::BeginDisabled(running);
  if (ImGui::Button(running ? "Exporting..." : "Export")) start_export();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (status_.state == JobState::Failed)
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", status_.message.c_str());
  else if (status_.state != JobState::None)
    ImGui::TextWrapped("%s", status_.message.c_str());

  // The preview: the export's page (size, font, theme) scaled into the space left.
  ImGui::Separator();
  fig::ExportRequest shown = settings_;
  if (!(shown.width_in >= 1 && shown.width_in <= 20)) shown.width_in = 3.5;
  if (!(shown.font_pt >= 4 && shown.font_pt <= 24)) shown.font_pt = 8;
  if (!(shown.height_in == 0 || (shown.height_in >= 0.5 && shown.height_in <= 20)))
    shown.height_in = 0;
  if (!metrics) {
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", preview_.font_error().c_str());
    ImGui::End();
    return;
  }
  // The export's own page (the same natural height, measured with the same font), scaled.
  const fig::Page page = fig::page_for(figure, shown, *metrics);
  // Texts that would overlap or leave the page (a custom size too small for the figure),
  // checked again only when the figure or the page changes.
  const FitKey key{serial_, page.width_pt, page.height_pt, page.font_pt};
  if (!(key == fit_key_)) {
    fit_key_ = key;
    fit_problems_ = fig::layout_problems(figure, page, *metrics);
  }
  if (!fit_problems_.empty())
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1),
                       "%zu text(s) do not fit this page (%s): a larger size or a smaller font "
                       "helps",
                       fit_problems_.size(), fit_problems_.front().c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  preview_.draw(figure, page, ImVec2(std::max(50.0f, avail.x), std::max(50.0f, avail.y)), font);
  const float s = preview_.pixels_per_point();
  preview_rect_ = ImVec4(origin.x, origin.y, static_cast<float>(page.width_pt) * s,
                         static_cast<float>(page.height_pt) * s);
  ImGui::End();
}

}  // namespace attn::gui
