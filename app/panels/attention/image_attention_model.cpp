#include "app/panels/attention/image_attention_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>

#include "app/figures/catalog/figures.h"

namespace attn::gui {
namespace {

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

int predicted(const std::vector<float>& probs) {
  return probs.empty()
             ? -1
             : static_cast<int>(std::max_element(probs.begin(), probs.end()) - probs.begin());
}

std::string prediction_text(const ImageProbe& p) {
  const int k = predicted(p.probabilities);
  if (k < 0) return "";
  const auto& names = fashion_mnist_class_names();
  char text[96];
  std::snprintf(text, sizeof text, "predicts %s (%.2f)",
                k < static_cast<int>(names.size()) ? names[k].c_str() : "?",
                p.probabilities[static_cast<size_t>(k)]);
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

const char* const ImageAttentionModel::kColormapNames[2] = {"hot", "viridis"};

ImageAttentionModel::ImageAttentionModel() {
  auto live = std::make_unique<Row>();
  live->live = true;
  live->source = "live";
  rows_.push_back(std::move(live));
}

ImageAttentionModel::~ImageAttentionModel() = default;

void ImageAttentionModel::add_run(const std::string& dir) {
  auto row = std::make_unique<Row>();
  row->source = dir;
  try {
    row->run = std::make_unique<SavedImageRun>(dir);
    set_data_dir(row->run->data_dir());
    row->probe = row->run->probe(index_ >= 0 ? index_ : 0);
    row->probe_key = mix(row->probe_key, static_cast<uint64_t>(row->probe.image.index) + 1);
  } catch (const std::exception& e) {
    row->error = e.what();
  }
  rows_.push_back(std::move(row));
}

void ImageAttentionModel::add_typed_run() {
  if (!run_field_[0]) return;
  add_run(run_field_);
  run_field_[0] = 0;
}

void ImageAttentionModel::remove_run(size_t i) {
  if (i == 0 || i >= rows_.size()) return;
  rows_.erase(rows_.begin() + static_cast<long>(i));
  selected_ = {};
}

void ImageAttentionModel::set_data_dir(const std::string& dir) {
  if (data_dir_.empty()) data_dir_ = dir;
}

void ImageAttentionModel::show_pick() {
  pick_error_.clear();
  pick.nth = std::max(0, pick.nth);
  if (data_dir_.empty()) {
    pick_error_ = "no image task: open a fashion-mnist experiment or add a saved run";
    return;
  }
  const auto& names = fashion_mnist_class_names();
  try {
    const int64_t index = find_test_image(data_dir_, pick.label, pick.nth);
    if (index < 0)
      pick_error_ = "no such image: " + std::to_string(count_test_images(data_dir_, pick.label)) +
                    " test images" + (pick.label < 0 ? "" : " of class " + names[pick.label]);
    else
      pending_index_ = index;
  } catch (const std::exception& e) {
    pick_error_ = e.what();
  }
}

std::string ImageAttentionModel::image_text() const {
  if (index_ < 0) return "";
  const ImageProbe& shown = rows_.front()->probe.image.empty() && rows_.size() > 1
                                ? rows_[1]->probe
                                : rows_.front()->probe;
  return "test image " + std::to_string(index_) + ": " + shown.image.label_name;
}

// A new pick goes to the trainer and every saved run; otherwise follow the live run's image (its
// task default, or a pick the trainer kept across a reset).
void ImageAttentionModel::choose_image(const Snapshot& snap, int64_t* ask) {
  if (pending_index_ >= 0) {
    index_ = pending_index_;
    pending_index_ = -1;
    if (!snap.probe_image.empty()) *ask = index_;
    probe_saved_rows();
  } else if (index_ < 0 && (!snap.probe_image.empty() || rows_.size() > 1)) {
    index_ = snap.probe_image.empty() ? 0 : snap.probe_image.index;
    probe_saved_rows();
  }
}

void ImageAttentionModel::sync_live_row(const Snapshot& snap, bool image_task) {
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

void ImageAttentionModel::probe_saved_rows() {
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
void ImageAttentionModel::compute(Row& row) {
  const ImageProbe& p = row.probe;
  const size_t cols = static_cast<size_t>(row.columns());
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

// What the grid is built from: every row's maps, state and source, and the controls.
uint64_t ImageAttentionModel::state_key(const Snapshot& snap) {
  live_mechanisms_.clear();
  for (size_t l = 0; l < snap.mechanisms.size(); ++l)
    if (l == 0 || snap.mechanisms[l] != snap.mechanisms[l - 1])
      live_mechanisms_ += (live_mechanisms_.empty() ? "" : "/") + snap.mechanisms[l];
  uint64_t key = mix(static_cast<uint64_t>(controls.colormap) + 1, controls.shared_scale ? 7 : 3);
  key = mix(mix(key, static_cast<uint64_t>(controls.layer + 8)), controls.show_mean ? 5 : 9);
  uint32_t alpha_bits;
  std::memcpy(&alpha_bits, &controls.alpha, sizeof alpha_bits);
  key = mix(mix(key, alpha_bits), live_mechanisms_);
  for (auto& r : rows_) {
    if (r->cls_key != r->probe_key) compute(*r);
    key = mix(mix(mix(key, r->probe_key), r->error), r->source);
  }
  return key;
}

int64_t ImageAttentionModel::refresh(const Snapshot& snap, bool image_task) {
  int64_t ask = -1;
  choose_image(snap, &ask);
  sync_live_row(snap, image_task);
  const uint64_t key = state_key(snap);
  if (key != grid_key_) {
    rebuild_grid();
    grid_key_ = key;
  }
  return ask;
}

std::string ImageAttentionModel::row_label(size_t i) const {
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

int ImageAttentionModel::layers() const {
  int layers = 0;
  for (const auto& r : rows_) layers = std::max(layers, r->probe.layers);
  return layers;
}

std::vector<figures::ImageAttentionRow> ImageAttentionModel::grid_rows() const {
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
  return in;
}

// One figure per number of layer blocks side by side that divides the layers shown; the view
// takes the one whose maps come out largest in the space it has.
void ImageAttentionModel::rebuild_grid() {
  const std::vector<figures::ImageAttentionRow> in = grid_rows();
  figures::ImageAttentionRowsOptions o;
  o.layer = controls.layer;
  o.colormap = overlay_colormap();
  o.alpha = std::clamp(static_cast<double>(controls.alpha), 0.0, 1.0);
  o.scale =
      controls.shared_scale ? figures::AttentionScale::Shared : figures::AttentionScale::PerMap;
  o.show_mean = controls.show_mean;
  int layers = 0;
  for (const auto& r : in) layers = std::max(layers, r.layers);
  const int slots = controls.layer < 0 ? std::max(1, layers) : 1;
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

void ImageAttentionModel::use_variant(size_t i) {
  variant_ = i;
  if (i < variants_.size()) {
    grid_figure_ = variants_[i].figure;
    cells_ = variants_[i].cells;
  } else {
    grid_figure_ = fig::Figure{};
    cells_.clear();
  }
}

std::string ImageAttentionModel::picture_text(const figures::ImageAttentionCell& c, int row,
                                              int col, float value) const {
  const Row& r = *rows_[static_cast<size_t>(c.row)];
  char text[320];
  std::snprintf(text, sizeof text, "%s, test image %lld (%s): pixel (%d, %d) = %.3f",
                row_label(static_cast<size_t>(c.row)).c_str(),
                static_cast<long long>(r.probe.image.index), r.probe.image.label_name.c_str(), row,
                col, value);
  return text;
}

std::string ImageAttentionModel::overlay_text(const figures::ImageAttentionCell& c, int row,
                                              int col, float value) const {
  const Row& r = *rows_[static_cast<size_t>(c.row)];
  const int tokens = r.grid * r.grid + 1;
  char text[320];
  std::snprintf(text, sizeof text,
                "%s, layer %d %s: CLS -> patch (%d, %d) = %.4f\nclick: full %dx%d map",
                row_label(static_cast<size_t>(c.row)).c_str(), c.layer,
                head_name(c.column, c.heads).c_str(), row, col, value, tokens, tokens);
  return text;
}

bool ImageAttentionModel::selection_is_live() const {
  return has_selection() && static_cast<size_t>(selected_.row) < rows_.size() &&
         rows_[static_cast<size_t>(selected_.row)]->live;
}

// The full S x S map of the selected cell (a head's weights, or their mean), with a colorbar.
const fig::Figure& ImageAttentionModel::full_map() {
  if (selected_.row < 0 || selected_.row >= static_cast<int>(rows_.size())) {
    full_figure_ = fig::Figure{};
    full_title_.clear();
    full_key_ = 0;
    return full_figure_;
  }
  const Row& row = *rows_[static_cast<size_t>(selected_.row)];
  const ImageProbe& p = row.probe;
  const std::string label = row_label(static_cast<size_t>(selected_.row));
  uint64_t key = mix(row.probe_key, static_cast<uint64_t>(selected_.layer * 1024 + selected_.head));
  key = mix(
      mix(mix(key, static_cast<uint64_t>(selected_.row)), static_cast<uint64_t>(controls.colormap)),
      label);
  if (key == full_key_) return full_figure_;
  full_key_ = key;
  std::vector<std::vector<float>> maps;
  int size = 0;
  for (const AttentionMap& m : p.maps)
    if (m.layer == selected_.layer && (selected_.head == p.heads || m.head == selected_.head))
      maps.push_back(m.weights), size = m.size;
  const std::vector<float> weights = maps.empty() ? std::vector<float>{} : elementwise_mean(maps);
  full_grid_ = row.grid;
  char title[200];
  std::snprintf(title, sizeof title, "%s, layer %d, %s: full %dx%d map (row = query)",
                label.c_str(), selected_.layer, head_name(selected_.head, p.heads).c_str(), size,
                size);
  full_title_ = title;
  try {
    full_figure_ =
        figures::full_attention_map_figure(full_title_, weights, size, overlay_colormap());
  } catch (const std::exception& e) {
    full_figure_ = fig::Figure{};
    full_title_ = e.what();
  }
  return full_figure_;
}

std::string ImageAttentionModel::full_map_text(int row, int col, float value) const {
  char text[200];
  std::snprintf(text, sizeof text, "query %d %s -> key %d %s = %.4f", row,
                token_name(row, full_grid_).c_str(), col, token_name(col, full_grid_).c_str(),
                value);
  return text;
}

nlohmann::json ImageAttentionModel::row_report(size_t i, const Screen& screen) const {
  const Row* r = rows_[i].get();
  nlohmann::json maps = nlohmann::json::array();
  for (size_t k = 0; k < r->cls.size(); ++k)
    if (!r->cls[k].empty())
      maps.push_back({{"layer", static_cast<int>(k) / r->columns()},
                      {"column", static_cast<int>(k) % r->columns()},
                      {"mean", static_cast<int>(k) % r->columns() == r->probe.heads},
                      {"cls_patch_weights", r->cls[k]}});
  int panels = 0;
  for (const auto& c : cells_) panels += c.row == static_cast<int>(i);
  return {
      {"source", r->source},
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
      {"first_cell", i < screen.first_cells.size() ? screen.first_cells[i] : std::vector<float>{}},
      {"figure_panels", panels},
      {"predicted", predicted(r->probe.probabilities)},
      {"maps", maps}};
}

void ImageAttentionModel::make_report(const Snapshot& snap, const Screen& screen) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < rows_.size(); ++i) rows.push_back(row_report(i, screen));
  const bool full = has_selection();
  const int full_size =
      full && !full_figure_.panels.empty() && !full_figure_.panels[0].heatmaps.empty()
          ? full_figure_.panels[0].heatmaps[0].rows
          : 0;
  report_ = {
      {"drawn", true},
      {"image_index", index_},
      {"live_image_index", snap.probe_image.index},
      {"layer_choice", controls.layer},
      {"colormap", kColormapNames[controls.colormap]},
      {"alpha", controls.alpha},
      {"shared_scale", controls.shared_scale},
      {"show_mean", controls.show_mean},
      {"figure",
       {{"name", grid_figure_.name},
        {"title", grid_figure_.title},
        {"rows", grid_figure_.rows},
        {"cols", grid_figure_.cols},
        {"panels", grid_figure_.panels.size()},
        {"layers_per_row", variant_ < variants_.size() ? variants_[variant_].layers_per_row : 0},
        {"layout_cols", screen.layout_cols},
        {"error", grid_error_}}},
      {"full_map",
       {{"row", selected_.row},
        {"layer", selected_.layer},
        {"head", selected_.head},
        {"size", full_size}}},
      {"full_map_title", full ? full_title_ : ""},
      {"rows", rows}};
}

std::vector<std::string> ImageAttentionModel::figures(const Snapshot& snap) {
  for (const figures::FigureSpec& spec : figures::figures_for(snap))
    if (spec.name == "image-attention") return {spec.name};
  return {};
}

}  // namespace attn::gui
