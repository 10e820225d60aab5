#include "app/panels/attention/image_attention_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>

#include "app/figures/figures.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/palette.h"
#include "app/gui/window/widgets.h"
#include "core/training/trainer.h"

namespace attn::gui {
namespace {

constexpr float kFullMapHeight = 300.0f;  // under the grid: at most this (or half the height)
constexpr double kMinMapFonts = 3.0;      // the grid's maps: at least this many font sizes wide
constexpr const char* kColormapNames[] = {"hot", "viridis"};

uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2))) * 0xBF58476D1CE4E5B9ull;
}

uint64_t mix(uint64_t h, const std::string& s) {
  return mix(h, static_cast<uint64_t>(std::hash<std::string>{}(s)));
}

// The grid side of a CLS row over grid x grid patches; 0 when it is not a square.
int grid_side(size_t patches) {
  const int g = static_cast<int>(std::lround(std::sqrt(static_cast<double>(patches))));
  return g > 0 && static_cast<size_t>(g) * g == patches ? g : 0;
}

std::string prediction_text(const ImageProbe& p) {
  if (p.probabilities.empty()) return "";
  const auto best = std::max_element(p.probabilities.begin(), p.probabilities.end());
  const int k = static_cast<int>(best - p.probabilities.begin());
  const auto& names = fashion_mnist_class_names();
  char text[96];
  std::snprintf(text, sizeof text, "predicts %s (%.2f)",
                k < static_cast<int>(names.size()) ? names[k].c_str() : "?", *best);
  return text;
}

// Token t of an image model: 0 the CLS token, 1 + r g + c the patch at grid (r, c).
std::string token_name(int t, int g) {
  if (t == 0 || g <= 0) return "CLS";
  return "patch (" + std::to_string((t - 1) / g) + ", " + std::to_string((t - 1) % g) + ")";
}

std::string head_name(int column, int heads) {
  return column == heads ? "head mean" : "head " + std::to_string(column);
}

}  // namespace

struct ImageAttentionPanel::Row {
  bool live = false;
  std::string source;  // "live" or the run directory
  std::unique_ptr<SavedImageRun> run;
  std::string error;
  std::string note;  // e.g. the live run has not probed yet
  ImageProbe probe;
  uint64_t probe_key = 0;  // changes whenever `probe` does
  uint64_t cls_key = 1;    // probe_key when cls was computed
  // Per layer: each head's CLS weights on the patches, then their mean
  // (figures::ImageAttentionRow).
  std::vector<std::vector<float>> cls;
  int grid = 0;
  std::vector<float> first_cell;  // screen rect of the first shown layer's head 0 (report)
  int columns() const { return probe.heads + 1; }
};

ImageAttentionPanel::ImageAttentionPanel() {
  auto live = std::make_unique<Row>();
  live->live = true;
  live->source = "live";
  rows_.push_back(std::move(live));
}

ImageAttentionPanel::~ImageAttentionPanel() = default;

void ImageAttentionPanel::add_run(const std::string& dir) {
  auto row = std::make_unique<Row>();
  row->source = dir;
  try {
    row->run = std::make_unique<SavedImageRun>(dir);
    if (data_dir_.empty()) data_dir_ = row->run->data_dir();
    row->probe = row->run->probe(index_ >= 0 ? index_ : 0);
    row->probe_key = mix(row->probe_key, static_cast<uint64_t>(row->probe.image.index) + 1);
  } catch (const std::exception& e) {
    row->error = e.what();
  }
  rows_.push_back(std::move(row));
}

void ImageAttentionPanel::sync_live_row(const Snapshot& snap, bool image_task) {
  Row& row = *rows_.front();
  if (snap.probe_image.empty()) {
    row.error = image_task ? ""
                           : "the live run is not an image task (only image classifiers are "
                             "shown here)";
    row.note = image_task ? "waiting for the live run's first probe" : "";
    if (row.probe.layers != 0 || !row.probe.maps.empty()) row.probe = {}, ++row.probe_key;
    return;
  }
  row.error.clear();
  row.note.clear();
  uint64_t key = mix(mix(snap.generation, static_cast<uint64_t>(snap.attention_step + 2)),
                     reinterpret_cast<uintptr_t>(snap.attention.get()));
  key = mix(key, static_cast<uint64_t>(snap.probe_image.index) + 1);
  if (key == row.probe_key) return;
  row.probe_key = key;
  row.probe.image = snap.probe_image;
  row.probe.layers = snap.layers;
  row.probe.heads = snap.heads;
  row.probe.maps = snap.attention_maps();
  row.probe.probabilities = snap.probe_probabilities;
  row.probe.step = snap.attention_step;
}

void ImageAttentionPanel::probe_saved_rows() {
  for (size_t i = 1; i < rows_.size(); ++i) {
    Row& row = *rows_[i];
    if (!row.run) continue;
    try {
      row.probe = row.run->probe(index_);
      row.error.clear();
    } catch (const std::exception& e) {
      row.error = e.what();
    }
    row.probe_key = mix(row.probe_key, static_cast<uint64_t>(index_) + 1);
  }
}

// Every overlay of a row: CLS rows per head and their mean, per layer.
void ImageAttentionPanel::compute(Row& row) {
  const ImageProbe& p = row.probe;
  const int cols = row.columns();
  row.cls.assign(static_cast<size_t>(p.layers) * cols, {});
  row.grid = 0;
  for (int l = 0; l < p.layers; ++l) {
    std::vector<std::vector<float>> heads;
    for (const AttentionMap& m : p.maps)
      if (m.layer == l && m.head >= 0 && m.head < p.heads) {
        row.cls[static_cast<size_t>(l) * cols + m.head] = cls_patch_weights(m);
        heads.push_back(row.cls[static_cast<size_t>(l) * cols + m.head]);
      }
    if (!heads.empty()) row.cls[static_cast<size_t>(l) * cols + p.heads] = elementwise_mean(heads);
  }
  for (const auto& c : row.cls)
    if (!c.empty()) row.grid = grid_side(c.size());
  row.cls_key = row.probe_key;
}

// The row's name in the grid: "live", or the run directory's last part (the whole path when two
// rows would share it).
std::string ImageAttentionPanel::row_label(size_t i) const {
  if (rows_[i]->live) return "live";
  auto base = [](const std::string& dir) {
    std::filesystem::path p(dir);
    if (p.filename().empty()) p = p.parent_path();
    const std::string name = p.filename().string();
    return name.empty() ? dir : name;
  };
  const std::string mine = base(rows_[i]->source);
  for (size_t k = 1; k < rows_.size(); ++k)
    if (k != i && base(rows_[k]->source) == mine) return rows_[i]->source;
  return mine;
}

void ImageAttentionPanel::draw_toolbar(const Snapshot& snap, Trainer& trainer) {
  if (data_dir_.empty() && !snap.probe_image.empty()) data_dir_ = trainer.config().task.data_dir;
  const auto& names = fashion_mnist_class_names();
  // Image: class and index within the class (or a raw test index).
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Image");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(130);
  if (ImGui::BeginCombo("##class", pick_class_ < 0 ? "any class" : names[pick_class_].c_str())) {
    if (ImGui::Selectable("any class", pick_class_ < 0)) pick_class_ = -1, pick_nth_ = 0;
    for (int k = 0; k < static_cast<int>(names.size()); ++k)
      if (ImGui::Selectable(names[k].c_str(), pick_class_ == k)) pick_class_ = k, pick_nth_ = 0;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::InputInt(pick_class_ < 0 ? "test index" : "nth of class", &pick_nth_);
  pick_nth_ = std::max(0, pick_nth_);
  ImGui::SameLine();
  if (ImGui::Button("Show")) {
    pick_error_.clear();
    if (data_dir_.empty()) {
      pick_error_ = "no image task: open a fashion-mnist experiment or add a saved run";
    } else {
      try {
        const int64_t index = find_test_image(data_dir_, pick_class_, pick_nth_);
        if (index < 0)
          pick_error_ =
              "no such image: " + std::to_string(count_test_images(data_dir_, pick_class_)) +
              " test images" + (pick_class_ < 0 ? "" : " of class " + names[pick_class_]);
        else
          pending_index_ = index;
      } catch (const std::exception& e) {
        pick_error_ = e.what();
      }
    }
  }
  ImGui::SameLine();
  if (index_ >= 0) {
    const ImageProbe& shown = rows_.front()->probe.image.empty() && rows_.size() > 1
                                  ? rows_[1]->probe
                                  : rows_.front()->probe;
    ImGui::TextDisabled("test image %lld: %s", static_cast<long long>(index_),
                        shown.image.label_name.c_str());
  }
  if (!pick_error_.empty())
    ImGui::TextColored(ImVec4(1, 0.43f, 0.43f, 1), "%s", pick_error_.c_str());

  // Display: layer, overlay colormap, alpha, scale, head mean.
  int layers = 0;
  for (const auto& r : rows_) layers = std::max(layers, r->probe.layers);
  layer_combo("##layer", &layer_choice_, layers, 110);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::Combo("##colormap", &colormap_, kColormapNames, 2);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(100);
  ImGui::SliderFloat("alpha", &alpha_, 0.0f, 1.0f, "%.2f");
  ImGui::SameLine();
  ImGui::Checkbox("shared scale", &shared_scale_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Off: each map spans 0..its own max. On: one 0..max for all shown maps.");
  ImGui::SameLine();
  ImGui::Checkbox("head mean", &show_mean_);
  ImGui::SameLine();
  // The grid as on screen: every row, with the controls above applied.
  ImGui::BeginDisabled(grid_figure_.panels.empty());
  if (ImGui::SmallButton("Export...")) request_figure_export(grid_figure_, grid_has_live_);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(grid_figure_.panels.empty() ? "No maps to export yet."
                                                  : "Export the grid as shown (every row).");

  // Comparison runs.
  ImGui::SetNextItemWidth(260);
  const bool entered =
      ImGui::InputTextWithHint("##run", "runs/fmnist_pseudo", run_field_, sizeof run_field_,
                               ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Compare run") || entered) && run_field_[0]) {
    add_run(run_field_);
    run_field_[0] = 0;
  }
  for (size_t i = 1; i < rows_.size(); ++i) {
    ImGui::PushID(static_cast<int>(i));
    ImGui::SameLine();
    if (ImGui::SmallButton(("x " + rows_[i]->source).c_str())) {
      rows_.erase(rows_.begin() + static_cast<long>(i));
      selected_ = {};
      ImGui::PopID();
      break;
    }
    ImGui::PopID();
  }
}

void ImageAttentionPanel::rebuild_grid() {
  std::vector<figures::ImageAttentionRow> in;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = *rows_[i];
    if (!r.error.empty() || r.grid == 0) continue;
    figures::ImageAttentionRow row;
    row.id = static_cast<int>(i);
    row.label = row_label(i);
    row.description =
        r.run ? r.run->description() : live_mechanisms_ + ", step " + std::to_string(r.probe.step);
    const std::string pred = prediction_text(r.probe);
    if (!pred.empty()) row.description += ", " + pred;
    row.image = r.probe.image;
    row.layers = r.probe.layers;
    row.heads = r.probe.heads;
    row.cls = r.cls;
    in.push_back(std::move(row));
  }
  figures::ImageAttentionRowsOptions o;
  o.layer = layer_choice_;
  o.colormap = overlay_colormap();
  o.alpha = std::clamp(static_cast<double>(alpha_), 0.0, 1.0);
  o.scale = shared_scale_ ? figures::AttentionScale::Shared : figures::AttentionScale::PerMap;
  o.show_mean = show_mean_;
  // One figure per number of layer blocks side by side that divides the layers shown; draw()
  // takes the one whose maps come out largest in the space it has.
  int layers = 0;
  for (const auto& r : in) layers = std::max(layers, r.layers);
  const int slots = layer_choice_ < 0 ? std::max(1, layers) : 1;
  grid_error_.clear();
  variants_.clear();
  for (int k = 1; k <= slots; ++k) {
    if (slots % k != 0) continue;
    o.layers_per_row = k;
    Variant v;
    try {
      v.figure = figures::image_attention_rows_figure(in, o, &v.cells);
    } catch (const std::exception& e) {
      grid_error_ = e.what();
      variants_.clear();
      break;
    }
    v.layers_per_row = k;
    v.block = std::max(1, v.figure.cols / k);
    variants_.push_back(std::move(v));
  }
  grid_has_live_ = false;
  if (!variants_.empty())
    for (const auto& c : variants_.front().cells) grid_has_live_ = grid_has_live_ || c.row == 0;
  use_variant(0);
}

void ImageAttentionPanel::use_variant(size_t i) {
  variant_ = i;
  if (i < variants_.size()) {
    grid_figure_ = variants_[i].figure;
    cells_ = variants_[i].cells;
  } else {
    grid_figure_ = fig::Figure{};
    cells_.clear();
  }
}

// How well variant i fits a page of width x height points: its maps' side, halved where the
// layout wraps its rows in the middle of a layer's block (hard to read).
double ImageAttentionPanel::variant_score(size_t i, double width_pt, double height_pt) {
  const Variant& v = variants_[i];
  int cols = 0;
  const double side = map_side(v.figure, width_pt, height_pt, &cols);
  return cols > 0 && cols % v.block != 0 ? 0.5 * side : side;
}

// The variant whose maps come out largest in `area` pixels (within 2%: fewer blocks per row),
// and its score.
std::pair<size_t, double> ImageAttentionPanel::best_variant(ImVec2 area, ImFont* font) {
  const double ppp = std::max(0.5, static_cast<double>(font->FontSize) / fig::Page{}.font_pt);
  const double w = std::max(40.0, area.x / ppp), h = std::max(30.0, area.y / ppp);
  size_t best = 0;
  double best_score = -1;
  for (size_t i = 0; i < variants_.size(); ++i) {
    const double s = variant_score(i, w, h);
    if (s > 1.02 * best_score) best = i, best_score = s;
  }
  return {best, std::max(0.0, best_score)};
}

// The side (points) of a grid figure's maps laid out on a page of width x height points, with
// the page's font as LiveFigure::draw sets it (cols: the columns the layout used); 0 without the
// figure font.
double ImageAttentionPanel::map_side(const fig::Figure& f, double width_pt, double height_pt,
                                     int* cols) {
  const fig::FigureFont* m = metrics_.metrics();
  if (!m || f.panels.empty()) return 0;
  fig::Page page;
  page.width_pt = width_pt, page.height_pt = height_pt;
  const fig::FigureLayout layout = fig::layout_figure(f, page, *m);
  if (cols) *cols = layout.cols;
  double s = 0;
  for (const fig::PanelLayout& p : layout.panels) s = std::max(s, p.plot.w);
  return s;
}

// The grid figure's size in pixels for an area of `size`: the smallest at which its maps are as
// large as in the whole area (98%), since the layout would spread spare width (or height) between
// the columns (rows), far from each other and from the colorbar; the height shrinks first (a
// width-bound grid), then the width (a height-bound grid; a narrower page may wrap the title into
// another line, which stops it). Where the area would leave maps under kMinMapFonts font sizes
// (many rows in a short tile), the figure grows taller than the area, which then scrolls. Never
// under an inch wide (the Export dialog's least).
ImVec2 ImageAttentionPanel::compact_size(ImVec2 size, ImFont* font) {
  uint64_t key = mix(mix(grid_key_, variant_), static_cast<uint64_t>(size.x * 4));
  key =
      mix(mix(key, static_cast<uint64_t>(size.y * 4)), static_cast<uint64_t>(font->FontSize * 64));
  if (key == compact_key_) return compact_;
  compact_key_ = key;
  compact_ = size;
  const double font_pt = fig::Page{}.font_pt;
  const double ppp = std::max(0.5, static_cast<double>(font->FontSize) / font_pt);
  double w = std::max(40.0, size.x / ppp), h = std::max(30.0, size.y / ppp);
  const double least_side = kMinMapFonts * font_pt;
  const double whole = map_side(grid_figure_, w, h);
  // New maps in the same grid (every probe of the live run): the last size still does unless
  // the title or the colorbar's labels grew enough to shrink the maps (by 4%).
  uint64_t shape = mix(mix(static_cast<uint64_t>(size.x * 4), static_cast<uint64_t>(size.y * 4)),
                       static_cast<uint64_t>(font->FontSize * 64));
  shape = mix(mix(mix(shape, variant_), static_cast<uint64_t>(grid_figure_.rows)),
              static_cast<uint64_t>(grid_figure_.cols));
  shape = mix(shape, grid_figure_.panels.size());
  if (shape == compact_shape_ && compact_pt_.x > 0) {
    const double side = map_side(grid_figure_, compact_pt_.x, compact_pt_.y);
    if (side >= 0.96 * (whole >= least_side ? whole : least_side)) {
      compact_ = ImVec2(std::min(size.x, static_cast<float>(std::ceil(compact_pt_.x * ppp))),
                        static_cast<float>(std::ceil(compact_pt_.y * ppp)));
      if (compact_.y <= size.y + 0.5f) compact_.y = std::min(compact_.y, size.y);
      return compact_;
    }
  }
  compact_shape_ = shape;
  compact_pt_ = ImVec2(0, 0);
  // The least value in [lo, hi] that keeps side_at() >= want (it grows with either extent), to
  // within 2 points.
  auto least = [](double lo, double hi, double want, auto&& side_at) {
    for (int i = 0; i < 12 && hi - lo > 2; ++i) {
      const double mid = 0.5 * (lo + hi);
      (side_at(mid) >= want ? hi : lo) = mid;
    }
    return hi;
  };
  double want = 0.98 * whole;
  if (whole < least_side) {
    const double sw = std::max(40.0, w - ImGui::GetStyle().ScrollbarSize / ppp);  // scrolled
    if (map_side(grid_figure_, sw, 20 * h) >= least_side) {
      h = least(h, 20 * h, least_side, [&](double y) { return map_side(grid_figure_, sw, y); });
      w = sw;
      want = 0.98 * map_side(grid_figure_, w, h);
    }
  }
  if (want < 2 * font_pt) return compact_;
  const double h2 = least(40.0, h, want, [&](double y) { return map_side(grid_figure_, w, y); });
  const double w2 = least(72.0, w, want, [&](double x) { return map_side(grid_figure_, x, h2); });
  compact_pt_ = ImVec2(static_cast<float>(w2), static_cast<float>(h2));
  compact_ = ImVec2(std::min(size.x, static_cast<float>(std::ceil(w2 * ppp))),
                    static_cast<float>(std::ceil(h2 * ppp)));
  if (compact_.y <= size.y + 0.5f) compact_.y = std::min(compact_.y, size.y);
  return compact_;
}

void ImageAttentionPanel::draw_grid(ImFont* font, ImVec2 size) {
  for (auto& r : rows_) r->first_cell.clear();
  if (grid_figure_.panels.empty()) {
    ImGui::TextDisabled("%s", grid_error_.empty() ? "No maps to show yet." : grid_error_.c_str());
    return;
  }
  grid_plot_.draw(grid_figure_, size, font);
  const bool clicked = ImGui::IsItemClicked();
  const fig::FigureLayout& layout = grid_plot_.layout();
  if (layout.panels.size() != cells_.size()) return;
  // A panel's plot area on screen.
  auto panel_rect = [&](size_t k) {
    const fig::PanelLayout& L = layout.panels[k];
    const int panel = static_cast<int>(k);
    const ImVec2 a = grid_plot_.to_screen(panel, L.xmin, L.ymin),
                 b = grid_plot_.to_screen(panel, L.xmax, L.ymax);
    return std::make_pair(ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
                          ImVec2(std::max(a.x, b.x), std::max(a.y, b.y)));
  };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (size_t k = 0; k < cells_.size(); ++k) {
    const figures::ImageAttentionCell& c = cells_[k];
    if (c.column < 0) continue;
    Row& row = *rows_[static_cast<size_t>(c.row)];
    const auto [p0, p1] = panel_rect(k);
    if (c.column == 0 && row.first_cell.empty()) row.first_cell = {p0.x, p0.y, p1.x, p1.y};
    if (selected_.row == c.row && selected_.layer == c.layer && selected_.head == c.column)
      dl->AddRect(p0, p1, colors::kHover, 0, 0, 2.0f);
  }
  const auto hit = grid_plot_.hover_cell(grid_figure_);
  if (!hit || hit->panel < 0 || static_cast<size_t>(hit->panel) >= cells_.size()) return;
  const figures::ImageAttentionCell& c = cells_[static_cast<size_t>(hit->panel)];
  if (c.column == figures::ImageAttentionCell::kNoCell) return;
  const Row& row = *rows_[static_cast<size_t>(c.row)];
  const std::string label = row_label(static_cast<size_t>(c.row));
  if (c.column < 0) {  // the picture
    ImGui::SetTooltip("%s, test image %lld (%s): pixel (%d, %d) = %.3f", label.c_str(),
                      static_cast<long long>(row.probe.image.index),
                      row.probe.image.label_name.c_str(), hit->row, hit->col, hit->value);
    return;
  }
  if (hit->heatmap != 1) return;  // the overlay is the panel's second heatmap
  dl->AddRect(hit->min, hit->max, colors::kHover);
  const int tokens = row.grid * row.grid + 1;
  ImGui::SetTooltip("%s, layer %d %s: CLS -> patch (%d, %d) = %.4f\nclick: full %dx%d map",
                    label.c_str(), c.layer, head_name(c.column, c.heads).c_str(), hit->row,
                    hit->col, hit->value, tokens, tokens);
  if (clicked) selected_ = {c.row, c.layer, c.column};
}

// The full S x S map of the selected cell (a head's weights, or their mean), with a colorbar.
void ImageAttentionPanel::draw_full_map(ImFont* font) {
  full_map_size_ = 0;
  if (selected_.row < 0 || selected_.row >= static_cast<int>(rows_.size())) return;
  const Row& row = *rows_[static_cast<size_t>(selected_.row)];
  const ImageProbe& p = row.probe;
  const uint64_t key = mix(
      mix(mix(mix(row.probe_key, static_cast<uint64_t>(selected_.layer * 1024 + selected_.head)),
              static_cast<uint64_t>(selected_.row)),
          static_cast<uint64_t>(colormap_)),
      row_label(static_cast<size_t>(selected_.row)));
  if (key != full_key_) {
    std::vector<std::vector<float>> maps;
    int size = 0;
    for (const AttentionMap& m : p.maps)
      if (m.layer == selected_.layer && (selected_.head == p.heads || m.head == selected_.head))
        maps.push_back(m.weights), size = m.size;
    full_weights_ = maps.empty() ? std::vector<float>{} : elementwise_mean(maps);
    full_map_size_ = size;
    full_grid_ = row.grid;
    char title[200];
    std::snprintf(title, sizeof title, "%s, layer %d, %s: full %dx%d map (row = query)",
                  row_label(static_cast<size_t>(selected_.row)).c_str(), selected_.layer,
                  head_name(selected_.head, p.heads).c_str(), size, size);
    full_title_ = title;
    try {
      full_figure_ =
          figures::full_attention_map_figure(full_title_, full_weights_, size, overlay_colormap());
    } catch (const std::exception& e) {
      full_figure_ = fig::Figure{};
      full_title_ = e.what();
    }
    full_key_ = key;
  }
  if (ImGui::SmallButton("close")) {
    selected_ = {};
    return;
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(full_figure_.panels.empty());
  if (ImGui::SmallButton("Export map...")) request_figure_export(full_figure_, row.live);
  ImGui::EndDisabled();
  if (full_figure_.panels.empty()) {
    ImGui::TextDisabled("%s", full_title_.c_str());
    return;
  }
  const int size = full_figure_.panels[0].heatmaps[0].rows;
  full_map_size_ = size;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  full_plot_.draw(full_figure_, ImVec2(avail.x, std::max(60.0f, avail.y)), font);
  if (const auto c = full_plot_.hover_cell(full_figure_)) {
    ImGui::GetWindowDrawList()->AddRect(c->min, c->max, colors::kHover);
    ImGui::SetTooltip("query %d %s -> key %d %s = %.4f", c->row,
                      token_name(c->row, full_grid_).c_str(), c->col,
                      token_name(c->col, full_grid_).c_str(), c->value);
  }
}

void ImageAttentionPanel::make_report(const Snapshot& snap) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row* r = rows_[i].get();
    nlohmann::json maps = nlohmann::json::array();
    for (size_t k = 0; k < r->cls.size(); ++k)
      if (!r->cls[k].empty())
        maps.push_back({{"layer", static_cast<int>(k) / r->columns()},
                        {"column", static_cast<int>(k) % r->columns()},
                        {"mean", static_cast<int>(k) % r->columns() == r->probe.heads},
                        {"cls_patch_weights", r->cls[k]}});
    const auto& probs = r->probe.probabilities;
    int panels = 0;
    for (const auto& c : cells_) panels += c.row == static_cast<int>(i);
    rows.push_back({{"source", r->source},
                    {"label", row_label(i)},
                    {"live", r->live},
                    {"error", r->error},
                    {"note", r->note},
                    {"image_index", r->probe.image.index},
                    {"image_label", r->probe.image.label},
                    {"layers", r->probe.layers},
                    {"heads", r->probe.heads},
                    {"step", r->probe.step},
                    {"grid", r->grid},
                    {"first_cell", r->first_cell},
                    {"figure_panels", panels},
                    {"predicted",
                     probs.empty() ? -1
                                   : static_cast<int>(std::max_element(probs.begin(), probs.end()) -
                                                      probs.begin())},
                    {"maps", maps}});
  }
  const bool full = selected_.row >= 0;
  report_ = {
      {"drawn", true},
      {"image_index", index_},
      {"live_image_index", snap.probe_image.index},
      {"layer_choice", layer_choice_},
      {"colormap", kColormapNames[colormap_]},
      {"alpha", alpha_},
      {"shared_scale", shared_scale_},
      {"show_mean", show_mean_},
      {"figure",
       {{"name", grid_figure_.name},
        {"title", grid_figure_.title},
        {"rows", grid_figure_.rows},
        {"cols", grid_figure_.cols},
        {"panels", grid_figure_.panels.size()},
        {"layers_per_row", variant_ < variants_.size() ? variants_[variant_].layers_per_row : 0},
        {"layout_cols", grid_plot_.layout().cols},
        {"error", grid_error_}}},
      {"full_map",
       {{"row", selected_.row},
        {"layer", selected_.layer},
        {"head", selected_.head},
        {"size", full ? full_map_size_ : 0}}},
      {"full_map_title", full ? full_title_ : ""},
      {"rows", rows}};
}

void ImageAttentionPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  Trainer& trainer = frame.trainer;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  draw_toolbar(snap, trainer);

  // The shown image: a new pick goes to the trainer and every saved run; otherwise follow the
  // live run's image (its task default, or a pick the trainer kept across a reset).
  if (pending_index_ >= 0) {
    index_ = pending_index_;
    pending_index_ = -1;
    if (!snap.probe_image.empty()) trainer.request_probe_image(index_);
    probe_saved_rows();
  } else if (index_ < 0 && (!snap.probe_image.empty() || rows_.size() > 1)) {
    index_ = snap.probe_image.empty() ? 0 : snap.probe_image.index;
    probe_saved_rows();
  }
  sync_live_row(snap, trainer.config().task.name == "fashion-mnist");
  live_mechanisms_.clear();
  for (size_t l = 0; l < snap.mechanisms.size(); ++l)
    if (l == 0 || snap.mechanisms[l] != snap.mechanisms[l - 1])
      live_mechanisms_ += (live_mechanisms_.empty() ? "" : "/") + snap.mechanisms[l];

  // The figure is rebuilt when a row's maps, its state or a control changes.
  uint64_t key = mix(static_cast<uint64_t>(colormap_) + 1, shared_scale_ ? 7 : 3);
  key = mix(mix(key, static_cast<uint64_t>(layer_choice_ + 8)), show_mean_ ? 5 : 9);
  uint32_t alpha_bits;
  std::memcpy(&alpha_bits, &alpha_, sizeof alpha_bits);
  key = mix(mix(key, alpha_bits), live_mechanisms_);
  for (auto& r : rows_) {
    if (r->cls_key != r->probe_key) compute(*r);
    key = mix(mix(mix(key, r->probe_key), r->error), r->source);
  }
  if (key != grid_key_) {
    rebuild_grid();
    grid_key_ = key;
  }

  // Rows the grid cannot show say why (errors; the live run before its first probe).
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = *rows_[i];
    if (!r.error.empty())
      ImGui::TextColored(ImVec4(1, 0.43f, 0.43f, 1), "%s: %s", r.source.c_str(), r.error.c_str());
    else if (!r.note.empty())
      ImGui::TextDisabled("%s: %s", r.source.c_str(), r.note.c_str());
  }

  // The full map goes beside the grid (a square of the height, at most 45% of the width) or
  // under it (at most 300 px, half the height): where the grid's maps stay readable, else beside
  // in a wide window and under in a tall one.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool full = selected_.row >= 0;
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float full_w = std::floor(std::min(avail.y + 90, avail.x * 0.45f));
  const float full_h = std::min(kFullMapHeight, 0.5f * avail.y);
  const ImVec2 beside_area(std::max(60.0f, avail.x - full_w - gap), std::max(60.0f, avail.y));
  const ImVec2 under_area(std::max(60.0f, avail.x), std::max(60.0f, avail.y - full_h - gap));
  const ImVec2 whole(std::max(60.0f, avail.x), std::max(60.0f, avail.y));
  uint64_t place =
      mix(mix(grid_key_, static_cast<uint64_t>(avail.x * 4)), static_cast<uint64_t>(avail.y * 4));
  place = mix(mix(place, static_cast<uint64_t>(font->FontSize * 64)), full ? 3 : 5);
  if (place != place_key_) {
    size_t pick = 0;
    if (full) {
      const auto [ib, sb] = best_variant(beside_area, font);
      const auto [iu, su] = best_variant(under_area, font);
      // Where both leave the maps readable, or neither does (then the grid scrolls), the
      // window's shape decides unless one place gives clearly larger maps.
      const double least = kMinMapFonts * fig::Page{}.font_pt;
      const bool wide = avail.x > 1.3f * avail.y;
      if ((sb >= least) != (su >= least))
        place_beside_ = sb >= least;
      else if (sb < least)
        place_beside_ = wide;
      else
        place_beside_ = sb > 1.1 * su || (sb >= su / 1.1 && wide);
      pick = place_beside_ ? ib : iu;
    } else {
      pick = best_variant(whole, font).first;
    }
    if (pick != variant_) use_variant(pick);
    place_key_ = place;
  }
  const bool beside = full && place_beside_;
  const ImVec2 area = !full ? whole : beside ? beside_area : under_area;
  // The grid's maps at their size; the full map takes what they leave beside or under them.
  const ImVec2 maps = compact_size(area, font);
  // A figure taller than its area scrolls (vertically only).
  const bool scrolls = maps.y > area.y + 0.5f;
  const float bar = scrolls ? ImGui::GetStyle().ScrollbarSize : 0.0f;
  const ImVec2 grid_size(beside ? std::min(area.x, maps.x + bar) : area.x,
                         full && !beside ? std::min(area.y, maps.y) : area.y);
  constexpr ImGuiWindowFlags kFlags =
      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  if (ImGui::BeginChild("##image-grid", grid_size, false, scrolls ? 0 : kFlags))
    draw_grid(font, maps);
  ImGui::EndChild();
  if (beside) ImGui::SameLine();
  if (full && ImGui::BeginChild("##full-map", ImVec2(0, 0), false, kFlags)) draw_full_map(font);
  if (full) ImGui::EndChild();
  make_report(snap);
}

std::vector<std::string> ImageAttentionPanel::figures(const Snapshot& snap) const {
  for (const figures::FigureSpec& spec : figures::figures_for(snap))
    if (spec.name == "image-attention") return {spec.name};
  return {};
}

}  // namespace attn::gui
