#include "panels/geometry/geometry_panel.h"

#include <epoxy/gl.h>  // the warped grid is drawn with GL from inside ImGui's rendering
#include <imgui.h>

#include "gui/export_dialog.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <random>
#include <utility>

#include "gui/plot_draw.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

namespace g = geometry;

constexpr float kHitRadius = 9.0f;  // pixels: how close a click must be to grab a point
constexpr float kDragThreshold = 3.0f;
constexpr int kMaxWeightLines = 64;  // more tokens: z only (lines would be a solid fan)
constexpr int kMaxLabelledTokens = 16;
constexpr int kMaxGridLines = 1024;
// While the grid changes every frame, lines get at most this many vertices in all: under Mesa's
// llvmpipe each line segment costs about 0.25 us to set up, so 2 x 256 lines x 257 samples
// would take ~35 ms a frame; 32768 vertices take ~10 ms.
constexpr long long kCoarseVertices = 32768;
constexpr ImU32 kHullFill = IM_COL32(86, 180, 233, 38);
constexpr ImU32 kHullEdge = IM_COL32(86, 180, 233, 200);
constexpr ImU32 kBoxEdge = IM_COL32(200, 200, 200, 150);
constexpr ImU32 kInputCircle = IM_COL32(255, 255, 255, 60);
constexpr ImU32 kPredicted = IM_COL32(255, 255, 255, 230);
constexpr ImU32 kQuery = IM_COL32(255, 255, 255, 255);
constexpr ImU32 kOutput = colors::kYellow;
constexpr ImU32 kSampledToken = IM_COL32(150, 190, 230, 150);

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

double distance(ImVec2 a, ImVec2 b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

g::Vec2 plus(g::Vec2 a, g::Vec2 b) {
  return {a.x + b.x, a.y + b.y};
}

bool is_identity(const g::Mat2& m) {
  return m.a == 1 && m.b == 0 && m.c == 0 && m.d == 1;
}

// Rounding in z is relative to the size of the coordinates.
double hull_tolerance(const g::Box& box) {
  return 1e-9 * std::max({1.0, std::abs(box.min.x), std::abs(box.max.x), std::abs(box.min.y),
                          std::abs(box.max.y)});
}

// The i-th of `count` circle colours, dark to bright along viridis (readable on the dark theme).
ImU32 circle_color(int i, int count) {
  const float t = count > 1 ? 0.35f + 0.65f * static_cast<float>(i) / (count - 1) : 0.8f;
  const render::Rgba8 c = render::viridis(t);
  return IM_COL32(c.r, c.g, c.b, 255);
}

}  // namespace

GeometryPanel::GeometryPanel() {
  scene_ = g::preset(g::preset_names().front());
  gaussian_params_.mean = {0.4, 0.2};
  gaussian_params_.cov = {0.8, 0.3, 0.3, 0.5};
  if (const char* views = std::getenv("ATTN_GEOMETRY_VIEWS"); views && *views)
    apply_view_setting(views);
  if (const char* bench = std::getenv("ATTN_GEOMETRY_BENCH"); bench && *bench)
    apply_bench_setting(bench);
  const std::string text = format_points(gaussian_ ? points_ : scene_.tokens);
  std::snprintf(tokens_text_, sizeof tokens_text_, "%s", text.c_str());
}

void GeometryPanel::apply_view_setting(const char* spec) {
  views_ = Views{};
  views_.output = views_.hull = views_.circles = views_.grid = false;
  const std::pair<const char*, bool*> flags[] = {
      {"output", &views_.output}, {"hull", &views_.hull}, {"circles", &views_.circles},
      {"linear", &views_.linear}, {"grid", &views_.grid}, {"density", &views_.density},
      {"gaussian", &gaussian_},   {"cpu", &cpu_grid_}};
  const std::string list = spec;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, end - start);
    start = end + 1;
    const auto flag = std::find_if(std::begin(flags), std::end(flags),
                                   [&](const auto& f) { return name == f.first; });
    if (flag != std::end(flags)) {
      *flag->second = true;
    } else if (name == "density-image") {
      views_.density = density_image_ = true;
    } else if (name == "residual" || name == "linear-map") {
      grid_mode_ = name == "residual" ? 1 : 2;
    } else if (name.rfind("preset=", 0) == 0) {
      const auto& names = g::preset_names();
      const auto it = std::find(names.begin(), names.end(), name.substr(7));
      if (it != names.end()) {
        preset_ = static_cast<int>(it - names.begin());
        scene_ = g::preset(*it);
      } else {
        std::fprintf(stderr, "attnlab: ATTN_GEOMETRY_VIEWS: unknown %s\n", name.c_str());
      }
    } else if (!name.empty()) {
      std::fprintf(stderr, "attnlab: ATTN_GEOMETRY_VIEWS: unknown view '%s'\n", name.c_str());
    }
  }
  if (gaussian_) points_ = scene_.tokens;  // what turning the Gaussian off brings back
}

void GeometryPanel::apply_bench_setting(const char* spec) {
  int lines = 0, tokens = 0;
  char path[8] = {}, motion[16] = "drag";
  const int fields = std::sscanf(spec, "%d,%d,%7[a-z],%15s", &lines, &tokens, path, motion);
  const std::string p = path, m = motion;
  if (fields < 3 || lines < 0 || lines > kMaxGridLines || tokens < 1 ||
      tokens > render::WarpRenderer::kMaxTokens || (p != "gpu" && p != "cpu") ||
      (m != "drag" && m != "drag-full" && m != "still")) {
    std::fprintf(stderr,
                 "attnlab: ATTN_GEOMETRY_BENCH must be LINES,TOKENS,gpu|cpu[,still|drag|drag-full]"
                 ", got '%s'\n",
                 spec);
    return;
  }
  bench_ = true;
  bench_moving_ = m != "still";
  coarse_while_moving_ = m != "drag-full";
  views_ = Views{};
  views_.output = views_.hull = views_.circles = false;
  views_.grid = lines > 0;
  grid_lines_ = std::max(2, lines);
  cpu_grid_ = p == "cpu";
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  scene_.tokens.clear();
  for (int j = 0; j < tokens; ++j) scene_.tokens.push_back({u(rng), u(rng)});
  bench_base_ = scene_.tokens;
}

g::Map GeometryPanel::grid_map() const {
  return grid_mode_ == 1 ? g::Map::Residual : grid_mode_ == 2 ? g::Map::Linear : g::Map::Softmax;
}

void GeometryPanel::fit_view() {
  // The tokens, the query, the largest circle's extent and the origin.
  g::Box box{{-1, -1}, {1, 1}};
  auto include = [&](g::Vec2 p) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) return;
    box.min.x = std::min(box.min.x, p.x), box.max.x = std::max(box.max.x, p.x);
    box.min.y = std::min(box.min.y, p.y), box.max.y = std::max(box.max.y, p.y);
  };
  const size_t n = std::min<size_t>(scene_.tokens.size(), 4096);
  for (size_t j = 0; j < n; ++j) include(scene_.tokens[j]);
  for (const g::Vec2& u : d_.values) include(u);
  include(query_);
  if (views_.circles || views_.linear) include({radius_, radius_}), include({-radius_, -radius_});
  if (bench_) include({grid_extent_, grid_extent_}), include({-grid_extent_, -grid_extent_});
  view_.fit(box, 0.12);
  view_fitted_ = true;
  density_dirty_ = true;
}

void GeometryPanel::sync_gaussian_tokens() {
  if (!gaussian_ || gaussian_rev_ == scene_rev_) return;
  try {
    scene_.tokens =
        g::sample_gaussian(gaussian_params_, gaussian_n_, static_cast<uint64_t>(gaussian_seed_));
    gaussian_error_.clear();
  } catch (const std::exception& e) {
    gaussian_error_ = e.what();  // shown under the Gaussian's inputs; the previous samples stay
  }
  gaussian_rev_ = ++scene_rev_;
}

void GeometryPanel::update_derived() {
  const bool want_circles = views_.circles, want_linear = views_.linear;
  const bool same_scene = d_.rev == scene_rev_ && d_.radius == radius_ &&
                          d_.circle_count == circle_count_ &&
                          d_.circle_samples == circle_samples_ && d_.circles == want_circles &&
                          d_.linear == want_linear;
  const bool same_query = d_.query.x == query_.x && d_.query.y == query_.y;
  if (same_scene && same_query) return;
  if (same_scene && d_.error.empty()) {  // only the query moved: the circles stay
    try {
      d_.query = query_;
      d_.output = g::attend(scene_, query_, &d_.weights);
      d_.inside = g::inside_hull(d_.hull, d_.output, hull_tolerance(d_.box));
    } catch (const std::exception& e) {
      d_.error = e.what();
    }
    return;
  }
  Derived d;
  d.rev = scene_rev_;
  d.query = query_;
  d.radius = radius_;
  d.circle_count = circle_count_;
  d.circle_samples = circle_samples_;
  d.circles = want_circles;
  d.linear = want_linear;
  try {
    g::validate(scene_);
    d.wv_identity = is_identity(scene_.wv);
    d.values = g::value_points(scene_);
    d.hull = g::convex_hull(d.values);
    d.box = g::bounding_box(d.values);
    d.output = g::attend(scene_, query_, &d.weights);
    d.inside = g::inside_hull(d.hull, d.output, hull_tolerance(d.box));
    for (int k = 1; k <= circle_count_ && (want_circles || want_linear); ++k) {
      const double r = radius_ * static_cast<double>(k) / circle_count_;
      const std::vector<g::Vec2> circle = g::circle(r, circle_samples_);
      if (want_circles) {
        d.softmax_images.push_back(g::map_points(scene_, circle, g::Map::Softmax));
        if (gaussian_) {
          std::vector<g::Vec2> tilted(circle.size());
          for (size_t i = 0; i < circle.size(); ++i)
            tilted[i] = g::gaussian_tilted_mean(gaussian_params_, scene_, circle[i]);
          const std::vector<g::Vec2>& sampled = d.softmax_images.back();
          for (size_t i = 0; i < circle.size(); ++i)
            d.gaussian_gap = std::max(
                d.gaussian_gap, std::hypot(sampled[i].x - tilted[i].x, sampled[i].y - tilted[i].y));
          d.tilted_means.push_back(std::move(tilted));
        }
      }
      if (want_linear) {
        d.linear_images.push_back(g::map_points(scene_, circle, g::Map::Linear));
        const g::Ellipse e = g::predicted_linear_image(scene_, r);
        std::vector<g::Vec2> curve(circle.size());
        for (size_t i = 0; i < circle.size(); ++i)
          curve[i] = e.point(2 * M_PI * static_cast<double>(i) / circle.size());
        d.ellipses.push_back(std::move(curve));
        d.outer_ellipse = e;
      }
    }
  } catch (const std::exception& e) {
    d.error = e.what();
  }
  d_ = std::move(d);
}

void GeometryPanel::update_gpu() {
  if (!gpu_checked_) {
    gpu_checked_ = true;
    gpu_.ready(&gpu_error_);
  }
  if (gpu_rev_ == scene_rev_) return;
  gpu_rev_ = scene_rev_;
  gpu_scene_ok_ = false;
  const int n = static_cast<int>(scene_.tokens.size());
  if (!gpu_.ready() || !d_.error.empty() || n > render::WarpRenderer::kMaxTokens) return;
  token_xy_.resize(2 * static_cast<size_t>(n));
  for (int j = 0; j < n; ++j)
    token_xy_[2 * j] = scene_.tokens[j].x, token_xy_[2 * j + 1] = scene_.tokens[j].y;
  render::WarpInput in;
  in.tokens_xy = token_xy_.data();
  in.count = n;
  const g::Mat2* m[3] = {&scene_.wq, &scene_.wk, &scene_.wv};
  double* out[3] = {in.wq, in.wk, in.wv};
  for (int i = 0; i < 3; ++i)
    out[i][0] = m[i]->a, out[i][1] = m[i]->b, out[i][2] = m[i]->c, out[i][3] = m[i]->d;
  in.temperature = scene_.temperature;
  render::prepare_warp(in, &prepared_);
  gpu_scene_ok_ = gpu_.set_scene(prepared_);
}

void GeometryPanel::update_cpu_grid(int samples) {
  const CpuGridKey key{scene_rev_, grid_lines_, samples, grid_mode_, grid_extent_, alpha_};
  if (key == cpu_key_) return;
  cpu_key_ = key;
  if (!d_.error.empty()) {
    cpu_xy_.clear();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  g::GridSpec spec;
  spec.lines = grid_lines_;
  spec.samples = samples;
  spec.extent = grid_extent_;
  try {
    const auto lines = g::warp_grid(scene_, spec, grid_map(), alpha_);
    cpu_xy_.resize(static_cast<size_t>(2) * grid_lines_ * samples * 2);
    size_t k = 0;
    for (const auto& line : lines)
      for (const g::Vec2& p : line)
        cpu_xy_[k++] = static_cast<float>(p.x), cpu_xy_[k++] = static_cast<float>(p.y);
  } catch (const std::exception& e) {
    cpu_xy_.clear();
    d_.error = e.what();
    return;
  }
  if (gpu_.ready()) gpu_.set_premapped_lines(cpu_xy_.data(), 2 * grid_lines_, samples);
  cpu_ms_last_ = elapsed_ms(start);
  cpu_ms_total_ += cpu_ms_last_;
  ++cpu_updates_;
}

void GeometryPanel::update_density_image() {
  const CpuGridKey key{scene_rev_, density_n_, 0, grid_mode_, grid_extent_, alpha_};
  if (!(key == density_key_)) {
    density_key_ = key;
    density_dirty_ = true;
    density_points_.clear();
    if (d_.error.empty()) {
      try {
        density_points_ = g::warp_grid_points(scene_, density_n_, grid_extent_, grid_map(), alpha_);
      } catch (const std::exception& e) {
        d_.error = e.what();
      }
    }
  }
  // Binned over what the canvas shows, about one bin per 4 pixels, but no finer than half the
  // grid's spacing: finer bins alias with the regular grid into stripes of empty bins.
  const g::Box window = view_.visible();
  const int bins = std::clamp(
      std::min(static_cast<int>((view_.max.x - view_.min.x) / 4), density_n_ / 2), 16, 512);
  const bool same_window = window.min.x == density_window_.min.x &&
                           window.min.y == density_window_.min.y &&
                           window.max.x == density_window_.max.x &&
                           window.max.y == density_window_.max.y && bins == density_bins_;
  if (!density_dirty_ && same_window) return;
  density_dirty_ = false;
  density_window_ = window;
  density_bins_ = bins;
  if (density_points_.empty() || !(window.max.x > window.min.x) || !(window.max.y > window.min.y)) {
    density_texture_.release();
    return;
  }
  const std::vector<float> image = g::density_image(density_points_, window, bins);
  density_pixels_.resize(image.size());
  // Log scale: the hull interior holds orders of magnitude fewer points than its vertices.
  constexpr float kContrast = 300.0f;
  const float norm = 1.0f / std::log1p(kContrast);
  for (int row = 0; row < bins; ++row) {
    for (int col = 0; col < bins; ++col) {
      const float v = image[static_cast<size_t>(row) * bins + col];
      render::Rgba8 c = render::viridis(std::log1p(kContrast * v) * norm);
      c.a = v > 0 ? 230 : 0;  // empty bins stay transparent: the axes show through
      // Texture rows are top first; density rows bottom first.
      density_pixels_[static_cast<size_t>(bins - 1 - row) * bins + col] = c;
    }
  }
  density_texture_.upload_rgba8(density_pixels_.data(), bins, bins);
}

void GeometryPanel::draw(bool* open, ImFont* small_font) {
  drawn_ = false;
  gpu_used_ = cpu_used_ = false;
  grid_lines_drawn_ = 0;
  if (open && !*open) {
    gesture_ = Gesture{};  // a press seen before closing must not act when reopened
    return;
  }
  ImGui::SetNextWindowBgAlpha(1.0f);  // opaque: it usually covers other panels
  if (!ImGui::Begin("Geometry", open)) {
    gesture_ = Gesture{};
    ImGui::End();
    return;
  }
  ImFont* font = small_font ? small_font : ImGui::GetFont();
  if (bench_moving_ && !bench_base_.empty()) {  // token 0 circles as if dragged
    const double t = 0.07 * static_cast<double>(frames_drawn_);
    scene_.tokens[0] = plus(bench_base_[0], {0.25 * std::cos(t), 0.25 * std::sin(t)});
    scene_changed();
  }
  const float controls_w = std::clamp(ImGui::GetContentRegionAvail().x * 0.34f, 250.0f, 330.0f);
  ImGui::BeginChild("controls", ImVec2(controls_w, 0), true);
  if (ImGui::SmallButton("Export...")) {
    figures::GeometryFigureInput in;
    in.scene = scene_;
    in.query = query_;
    in.grid = {grid_lines_, grid_extent_, grid_samples_};
    in.map = grid_map();
    in.alpha = alpha_;
    in.circle_radius = radius_;
    try {
      gui::request_figure_export(figures::geometry_figure(in), false);
    } catch (const std::exception& e) {  // a scene that does not validate
      fig::Figure empty;
      empty.name = "geometry";
      empty.title = std::string("cannot build the figure: ") + e.what();
      gui::request_figure_export(empty, false);
    }
  }
  draw_controls(font);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild(
      "canvas", ImVec2(0, 0), false,
      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoMove);
  draw_canvas(font);
  ImGui::EndChild();
  ImGui::End();
}

void GeometryPanel::draw_canvas(ImFont* font) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 60.0f), size.y = std::max(size.y, 60.0f);
  const ImVec2 old_size(view_.max.x - view_.min.x, view_.max.y - view_.min.y);
  view_.min = p0;
  view_.max = ImVec2(p0.x + size.x, p0.y + size.y);
  if (old_size.x != size.x || old_size.y != size.y) density_dirty_ = true;
  ImGui::InvisibleButton("##canvas", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  sync_gaussian_tokens();
  update_derived();
  if (!view_fitted_) fit_view();
  handle_input();
  sync_gaussian_tokens();
  update_derived();  // after the input, so this frame draws (and reports) what it edited

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(view_.min, view_.max, true);
  draw_axes(dl, view_, font);
  if (views_.density && d_.error.empty()) {
    update_gpu();
    // The point cloud needs the shader; past its token limit the CPU image stands in.
    const bool points_on_gpu = !density_image_ && gpu_.ready() && gpu_scene_ok_;
    if (!points_on_gpu) {
      update_density_image();
      if (density_texture_.valid())
        dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(density_texture_.id())),
                     view_.min, view_.max);
    }
  }
  draw_gl_layer(dl);
  draw_overlays(dl, font);
  draw_tokens(dl, font);
  draw_readout(font);
  dl->PopClipRect();
  ++frames_drawn_;
  drawn_ = true;
}

int GeometryPanel::hit_token(ImVec2 mouse) const {
  if (gaussian_) return -1;  // samples are not edited one by one
  int best = -1;
  double best_d = kHitRadius;
  for (size_t j = 0; j < scene_.tokens.size(); ++j) {
    const double dist = distance(view_.to_screen(scene_.tokens[j]), mouse);
    if (dist <= best_d) best_d = dist, best = static_cast<int>(j);
  }
  return best;
}

void GeometryPanel::handle_input() {
  const ImGuiIO& io = ImGui::GetIO();
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = io.MousePos;
  hovered_token_ = hovered ? hit_token(mouse) : -1;
  if (gesture_.button < 0 && hovered) {
    for (int b : {ImGuiMouseButton_Left, ImGuiMouseButton_Right, ImGuiMouseButton_Middle}) {
      if (!ImGui::IsMouseClicked(b)) continue;
      Gesture gs;
      gs.button = b;
      gs.press = mouse;
      gs.press_center_x = view_.center_x;
      gs.press_center_y = view_.center_y;
      // The nearest grabbable point: a token, the query, or the Gaussian's mean.
      double best = kHitRadius;
      const int token = hit_token(mouse);
      if (token >= 0) {
        best = distance(view_.to_screen(scene_.tokens[token]), mouse);
        gs.target = Target::Token, gs.token = token;
      }
      auto consider = [&](g::Vec2 p, Target t) {
        const double dist = distance(view_.to_screen(p), mouse);
        if (dist < best) best = dist, gs.target = t, gs.token = -1;
      };
      consider(query_, Target::Query);
      if (gaussian_) consider(gaussian_params_.mean, Target::Mean);
      const g::Vec2 at = view_.to_data(mouse);
      const g::Vec2 where = gs.target == Target::Token   ? scene_.tokens[gs.token]
                            : gs.target == Target::Query ? query_
                                                         : gaussian_params_.mean;
      gs.grab = {where.x - at.x, where.y - at.y};
      gesture_ = gs;
      break;
    }
  }
  if (gesture_.button >= 0) {
    Gesture& gs = gesture_;
    if (ImGui::IsMouseDown(gs.button)) {
      if (!gs.dragged && distance(mouse, gs.press) > kDragThreshold) {
        gs.dragged = true;
        if (gs.button == ImGuiMouseButton_Left && gs.target == Target::Token) ++token_drags_;
        if (gs.button == ImGuiMouseButton_Left && gs.target == Target::Query) ++query_drags_;
      }
      if (gs.dragged) {
        const g::Vec2 to = plus(view_.to_data(mouse), gs.grab);
        const bool left = gs.button == ImGuiMouseButton_Left;
        if (left && gs.target == Target::Token &&
            gs.token < static_cast<int>(scene_.tokens.size())) {
          g::Vec2& t = scene_.tokens[gs.token];
          if (t.x != to.x || t.y != to.y) t = to, scene_changed();
        } else if (left && gs.target == Target::Query) {
          query_ = to;
        } else if (left && gs.target == Target::Mean) {
          if (gaussian_params_.mean.x != to.x || gaussian_params_.mean.y != to.y)
            gaussian_params_.mean = to, scene_changed();
        } else {  // pan: the data point under the press stays under the cursor
          view_.center_x = gs.press_center_x - (mouse.x - gs.press.x) / view_.pixels_per_unit;
          view_.center_y = gs.press_center_y + (mouse.y - gs.press.y) / view_.pixels_per_unit;
        }
      }
    } else {  // released
      if (!gs.dragged && gs.button == ImGuiMouseButton_Left && gs.target == Target::None &&
          !gaussian_ &&
          scene_.tokens.size() < static_cast<size_t>(render::WarpRenderer::kMaxTokens)) {
        scene_.tokens.push_back(view_.to_data(gs.press));
        ++tokens_added_;
        scene_changed();
      } else if (!gs.dragged && gs.button == ImGuiMouseButton_Right && gs.target == Target::Token &&
                 scene_.tokens.size() > 1 && gs.token < static_cast<int>(scene_.tokens.size())) {
        scene_.tokens.erase(scene_.tokens.begin() + gs.token);
        ++tokens_deleted_;
        hovered_token_ = -1;
        scene_changed();
      }
      gs = Gesture{};
    }
  }
  if (hovered && io.MouseWheel != 0.0f) {
    view_.zoom_about(mouse, std::pow(1.2, static_cast<double>(io.MouseWheel)));
  }
  if (hovered_token_ >= 0 && gesture_.button < 0) {
    const g::Vec2 t = scene_.tokens[hovered_token_];
    const double p =
        hovered_token_ < static_cast<int>(d_.weights.size()) ? d_.weights[hovered_token_] : NAN;
    ImGui::SetTooltip("t%d = (%.4g, %.4g)\np = %.4f\ndrag: move, right click: delete",
                      hovered_token_ + 1, t.x, t.y, p);
  }
}

bool GeometryPanel::GlKey::operator==(const GlKey& o) const {
  return rev == o.rev && gpu_path == o.gpu_path && grid == o.grid && points == o.points &&
         lines == o.lines && samples == o.samples && mode == o.mode && density_n == o.density_n &&
         width == o.width && height == o.height && extent == o.extent && alpha == o.alpha &&
         center_x == o.center_x && center_y == o.center_y && pixels_per_unit == o.pixels_per_unit;
}

void GeometryPanel::draw_gl_layer(ImDrawList* dl) {
  const bool want_grid = views_.grid && d_.error.empty();
  const bool want_points = views_.density && !density_image_ && d_.error.empty() && gpu_scene_ok_;
  if (!want_grid && !want_points) {
    layer_valid_ = changed_last_frame_ = false;
    return;
  }
  update_gpu();
  if (!gpu_.ready()) {  // no GL program at all: the CPU grid as ImGui polylines (slow, but drawn)
    if (want_grid) draw_cpu_grid_with_imgui(dl);
    return;
  }
  const ImVec2 fb_scale = ImGui::GetIO().DisplayFramebufferScale;
  GlKey key;
  key.rev = scene_rev_;
  key.gpu_path = gpu_scene_ok_ && !cpu_grid_;
  key.grid = want_grid;
  key.points = want_points && gpu_scene_ok_;
  key.lines = grid_lines_;
  key.samples = grid_samples_;
  key.mode = grid_mode_;
  key.density_n = density_n_;
  key.width = static_cast<int>(std::lround((view_.max.x - view_.min.x) * fb_scale.x));
  key.height = static_cast<int>(std::lround((view_.max.y - view_.min.y) * fb_scale.y));
  key.extent = grid_extent_;
  key.alpha = alpha_;
  key.center_x = view_.center_x;
  key.center_y = view_.center_y;
  key.pixels_per_unit = view_.pixels_per_unit;
  const bool changed = !layer_valid_ || !(key == layer_key_);
  // Changing on consecutive frames (a drag, a slider held): coarser lines keep it responsive;
  // the first still frame redraws them in full.
  const bool moving = changed && changed_last_frame_;
  changed_last_frame_ = changed;
  int samples = grid_samples_;
  if (coarse_while_moving_ && moving && 2LL * grid_lines_ * samples > kCoarseVertices)
    samples = std::max(9, static_cast<int>(kCoarseVertices / (2 * grid_lines_)));
  if (changed || (layer_coarse_ && !moving)) render_gl_layer(key, samples);
  if (!layer_.valid()) return;
  dl->AddCallback(render::premultiplied_blend_callback, nullptr);
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(layer_.texture())), view_.min,
               view_.max, ImVec2(0, 1), ImVec2(1, 0));
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);  // ImGui's own blending again
  if (want_grid) {
    grid_lines_drawn_ = 2 * grid_lines_;
    (key.gpu_path ? gpu_used_ : cpu_used_) = true;
  }
}

void GeometryPanel::render_gl_layer(const GlKey& key, int samples) {
  if (key.grid) {
    if (key.gpu_path)
      gpu_.set_grid(grid_lines_, samples);  // rebuilds the vertex buffer only on a new size
    else
      update_cpu_grid(samples);
  }
  if (key.points) gpu_.set_point_grid(density_n_);
  if (!layer_.begin(key.width, key.height)) {
    layer_.end();
    return;
  }
  // The canvas fills the target: data -> target pixels -> clip space.
  const auto clip = render::canvas_clip_transform(
      0, 0, static_cast<float>(key.width), static_cast<float>(key.height), view_.center_x,
      view_.center_y, view_.pixels_per_unit * key.width / std::max(1.0f, view_.max.x - view_.min.x),
      static_cast<float>(key.width), static_cast<float>(key.height));
  const auto mode = grid_mode_ == 1   ? render::WarpMode::Residual
                    : grid_mode_ == 2 ? render::WarpMode::Linear
                                      : render::WarpMode::Softmax;
  if (key.points) {  // additive: overlapping points add up to a density
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE, GL_ONE, GL_ONE);
    const float a = std::clamp(6000.0f / (density_n_ * density_n_), 0.04f, 0.6f);
    gpu_.draw_points(mode, alpha_, grid_extent_, clip, {0.45f, 0.75f, 1.0f, a});
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  }
  if (key.grid) {
    // Denser grids get fainter lines, so 256 x 256 reads as shading rather than a solid block.
    render::WarpRenderer::Style style;
    style.vertical.a = style.horizontal.a = std::clamp(20.0f / grid_lines_, 0.10f, 0.65f);
    if (key.gpu_path)
      gpu_.draw_grid(mode, alpha_, grid_extent_, clip, style);
    else if (!cpu_xy_.empty())
      gpu_.draw_premapped(clip, style);
  }
  layer_.end();
  layer_key_ = key;
  layer_valid_ = true;
  layer_coarse_ = samples != grid_samples_;
  layer_samples_ = samples;
  ++layer_renders_;
}

void GeometryPanel::draw_cpu_grid_with_imgui(ImDrawList* dl) {
  update_cpu_grid(grid_samples_);
  const ImU32 col = with_alpha(colors::kSkyBlue, 0.5f);
  for (int line = 0; line < 2 * grid_lines_ && !cpu_xy_.empty(); ++line) {
    scratch_.clear();
    for (int s = 0; s < grid_samples_; ++s) {
      const size_t k = 2 * (static_cast<size_t>(line) * grid_samples_ + s);
      scratch_.push_back(view_.to_screen({cpu_xy_[k], cpu_xy_[k + 1]}));
    }
    dl->AddPolyline(scratch_.data(), static_cast<int>(scratch_.size()), col, 0, 1.0f);
  }
  cpu_used_ = !cpu_xy_.empty();
  if (cpu_used_) grid_lines_drawn_ = 2 * grid_lines_;
  layer_samples_ = grid_samples_;
}

void GeometryPanel::draw_overlays(ImDrawList* dl, ImFont* font) {
  if (!d_.error.empty()) return;
  const ImVec2 origin = view_.to_screen({0, 0});
  if (views_.hull && !d_.hull.empty()) {
    scratch_.clear();
    for (const g::Vec2& p : d_.hull) scratch_.push_back(view_.to_screen(p));
    if (scratch_.size() >= 3) {
      dl->AddConvexPolyFilled(scratch_.data(), static_cast<int>(scratch_.size()), kHullFill);
      dl->AddPolyline(scratch_.data(), static_cast<int>(scratch_.size()), kHullEdge,
                      ImDrawFlags_Closed, 1.5f);
    } else if (scratch_.size() == 2) {
      dl->AddLine(scratch_[0], scratch_[1], kHullEdge, 2.0f);
    }
    const ImVec2 a = view_.to_screen(d_.box.min), b = view_.to_screen(d_.box.max);
    draw_dashed_line(dl, ImVec2(a.x, a.y), ImVec2(b.x, a.y), kBoxEdge, 1.0f, 5, 4);
    draw_dashed_line(dl, ImVec2(b.x, a.y), ImVec2(b.x, b.y), kBoxEdge, 1.0f, 5, 4);
    draw_dashed_line(dl, ImVec2(b.x, b.y), ImVec2(a.x, b.y), kBoxEdge, 1.0f, 5, 4);
    draw_dashed_line(dl, ImVec2(a.x, b.y), ImVec2(a.x, a.y), kBoxEdge, 1.0f, 5, 4);
    draw_label(dl, font, ImVec2(a.x + 2, a.y + 2), kBoxEdge, "bounding box");
  }
  if (views_.circles || views_.linear) {  // the query circles themselves, faint
    for (int k = 1; k <= circle_count_; ++k) {
      const float r = static_cast<float>(radius_ * k / circle_count_ * view_.pixels_per_unit);
      if (r < 1e5f) dl->AddCircle(origin, r, kInputCircle, 0, 1.0f);
    }
  }
  if (views_.linear) {
    for (size_t k = 0; k < d_.linear_images.size(); ++k) {
      const auto& img = d_.linear_images[k];
      draw_data_polyline(dl, view_, img.data(), img.size(), true, colors::kGreen, 2.5f, scratch_);
      const auto& e = d_.ellipses[k];
      draw_dashed_polyline(dl, view_, e.data(), e.size(), true, kPredicted, 1.2f, 6, 5);
    }
  }
  if (views_.circles) {
    const int n = static_cast<int>(d_.softmax_images.size());
    for (int k = 0; k < n; ++k) {
      const auto& img = d_.softmax_images[k];
      draw_data_polyline(dl, view_, img.data(), img.size(), true, circle_color(k, n), 2.0f,
                         scratch_);
    }
    for (const auto& curve : d_.tilted_means)
      draw_dashed_polyline(dl, view_, curve.data(), curve.size(), true, kPredicted, 1.2f, 6, 5);
  }
  if (views_.output && !d_.weights.empty()) {
    const ImVec2 z = view_.to_screen(d_.output);
    const int n = static_cast<int>(d_.values.size());
    if (n <= kMaxWeightLines) {
      for (int j = 0; j < n; ++j) {
        const float p = static_cast<float>(d_.weights[j]);
        const ImVec2 u = view_.to_screen(d_.values[j]);
        dl->AddLine(z, u, with_alpha(categorical_color(j), 0.3f + 0.7f * p), 1.0f + 9.0f * p);
        if (n <= kMaxLabelledTokens && p >= 0.02f) {
          char label[16];
          std::snprintf(label, sizeof label, "%.2f", p);
          draw_label(dl, font, ImVec2(z.x + 0.55f * (u.x - z.x) + 3, z.y + 0.55f * (u.y - z.y)),
                     categorical_color(j), label);
        }
      }
    }
  }
}

void GeometryPanel::draw_tokens(ImDrawList* dl, ImFont* font) {
  const size_t n = scene_.tokens.size();
  if (gaussian_) {
    for (const g::Vec2& t : scene_.tokens) {
      const ImVec2 s = view_.to_screen(t);
      dl->AddRectFilled(ImVec2(s.x - 1, s.y - 1), ImVec2(s.x + 1, s.y + 1), kSampledToken);
    }
    // The Gaussian's 1- and 2-sigma ellipses, and its mean (draggable).
    const g::Mat2& c = gaussian_params_.cov;
    const double tr = 0.5 * (c.a + c.d), det = c.a * c.d - c.b * c.b;
    const double disc = std::sqrt(std::max(0.0, tr * tr - det));
    const double l1 = std::max(0.0, tr + disc), l2 = std::max(0.0, tr - disc);
    const double angle = 0.5 * std::atan2(2 * c.b, c.a - c.d);
    for (double sigma : {1.0, 2.0}) {
      std::array<g::Vec2, 96> ring;
      for (size_t i = 0; i < ring.size(); ++i) {
        const double a = 2 * M_PI * i / ring.size();
        const double x = sigma * std::sqrt(l1) * std::cos(a),
                     y = sigma * std::sqrt(l2) * std::sin(a);
        ring[i] = {gaussian_params_.mean.x + x * std::cos(angle) - y * std::sin(angle),
                   gaussian_params_.mean.y + x * std::sin(angle) + y * std::cos(angle)};
      }
      draw_dashed_polyline(dl, view_, ring.data(), ring.size(), true,
                           with_alpha(colors::kOrange, 0.8f), 1.0f, 4, 4);
    }
    const ImVec2 m = view_.to_screen(gaussian_params_.mean);
    dl->AddCircle(m, 6.0f, colors::kOrange, 0, 2.0f);
    draw_label(dl, font, ImVec2(m.x + 8, m.y - font->FontSize - 2), colors::kOrange, "mu");
  } else {
    for (size_t j = 0; j < n; ++j) {
      const ImVec2 s = view_.to_screen(scene_.tokens[j]);
      const ImU32 col = categorical_color(static_cast<int>(j));
      if (!d_.wv_identity && j < d_.values.size()) {  // the value point W^V t_j it stands for
        const ImVec2 u = view_.to_screen(d_.values[j]);
        draw_dashed_line(dl, s, u, with_alpha(col, 0.6f), 1.0f, 3, 3);
        dl->AddRect(ImVec2(u.x - 4, u.y - 4), ImVec2(u.x + 4, u.y + 4), col, 0, 0, 1.5f);
      }
      const bool hot = static_cast<int>(j) == hovered_token_ ||
                       (gesture_.target == Target::Token && gesture_.token == static_cast<int>(j));
      dl->AddCircleFilled(s, hot ? 8.0f : 6.0f, col);
      dl->AddCircle(s, hot ? 8.0f : 6.0f, IM_COL32(0, 0, 0, 200), 0, 1.5f);
      if (n <= static_cast<size_t>(kMaxLabelledTokens) || hot) {
        char label[24];
        std::snprintf(label, sizeof label, "t%zu", j + 1);
        draw_label(dl, font, ImVec2(s.x + 8, s.y - font->FontSize - 2), col, label);
      }
    }
  }
  if (!d_.error.empty()) return;
  const ImVec2 q = view_.to_screen(query_);
  dl->AddCircle(q, 7.0f, kQuery, 0, 2.0f);
  dl->AddLine(ImVec2(q.x - 4, q.y), ImVec2(q.x + 4, q.y), kQuery, 1.5f);
  dl->AddLine(ImVec2(q.x, q.y - 4), ImVec2(q.x, q.y + 4), kQuery, 1.5f);
  draw_label(dl, font, ImVec2(q.x + 9, q.y + 2), kQuery, "v");
  if (views_.output) {
    const ImVec2 z = view_.to_screen(d_.output);
    const ImVec2 diamond[4] = {ImVec2(z.x, z.y - 7), ImVec2(z.x + 7, z.y), ImVec2(z.x, z.y + 7),
                               ImVec2(z.x - 7, z.y)};
    dl->AddConvexPolyFilled(diamond, 4, kOutput);
    dl->AddPolyline(diamond, 4, IM_COL32(0, 0, 0, 220), ImDrawFlags_Closed, 1.5f);
    draw_label(dl, font, ImVec2(z.x + 9, z.y + 2), kOutput, "z");
  }
}

}  // namespace attn::gui
