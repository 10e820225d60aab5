#include "app/panels/attention/image_attention_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/palette.h"
#include "app/gui/window/widgets.h"
#include "core/training/trainer.h"

namespace attn::gui {
namespace {

constexpr float kFullMapHeight = 300.0f;  // under the grid: at most this (or half the height)
constexpr double kMinMapFonts = 3.0;      // the grid's maps: at least this many font sizes wide

uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2))) * 0xBF58476D1CE4E5B9ull;
}

// The screen size (x, y) and the font size, for the layout caches' keys.
uint64_t size_key(uint64_t h, ImVec2 size, ImFont* font) {
  return mix(mix(mix(h, static_cast<uint64_t>(size.x * 4)), static_cast<uint64_t>(size.y * 4)),
             static_cast<uint64_t>(font->FontSize * 64));
}

}  // namespace

// The image: class and index within the class (or a raw test index), and the Show button.
void ImageAttentionPanel::draw_picker() {
  const auto& names = fashion_mnist_class_names();
  ImageAttentionModel::Pick& pick = model_.pick;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Image");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(130);
  if (ImGui::BeginCombo("##class", pick.label < 0 ? "any class" : names[pick.label].c_str())) {
    if (ImGui::Selectable("any class", pick.label < 0)) pick = {-1, 0};
    for (int k = 0; k < static_cast<int>(names.size()); ++k)
      if (ImGui::Selectable(names[k].c_str(), pick.label == k)) pick = {k, 0};
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::InputInt(pick.label < 0 ? "test index" : "nth of class", &pick.nth);
  pick.nth = std::max(0, pick.nth);
  ImGui::SameLine();
  if (ImGui::Button("Show")) model_.show_pick();
  ImGui::SameLine();
  const std::string shown = model_.image_text();
  if (!shown.empty()) ImGui::TextDisabled("%s", shown.c_str());
  if (!model_.pick_error().empty())
    ImGui::TextColored(ImVec4(1, 0.43f, 0.43f, 1), "%s", model_.pick_error().c_str());
}

// Display: layer, overlay colormap, alpha, scale, head mean, and Export.
void ImageAttentionPanel::draw_toolbar() {
  ImageAttentionModel::Controls& c = model_.controls;
  layer_combo("##layer", &c.layer, model_.layers(), 110);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::Combo("##colormap", &c.colormap, ImageAttentionModel::kColormapNames, 2);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(100);
  ImGui::SliderFloat("alpha", &c.alpha, 0.0f, 1.0f, "%.2f");
  ImGui::SameLine();
  ImGui::Checkbox("shared scale", &c.shared_scale);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Off: each map spans 0..its own max. On: one 0..max for all shown maps.");
  ImGui::SameLine();
  ImGui::Checkbox("head mean", &c.show_mean);
  ImGui::SameLine();
  // The grid as on screen: every row, with the controls above applied.
  const bool empty = model_.grid().panels.empty();
  ImGui::BeginDisabled(empty);
  if (ImGui::SmallButton("Export...")) request_figure_export(model_.grid(), model_.grid_has_live());
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(empty ? "No maps to export yet." : "Export the grid as shown (every row).");
}

// Comparison runs: the field, Compare run, and an "x" per saved row.
void ImageAttentionPanel::draw_runs() {
  ImGui::SetNextItemWidth(260);
  const bool entered = ImGui::InputTextWithHint("##run", "runs/fmnist_pseudo", model_.run_field(),
                                                ImageAttentionModel::kRunFieldCapacity,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button("Compare run") || entered) model_.add_typed_run();
  for (size_t i = 1; i < model_.row_count(); ++i) {
    ImGui::PushID(static_cast<int>(i));
    ImGui::SameLine();
    const bool remove = ImGui::SmallButton(("x " + model_.row(i).source).c_str());
    ImGui::PopID();
    if (remove) {
      model_.remove_run(i);
      break;
    }
  }
}

// Rows the grid cannot show say why (errors; the live run before its first probe).
void ImageAttentionPanel::draw_row_notes() {
  for (size_t i = 0; i < model_.row_count(); ++i) {
    const ImageAttentionModel::Row& r = model_.row(i);
    if (!r.error.empty())
      ImGui::TextColored(ImVec4(1, 0.43f, 0.43f, 1), "%s: %s", r.source.c_str(), r.error.c_str());
    else if (!r.note.empty())
      ImGui::TextDisabled("%s: %s", r.source.c_str(), r.note.c_str());
  }
}

// How well variant i fits a page of width x height points: its maps' side, halved where the
// layout wraps its rows in the middle of a layer's block (hard to read).
double ImageAttentionPanel::variant_score(size_t i, double width_pt, double height_pt) {
  const ImageAttentionModel::Variant& v = model_.variants()[i];
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
  for (size_t i = 0; i < model_.variants().size(); ++i) {
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
  const fig::Figure& grid = model_.grid();
  const uint64_t key = size_key(mix(model_.grid_key(), model_.variant()), size, font);
  if (key == compact_key_) return compact_;
  compact_key_ = key;
  compact_ = size;
  const double font_pt = fig::Page{}.font_pt;
  const double ppp = std::max(0.5, static_cast<double>(font->FontSize) / font_pt);
  double w = std::max(40.0, size.x / ppp), h = std::max(30.0, size.y / ppp);
  const double least_side = kMinMapFonts * font_pt;
  const double whole = map_side(grid, w, h);
  auto to_pixels = [&](ImVec2 pt) {
    ImVec2 px(std::min(size.x, static_cast<float>(std::ceil(pt.x * ppp))),
              static_cast<float>(std::ceil(pt.y * ppp)));
    if (px.y <= size.y + 0.5f) px.y = std::min(px.y, size.y);
    return px;
  };
  // New maps in the same grid (every probe of the live run): the last size still does unless
  // the title or the colorbar's labels grew enough to shrink the maps (by 4%).
  uint64_t shape = size_key(model_.variant(), size, font);
  shape = mix(mix(mix(shape, static_cast<uint64_t>(grid.rows)), static_cast<uint64_t>(grid.cols)),
              grid.panels.size());
  if (shape == compact_shape_ && compact_pt_.x > 0 &&
      map_side(grid, compact_pt_.x, compact_pt_.y) >=
          0.96 * (whole >= least_side ? whole : least_side))
    return compact_ = to_pixels(compact_pt_);
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
    if (map_side(grid, sw, 20 * h) >= least_side) {
      h = least(h, 20 * h, least_side, [&](double y) { return map_side(grid, sw, y); });
      w = sw;
      want = 0.98 * map_side(grid, w, h);
    }
  }
  if (want < 2 * font_pt) return compact_;
  const double h2 = least(40.0, h, want, [&](double y) { return map_side(grid, w, y); });
  const double w2 = least(72.0, w, want, [&](double x) { return map_side(grid, x, h2); });
  compact_pt_ = ImVec2(static_cast<float>(w2), static_cast<float>(h2));
  return compact_ = to_pixels(compact_pt_);
}

void ImageAttentionPanel::draw_grid(ImFont* font, ImVec2 size) {
  const fig::Figure& grid = model_.grid();
  const auto& cells = model_.cells();
  screen_.first_cells.assign(model_.row_count(), {});
  if (grid.panels.empty()) {
    ImGui::TextDisabled(
        "%s", model_.grid_error().empty() ? "No maps to show yet." : model_.grid_error().c_str());
    return;
  }
  grid_plot_.draw(grid, size, font);
  const bool clicked = ImGui::IsItemClicked();
  const fig::FigureLayout& layout = grid_plot_.layout();
  if (layout.panels.size() != cells.size()) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImageAttentionModel::Selection& sel = model_.selection();
  for (size_t k = 0; k < cells.size(); ++k) {
    const figures::ImageAttentionCell& c = cells[k];
    if (c.column < 0) continue;
    // The panel's plot area on screen.
    const fig::PanelLayout& L = layout.panels[k];
    const ImVec2 a = grid_plot_.to_screen(static_cast<int>(k), L.xmin, L.ymin),
                 b = grid_plot_.to_screen(static_cast<int>(k), L.xmax, L.ymax);
    const ImVec2 p0(std::min(a.x, b.x), std::min(a.y, b.y)),
        p1(std::max(a.x, b.x), std::max(a.y, b.y));
    if (c.column == 0 && static_cast<size_t>(c.row) < screen_.first_cells.size() &&
        screen_.first_cells[static_cast<size_t>(c.row)].empty())
      screen_.first_cells[static_cast<size_t>(c.row)] = {p0.x, p0.y, p1.x, p1.y};
    if (sel.row == c.row && sel.layer == c.layer && sel.head == c.column)
      dl->AddRect(p0, p1, colors::kHover, 0, 0, 2.0f);
  }
  const auto hit = grid_plot_.hover_cell(grid);
  if (!hit || hit->panel < 0 || static_cast<size_t>(hit->panel) >= cells.size()) return;
  const figures::ImageAttentionCell& c = cells[static_cast<size_t>(hit->panel)];
  if (c.column == figures::ImageAttentionCell::kNoCell) return;
  if (c.column < 0) {  // the picture
    ImGui::SetTooltip("%s", model_.picture_text(c, hit->row, hit->col, hit->value).c_str());
    return;
  }
  if (hit->heatmap != 1) return;  // the overlay is the panel's second heatmap
  dl->AddRect(hit->min, hit->max, colors::kHover);
  ImGui::SetTooltip("%s", model_.overlay_text(c, hit->row, hit->col, hit->value).c_str());
  if (clicked) model_.select(c);
}

// The full S x S map of the selected cell, with close and Export buttons and a hover readout.
void ImageAttentionPanel::draw_full_map(ImFont* font) {
  if (!model_.has_selection()) return;
  const fig::Figure& full = model_.full_map();
  const bool live = model_.selection_is_live();
  if (ImGui::SmallButton("close")) {
    model_.close_full_map();
    return;
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(full.panels.empty());
  if (ImGui::SmallButton("Export map...")) request_figure_export(full, live);
  ImGui::EndDisabled();
  if (full.panels.empty()) {
    ImGui::TextDisabled("%s", model_.full_title().c_str());
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  full_plot_.draw(full, ImVec2(avail.x, std::max(60.0f, avail.y)), font);
  if (const auto c = full_plot_.hover_cell(full)) {
    ImGui::GetWindowDrawList()->AddRect(c->min, c->max, colors::kHover);
    ImGui::SetTooltip("%s", model_.full_map_text(c->row, c->col, c->value).c_str());
  }
}

// Where the full map goes: beside the grid (a square of the height, at most 45% of the width) or
// under it (at most 300 px, half the height): where the grid's maps stay readable, else beside
// in a wide window and under in a tall one. Picks the grid variant for the place (cached per
// size and grid).
bool ImageAttentionPanel::place_full_beside(ImVec2 avail, ImVec2 beside_area, ImVec2 under_area,
                                            ImVec2 whole, ImFont* font) {
  const bool full = model_.has_selection();
  const uint64_t place = mix(size_key(model_.grid_key(), avail, font), full ? 3 : 5);
  if (place == place_key_) return full && place_beside_;
  place_key_ = place;
  size_t pick = 0;
  if (full) {
    const auto [ib, sb] = best_variant(beside_area, font);
    const auto [iu, su] = best_variant(under_area, font);
    // Where both leave the maps readable, or neither does (then the grid scrolls), the window's
    // shape decides unless one place gives clearly larger maps.
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
  if (pick != model_.variant()) model_.use_variant(pick);
  return full && place_beside_;
}

void ImageAttentionPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  Trainer& trainer = frame.trainer;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  if (!snap.probe_image.empty()) model_.set_data_dir(trainer.config().task.data_dir);
  draw_picker();
  draw_toolbar();
  draw_runs();
  const int64_t ask = model_.refresh(snap, trainer.config().task.name == "fashion-mnist");
  if (ask >= 0) trainer.request_probe_image(ask);
  draw_row_notes();

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool full = model_.has_selection();
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float full_w = std::floor(std::min(avail.y + 90, avail.x * 0.45f));
  const float full_h = std::min(kFullMapHeight, 0.5f * avail.y);
  const ImVec2 beside_area(std::max(60.0f, avail.x - full_w - gap), std::max(60.0f, avail.y));
  const ImVec2 under_area(std::max(60.0f, avail.x), std::max(60.0f, avail.y - full_h - gap));
  const ImVec2 whole(std::max(60.0f, avail.x), std::max(60.0f, avail.y));
  const bool beside = place_full_beside(avail, beside_area, under_area, whole, font);
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
  screen_.layout_cols = grid_plot_.layout().cols;
  model_.make_report(snap, screen_);
}

}  // namespace attn::gui
