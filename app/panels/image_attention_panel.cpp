#include "panels/image_attention_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "app/figures/figures.h"
#include "core/training/trainer.h"
#include "gui/export_dialog.h"
#include "gui/plot_draw.h"
#include "gui/widgets.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

constexpr float kGap = 6.0f;
constexpr float kFullMapHeight = 280.0f;
constexpr float kColorbarWidth = 14.0f;
constexpr const char* kColormapNames[] = {"hot", "viridis"};

ImTextureID texture_id(const render::Texture2D& t) {
  return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(t.id()));
}

uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2))) * 0xBF58476D1CE4E5B9ull;
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

}  // namespace

struct ImageAttentionPanel::Row {
  bool live = false;
  std::string source;  // "live" or the run directory
  std::unique_ptr<SavedImageRun> run;
  std::string error;
  std::string note;  // e.g. the live run has not probed yet
  ImageProbe probe;
  uint64_t probe_key = 0;  // changes whenever `probe` does
  render::Texture2D picture;
  // Per layer: heads overlays, then the head mean. cls[k] holds overlay k's patch weights.
  std::vector<render::Texture2D> overlays;
  std::vector<std::vector<float>> cls;
  std::vector<float> vmax;
  int grid = 0;
  std::vector<float> first_cell;  // screen rect of the first shown layer's head 0 (report)
  int columns() const { return probe.heads + 1; }
  const std::vector<float>* overlay(int layer, int column) const {
    const size_t k = static_cast<size_t>(layer) * columns() + column;
    return k < cls.size() && !cls[k].empty() ? &cls[k] : nullptr;
  }
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

// The picture (grey) and every overlay of a row: CLS rows per head and their mean per layer.
void ImageAttentionPanel::upload(Row& row) {
  const ImageProbe& p = row.probe;
  if (!p.image.empty())
    row.picture.upload_matrix(p.image.pixels.data(), p.image.rows, p.image.cols,
                              render::Colormap::Gray, 0.0f, 1.0f);
  const int cols = row.columns();
  row.cls.assign(static_cast<size_t>(p.layers) * cols, {});
  row.grid = 0;
  for (int l = 0; l < p.layers; ++l) {
    std::vector<std::vector<float>> heads;
    for (const AttentionMap& m : p.maps)
      if (m.layer == l && m.head < p.heads) {
        row.cls[static_cast<size_t>(l) * cols + m.head] = cls_patch_weights(m);
        heads.push_back(row.cls[static_cast<size_t>(l) * cols + m.head]);
      }
    if (!heads.empty()) row.cls[static_cast<size_t>(l) * cols + p.heads] = elementwise_mean(heads);
  }
  for (const auto& c : row.cls)
    if (!c.empty()) row.grid = grid_side(c.size());
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
  {
    // The live run's maps with the settings on screen (saved rows are not in the figure).
    figures::FigureOptions export_options;
    export_options.layer = layer_choice_ < 0 ? figures::kAllLayers : layer_choice_;
    export_options.overlay_colormap = overlay_colormap();
    export_options.overlay_alpha = alpha_;
    export_options.scale =
        shared_scale_ ? figures::AttentionScale::Shared : figures::AttentionScale::PerMap;
    export_options.show_mean = show_mean_;
    gui::export_button("image-attention", snap, export_options);
  }

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

void ImageAttentionPanel::draw_grid(ImFont* font) {
  const float fs = font->FontSize;
  int max_heads = 0, block_rows = 0, headers = 0;
  for (const auto& r : rows_) {
    max_heads = std::max(max_heads, r->probe.heads);
    ++headers;
    if (r->error.empty()) block_rows += layer_choice_ < 0 ? r->probe.layers : 1;
  }
  const int cols = 1 + max_heads + (show_mean_ ? 1 : 0);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float left = font->CalcTextSizeA(fs, FLT_MAX, 0, "L00").x + 6;
  const float title_h = fs + 4;
  const float colorbar_w = shared_scale_ ? kColorbarWidth + 44 : 80;  // or the "own 0..max" note
  const float side = std::floor(std::max(
      16.0f, std::min((avail.x - left - colorbar_w) / cols - kGap,
                      (avail.y - title_h - headers * (fs + 4)) / std::max(1, block_rows) - kGap)));
  ImGui::InvisibleButton("##cells", ImVec2(std::max(1.0f, avail.x), std::max(1.0f, avail.y)));
  const bool hovered = ImGui::IsItemHovered();
  const bool clicked = ImGui::IsItemClicked();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + avail.x, origin.y + avail.y), true);

  // Column titles.
  auto column_x = [&](int c) { return origin.x + left + c * (side + kGap); };
  const bool short_titles = font->CalcTextSizeA(fs, FLT_MAX, 0, "head 00").x > side;
  dl->AddText(font, fs, ImVec2(column_x(0), origin.y), colors::kText,
              short_titles ? "img" : "image");
  for (int h = 0; h < max_heads; ++h) {
    char t[16];
    std::snprintf(t, sizeof t, short_titles ? "h%d" : "head %d", h);
    dl->AddText(font, fs, ImVec2(column_x(1 + h), origin.y), colors::kText, t);
  }
  if (show_mean_)
    dl->AddText(font, fs, ImVec2(column_x(1 + max_heads), origin.y), colors::kText, "mean");

  const ImU32 tint = IM_COL32(255, 255, 255, static_cast<int>(std::lround(alpha_ * 255)));
  float y = origin.y + title_h;
  for (size_t ri = 0; ri < rows_.size(); ++ri) {
    Row& row = *rows_[ri];
    std::string title = row.live ? "live" : row.source;
    if (row.error.empty()) {
      if (row.run)
        title += ": " + row.run->description();
      else
        title += ": " + live_mechanisms_ + ", step " + std::to_string(row.probe.step);
      const std::string pred = prediction_text(row.probe);
      if (!pred.empty()) title += ", " + pred;
      if (!row.note.empty()) title += " (" + row.note + ")";
    }
    dl->AddText(font, fs, ImVec2(origin.x, y),
                row.error.empty() ? colors::kText : colors::kErrorText,
                row.error.empty() ? title.c_str() : (title + ": " + row.error).c_str());
    y += fs + 4;
    if (!row.error.empty() || row.grid == 0) continue;
    const int first = layer_choice_ < 0 ? 0 : layer_choice_;
    const int last = layer_choice_ < 0 ? row.probe.layers : std::min(row.probe.layers, first + 1);
    for (int l = first; l < last; ++l, y += side + kGap) {
      char lt[16];
      std::snprintf(lt, sizeof lt, "L%d", l);
      dl->AddText(font, fs, ImVec2(origin.x, y), colors::kDimText, lt);
      const ImVec2 img0(column_x(0), y), img1(img0.x + side, y + side);
      dl->AddImage(texture_id(row.picture), img0, img1);
      for (int c = 0; c < row.columns(); ++c) {
        const bool mean = c == row.probe.heads;
        if (mean && !show_mean_) continue;
        const std::vector<float>* w = row.overlay(l, c);
        const size_t k = static_cast<size_t>(l) * row.columns() + c;
        if (!w || k >= row.overlays.size() || !row.overlays[k].valid()) continue;
        const ImVec2 p0(column_x(mean ? 1 + max_heads : 1 + c), y);
        const ImVec2 p1(p0.x + side, p0.y + side);
        dl->AddImage(texture_id(row.picture), p0, p1);
        dl->AddImage(texture_id(row.overlays[k]), p0, p1, ImVec2(0, 0), ImVec2(1, 1), tint);
        if (l == first && c == 0) row.first_cell = {p0.x, p0.y, p1.x, p1.y};
        const bool selected =
            selected_.row == static_cast<int>(ri) && selected_.layer == l && selected_.head == c;
        if (selected) dl->AddRect(p0, p1, colors::kHover, 0, 0, 2.0f);
        if (hovered && mouse.x >= p0.x && mouse.x < p1.x && mouse.y >= p0.y && mouse.y < p1.y) {
          const float cell = side / row.grid;
          const int r = std::clamp(static_cast<int>((mouse.y - p0.y) / cell), 0, row.grid - 1);
          const int cc = std::clamp(static_cast<int>((mouse.x - p0.x) / cell), 0, row.grid - 1);
          const ImVec2 c0(p0.x + cc * cell, p0.y + r * cell);
          dl->AddRect(c0, ImVec2(c0.x + cell, c0.y + cell), colors::kHover);
          char head[24];
          if (mean)
            std::snprintf(head, sizeof head, "head mean");
          else
            std::snprintf(head, sizeof head, "head %d", c);
          ImGui::SetTooltip("%s, layer %d %s: CLS -> patch (%d, %d) = %.4f\nclick: full %dx%d map",
                            row.source.c_str(), l, head, r, cc, (*w)[r * row.grid + cc],
                            row.grid * row.grid + 1, row.grid * row.grid + 1);
          if (clicked) selected_ = {static_cast<int>(ri), l, c};
        }
      }
    }
  }
  if (shared_scale_ && colorbar_.valid()) {
    float vmax = 0;
    for (const auto& r : rows_)
      for (float v : r->vmax) vmax = std::max(vmax, v);
    const ImVec2 b0(column_x(cols) + 4, origin.y + title_h);
    const ImVec2 b1(b0.x + kColorbarWidth, std::min(origin.y + avail.y, b0.y + 4 * side));
    draw_colorbar(dl, b0, b1, colorbar_.id(), vmax, 5, font, colors::kText);
  } else if (!shared_scale_) {  // say it where the colorbar would be: colours do not compare
    const ImVec2 at(column_x(cols) + 4, origin.y + title_h);
    dl->AddText(font, font->FontSize, at, colors::kText, "each map:");
    dl->AddText(font, font->FontSize, ImVec2(at.x, at.y + font->FontSize + 2), colors::kText,
                "own 0..max");
  }
  dl->PopClipRect();
}

// The full S x S map of the selected cell (a head's weights, or their mean), with a colorbar.
void ImageAttentionPanel::draw_full_map(ImFont* font) {
  if (selected_.row < 0 || selected_.row >= static_cast<int>(rows_.size())) return;
  full_map_size_ = 0;
  const Row& row = *rows_[selected_.row];
  const ImageProbe& p = row.probe;
  std::vector<std::vector<float>> maps;
  int size = 0;
  for (const AttentionMap& m : p.maps)
    if (m.layer == selected_.layer && (selected_.head == p.heads || m.head == selected_.head))
      maps.push_back(m.weights), size = m.size;
  if (maps.empty() || size <= 0) return;
  const std::vector<float> weights = elementwise_mean(maps);
  full_map_size_ = size;
  // The grid's colormap: the zoomed map must read like the cell that was clicked.
  const uint64_t key = mix(mix(mix(row.probe_key, selected_.layer * 1024 + selected_.head),
                               static_cast<uint64_t>(selected_.row)),
                           static_cast<uint64_t>(colormap_));
  if (key != full_map_key_ || !full_map_.valid()) {
    full_map_vmax_ = std::max(1e-6f, *std::max_element(weights.begin(), weights.end()));
    full_map_.upload_matrix(weights.data(), size, size, overlay_colormap(), 0.0f, full_map_vmax_);
    full_map_key_ = key;
  }
  const float fs = font->FontSize;
  char title[160];
  if (selected_.head == p.heads)
    std::snprintf(title, sizeof title, "%s, layer %d, head mean: full %dx%d map (row = query)",
                  row.source.c_str(), selected_.layer, size, size);
  else
    std::snprintf(title, sizeof title, "%s, layer %d, head %d: full %dx%d map (row = query)",
                  row.source.c_str(), selected_.layer, selected_.head, size, size);
  if (ImGui::SmallButton("close")) {
    selected_ = {};
    return;
  }
  ImGui::SameLine();
  ImGui::TextWrapped("%s", title);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float side = std::floor(std::max(16.0f, std::min(avail.y - fs, avail.x - 80)));
  ImGui::InvisibleButton("##full", ImVec2(side, side));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p1(origin.x + side, origin.y + side);
  dl->AddImage(texture_id(full_map_), origin, p1);
  if (ImGui::IsItemHovered()) {
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const float cell = side / size;
    const int i = std::clamp(static_cast<int>((mouse.y - origin.y) / cell), 0, size - 1);
    const int j = std::clamp(static_cast<int>((mouse.x - origin.x) / cell), 0, size - 1);
    const int g = row.grid;
    auto name = [g](int t) {
      return t == 0 || g == 0 ? std::string("CLS")
                              : "patch (" + std::to_string((t - 1) / g) + ", " +
                                    std::to_string((t - 1) % g) + ")";
    };
    ImGui::SetTooltip("query %d %s -> key %d %s = %.4f", i, name(i).c_str(), j, name(j).c_str(),
                      weights[static_cast<size_t>(i) * size + j]);
  }
  draw_colorbar(dl, ImVec2(p1.x + 8, origin.y), ImVec2(p1.x + 8 + kColorbarWidth, p1.y),
                colorbar_.id(), full_map_vmax_, 6, font, colors::kText);
}

void ImageAttentionPanel::make_report(const Snapshot& snap) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : rows_) {
    nlohmann::json maps = nlohmann::json::array();
    for (size_t k = 0; k < r->cls.size(); ++k)
      if (!r->cls[k].empty())
        maps.push_back({{"layer", static_cast<int>(k) / r->columns()},
                        {"column", static_cast<int>(k) % r->columns()},
                        {"mean", static_cast<int>(k) % r->columns() == r->probe.heads},
                        {"cls_patch_weights", r->cls[k]}});
    const auto& probs = r->probe.probabilities;
    rows.push_back({{"source", r->source},
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
                    {"predicted",
                     probs.empty() ? -1
                                   : static_cast<int>(std::max_element(probs.begin(), probs.end()) -
                                                      probs.begin())},
                    {"maps", maps}});
  }
  report_ = {{"drawn", true},
             {"image_index", index_},
             {"live_image_index", snap.probe_image.index},
             {"layer_choice", layer_choice_},
             {"colormap", kColormapNames[colormap_]},
             {"alpha", alpha_},
             {"shared_scale", shared_scale_},
             {"full_map",
              {{"row", selected_.row},
               {"layer", selected_.layer},
               {"head", selected_.head},
               {"size", selected_.row >= 0 ? full_map_size_ : 0}}},
             {"rows", rows}};
}

void ImageAttentionPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  Trainer& trainer = frame.trainer;
  ImFont* small_font = frame.small_font;
  ImFont* font = small_font ? small_font : ImGui::GetFont();
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

  // Overlays: re-upload every row when any row's maps or the display settings change (the
  // textures are a few grid x grid patches each: cheap, and a shared scale couples the rows).
  uint64_t key = mix(static_cast<uint64_t>(colormap_) + 1, shared_scale_ ? 7 : 3);
  for (const auto& r : rows_) key = mix(key, r->probe_key);
  if (key != settings_key_) {
    for (auto& r : rows_) upload(*r);
    float shared = 0;
    for (const auto& r : rows_)
      for (const auto& c : r->cls)
        for (float v : c) shared = std::max(shared, v);
    const render::Colormap map = overlay_colormap();
    for (auto& r : rows_) {
      r->overlays.resize(r->cls.size());
      r->vmax.assign(r->cls.size(), 0.0f);
      for (size_t k = 0; k < r->cls.size(); ++k) {
        const auto& c = r->cls[k];
        if (c.empty() || r->grid == 0) continue;
        const float own = *std::max_element(c.begin(), c.end());
        r->vmax[k] = shared_scale_ ? shared : own;
        r->overlays[k].upload_matrix(c.data(), r->grid, r->grid, map, 0.0f,
                                     std::max(1e-6f, r->vmax[k]));
      }
    }
    upload_colorbar(colorbar_, map);
    settings_key_ = key;
  }

  // The full map goes beside the grid in a wide window, under it in a tall one.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool full = selected_.row >= 0;
  const bool beside = full && avail.x > 1.3f * avail.y;
  const float full_w = beside ? std::floor(std::min(avail.y + 90, avail.x * 0.45f)) : 0.0f;
  const float full_h = full && !beside ? kFullMapHeight : 0.0f;
  constexpr ImGuiWindowFlags kFlags =
      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  const ImVec2 grid_size(beside ? avail.x - full_w : 0.0f, std::max(60.0f, avail.y - full_h));
  if (ImGui::BeginChild("##image-grid", grid_size, false, kFlags)) draw_grid(font);
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
