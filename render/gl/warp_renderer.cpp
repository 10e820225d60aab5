#include "render/gl/warp_renderer.h"

#include <epoxy/gl.h>

#include <algorithm>

#include "render/warp_shaders.h"  // generated from shaders/*.glsl (render/gl/embed_shaders.cmake)

namespace attn::render {
namespace {

constexpr GLuint kTokenBinding = 1;  // uniform-buffer binding point of the WarpTokens block

// After a compile (program false) or link (program true): false, with `what` and the info log
// in *log, when it failed.
bool succeeded(GLuint object, bool program, const char* what, std::string* log) {
  GLint ok = 0;
  if (program)
    glGetProgramiv(object, GL_LINK_STATUS, &ok);
  else
    glGetShaderiv(object, GL_COMPILE_STATUS, &ok);
  if (ok) return true;
  char buf[2048] = {};
  if (program)
    glGetProgramInfoLog(object, sizeof buf, nullptr, buf);
  else
    glGetShaderInfoLog(object, sizeof buf, nullptr, buf);
  *log = std::string(what) + buf;
  return false;
}

GLuint compile(GLenum kind, const char* source, std::string* log) {
  const GLuint shader = glCreateShader(kind);
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  if (!succeeded(shader, false,
                 kind == GL_VERTEX_SHADER ? "warp.vert.glsl: " : "warp.frag.glsl: ", log)) {
    glDeleteShader(shader);
    return 0;
  }
  return shader;
}

// A vertex array with one vec2 float attribute at location 0 reading `vbo`.
void make_vertex_array(GLuint* vao, GLuint* vbo) {
  if (*vao == 0) glGenVertexArrays(1, vao);
  if (*vbo == 0) glGenBuffers(1, vbo);
  glBindVertexArray(*vao);
  glBindBuffer(GL_ARRAY_BUFFER, *vbo);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 2 * sizeof(float), nullptr);
}

void delete_vertex_array(unsigned* vao, unsigned* vbo) {
  if (*vbo) glDeleteBuffers(1, vbo);
  if (*vao) glDeleteVertexArrays(1, vao);
  *vao = *vbo = 0;
}

// Line strips of `count` lines of `samples` vertices each, stored back to back.
void strips(int count, int samples, std::vector<int>* firsts, std::vector<int>* counts) {
  firsts->resize(count);
  counts->assign(count, samples);
  for (int i = 0; i < count; ++i) (*firsts)[i] = i * samples;
}

// Restores the program, vertex array and array buffer bound at construction.
class BindingGuard {
 public:
  BindingGuard() {
    glGetIntegerv(GL_CURRENT_PROGRAM, &program_);
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &vao_);
    glGetIntegerv(GL_ARRAY_BUFFER_BINDING, &vbo_);
  }
  ~BindingGuard() {
    glUseProgram(static_cast<GLuint>(program_));
    glBindVertexArray(static_cast<GLuint>(vao_));
    glBindBuffer(GL_ARRAY_BUFFER, static_cast<GLuint>(vbo_));
  }
  BindingGuard(const BindingGuard&) = delete;
  BindingGuard& operator=(const BindingGuard&) = delete;

 private:
  GLint program_ = 0, vao_ = 0, vbo_ = 0;
};

}  // namespace

WarpRenderer::~WarpRenderer() {
  release();
}

void WarpRenderer::release() {
  if (program_) glDeleteProgram(program_);
  if (ubo_) glDeleteBuffers(1, &ubo_);
  program_ = ubo_ = 0;
  delete_vertex_array(&grid_vao_, &grid_vbo_);
  delete_vertex_array(&points_vao_, &points_vbo_);
  delete_vertex_array(&premapped_vao_, &premapped_vbo_);
  lines_ = samples_ = points_n_ = premapped_count_ = premapped_samples_ = 0;
  tried_ = ok_ = false;
}

bool WarpRenderer::ready(std::string* error) {
  if (!tried_) {
    tried_ = true;
    const GLuint vs = compile(GL_VERTEX_SHADER, kWarpVertexShader, &error_);
    const GLuint fs = vs ? compile(GL_FRAGMENT_SHADER, kWarpFragmentShader, &error_) : 0;
    if (vs && fs) {
      program_ = glCreateProgram();
      glAttachShader(program_, vs);
      glAttachShader(program_, fs);
      // Declared before linking: tests capture the mapped points (capture_*()).
      const char* varyings[] = {"v_warped"};
      glTransformFeedbackVaryings(program_, 1, varyings, GL_INTERLEAVED_ATTRIBS);
      glLinkProgram(program_);
      if (!succeeded(program_, true, "warp shader link: ", &error_)) {
        glDeleteProgram(program_);
        program_ = 0;
      }
    }
    if (vs) glDeleteShader(vs);
    if (fs) glDeleteShader(fs);
    if (program_) {
      const GLuint block = glGetUniformBlockIndex(program_, "WarpTokens");
      if (block == GL_INVALID_INDEX) {
        error_ = "warp shader: no WarpTokens uniform block";
      } else {
        glUniformBlockBinding(program_, block, kTokenBinding);
        u_.token_count = glGetUniformLocation(program_, "u_token_count");
        u_.value_origin = glGetUniformLocation(program_, "u_value_origin");
        u_.linear = glGetUniformLocation(program_, "u_linear");
        u_.mode = glGetUniformLocation(program_, "u_mode");
        u_.alpha = glGetUniformLocation(program_, "u_alpha");
        u_.input_origin = glGetUniformLocation(program_, "u_input_origin");
        u_.input_scale = glGetUniformLocation(program_, "u_input_scale");
        u_.clip_scale = glGetUniformLocation(program_, "u_clip_scale");
        u_.clip_offset = glGetUniformLocation(program_, "u_clip_offset");
        u_.color = glGetUniformLocation(program_, "u_color");
        GLint previous = 0;
        glGetIntegerv(GL_UNIFORM_BUFFER_BINDING, &previous);
        glGenBuffers(1, &ubo_);
        glBindBuffer(GL_UNIFORM_BUFFER, ubo_);
        // Always the full block: std140 arrays are read in full by some drivers.
        glBufferData(GL_UNIFORM_BUFFER, kMaxTokens * 4 * sizeof(float), nullptr, GL_DYNAMIC_DRAW);
        glBindBuffer(GL_UNIFORM_BUFFER, static_cast<GLuint>(previous));
        ok_ = true;
      }
    }
  }
  if (!ok_ && error) *error = error_;
  return ok_;
}

bool WarpRenderer::set_scene(const PreparedWarp& prepared) {
  if (!ready() || prepared.count < 1 || prepared.count > kMaxTokens) return false;
  scene_.count = prepared.count;
  std::copy(prepared.value_origin, prepared.value_origin + 2, scene_.value_origin);
  std::copy(prepared.linear, prepared.linear + 4, scene_.linear);
  GLint previous = 0;
  glGetIntegerv(GL_UNIFORM_BUFFER_BINDING, &previous);
  glBindBuffer(GL_UNIFORM_BUFFER, ubo_);
  glBufferSubData(GL_UNIFORM_BUFFER, 0, prepared.count * 4 * sizeof(float), prepared.tokens.data());
  glBindBuffer(GL_UNIFORM_BUFFER, static_cast<GLuint>(previous));
  return true;
}

void WarpRenderer::set_grid(int lines, int samples) {
  lines = std::max(2, lines);
  samples = std::max(2, samples);
  if (!ready() || (lines == lines_ && samples == samples_)) return;
  std::vector<float> xy(static_cast<size_t>(lines) * 2 * samples * 2);
  size_t k = 0;
  for (int family = 0; family < 2; ++family) {  // 0: vertical (constant x), 1: horizontal
    for (int i = 0; i < lines; ++i) {
      const float fixed = -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(lines - 1);
      for (int s = 0; s < samples; ++s) {
        const float moving = -1.0f + 2.0f * static_cast<float>(s) / static_cast<float>(samples - 1);
        xy[k++] = family == 0 ? fixed : moving;
        xy[k++] = family == 0 ? moving : fixed;
      }
    }
  }
  BindingGuard guard;
  make_vertex_array(&grid_vao_, &grid_vbo_);
  glBufferData(GL_ARRAY_BUFFER, xy.size() * sizeof(float), xy.data(), GL_STATIC_DRAW);
  strips(2 * lines, samples, &firsts_, &counts_);
  lines_ = lines;
  samples_ = samples;
}

void WarpRenderer::set_point_grid(int n) {
  n = std::max(2, n);
  if (!ready() || n == points_n_) return;
  std::vector<float> xy(static_cast<size_t>(n) * n * 2);
  size_t k = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      xy[k++] = -1.0f + 2.0f * static_cast<float>(j) / static_cast<float>(n - 1);
      xy[k++] = -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(n - 1);
    }
  BindingGuard guard;
  make_vertex_array(&points_vao_, &points_vbo_);
  glBufferData(GL_ARRAY_BUFFER, xy.size() * sizeof(float), xy.data(), GL_STATIC_DRAW);
  points_n_ = n;
}

void WarpRenderer::set_premapped_lines(const float* xy, int count, int samples) {
  if (!ready() || count < 1 || samples < 2) return;
  BindingGuard guard;
  const bool same = premapped_vao_ && count == premapped_count_ && samples == premapped_samples_;
  make_vertex_array(&premapped_vao_, &premapped_vbo_);
  const GLsizeiptr bytes = static_cast<GLsizeiptr>(count) * samples * 2 * sizeof(float);
  if (same) {
    glBufferSubData(GL_ARRAY_BUFFER, 0, bytes, xy);
  } else {
    glBufferData(GL_ARRAY_BUFFER, bytes, xy, GL_DYNAMIC_DRAW);
    strips(count, samples, &premapped_firsts_, &premapped_counts_);
    premapped_count_ = count;
    premapped_samples_ = samples;
  }
}

void WarpRenderer::bind_common(WarpMode mode, float alpha, float origin, float scale,
                               const ClipTransform& clip) {
  glUseProgram(program_);
  glBindBufferBase(GL_UNIFORM_BUFFER, kTokenBinding, ubo_);
  glUniform1i(u_.token_count, scene_.count);
  glUniform2f(u_.value_origin, scene_.value_origin[0], scene_.value_origin[1]);
  glUniformMatrix2fv(u_.linear, 1, GL_TRUE, scene_.linear);  // row-major upload
  glUniform1i(u_.mode, static_cast<int>(mode));
  glUniform1f(u_.alpha, alpha);
  glUniform2f(u_.input_origin, origin, origin);
  glUniform2f(u_.input_scale, scale, scale);
  glUniform2f(u_.clip_scale, clip.scale[0], clip.scale[1]);
  glUniform2f(u_.clip_offset, clip.offset[0], clip.offset[1]);
}

void WarpRenderer::draw_grid(WarpMode mode, float alpha, double extent, const ClipTransform& clip,
                             const Style& style) {
  if (!ok_ || !grid_vao_ || scene_.count < 1) return;
  bind_common(mode, alpha, 0.0f, static_cast<float>(extent), clip);
  glBindVertexArray(grid_vao_);
  const Rgba* colors[2] = {&style.vertical, &style.horizontal};
  for (int family = 0; family < 2; ++family) {
    const Rgba& c = *colors[family];
    glUniform4f(u_.color, c.r, c.g, c.b, c.a);
    glMultiDrawArrays(GL_LINE_STRIP, firsts_.data() + family * lines_,
                      counts_.data() + family * lines_, lines_);
  }
}

void WarpRenderer::draw_premapped(const ClipTransform& clip, const Style& style) {
  if (!ok_ || !premapped_vao_) return;
  bind_common(WarpMode::PreMapped, 0.0f, 0.0f, 1.0f, clip);
  glBindVertexArray(premapped_vao_);
  // The first half are vertical lines, the second half horizontal (grid order).
  const int half = premapped_count_ / 2;
  const int first_count[2] = {half, premapped_count_ - half};
  const Rgba* colors[2] = {&style.vertical, &style.horizontal};
  for (int family = 0; family < 2; ++family) {
    if (first_count[family] == 0) continue;
    const Rgba& c = *colors[family];
    glUniform4f(u_.color, c.r, c.g, c.b, c.a);
    glMultiDrawArrays(GL_LINE_STRIP, premapped_firsts_.data() + family * half,
                      premapped_counts_.data() + family * half, first_count[family]);
  }
}

void WarpRenderer::draw_points(WarpMode mode, float alpha, double extent, const ClipTransform& clip,
                               Rgba color) {
  if (!ok_ || !points_vao_ || scene_.count < 1) return;
  bind_common(mode, alpha, 0.0f, static_cast<float>(extent), clip);
  glUniform4f(u_.color, color.r, color.g, color.b, color.a);
  glBindVertexArray(points_vao_);
  glDrawArrays(GL_POINTS, 0, points_n_ * points_n_);
}

std::vector<float> WarpRenderer::capture(unsigned vao, int count, WarpMode mode, float alpha,
                                         float scale) {
  std::vector<float> out(static_cast<size_t>(count) * 2);
  if (count == 0) return out;
  BindingGuard guard;
  GLuint feedback = 0;
  glGenBuffers(1, &feedback);
  glBindBuffer(GL_TRANSFORM_FEEDBACK_BUFFER, feedback);
  glBufferData(GL_TRANSFORM_FEEDBACK_BUFFER, out.size() * sizeof(float), nullptr, GL_STATIC_READ);
  glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, feedback);
  bind_common(mode, alpha, 0.0f, scale, ClipTransform{});
  glBindVertexArray(vao);
  glEnable(GL_RASTERIZER_DISCARD);
  glBeginTransformFeedback(GL_POINTS);
  glDrawArrays(GL_POINTS, 0, count);
  glEndTransformFeedback();
  glDisable(GL_RASTERIZER_DISCARD);
  glBindBuffer(GL_TRANSFORM_FEEDBACK_BUFFER, feedback);
  glGetBufferSubData(GL_TRANSFORM_FEEDBACK_BUFFER, 0, out.size() * sizeof(float), out.data());
  glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, 0);
  glDeleteBuffers(1, &feedback);
  return out;
}

std::vector<float> WarpRenderer::capture_grid(WarpMode mode, float alpha, double extent) {
  if (!ok_ || !grid_vao_ || scene_.count < 1) return {};
  return capture(grid_vao_, lines_ * 2 * samples_, mode, alpha, static_cast<float>(extent));
}

std::vector<float> WarpRenderer::capture_points(const std::vector<float>& xy, WarpMode mode,
                                                float alpha) {
  if (!ok_ || scene_.count < 1 || xy.size() < 2) return {};
  GLuint vao = 0, vbo = 0;
  std::vector<float> out;
  {
    BindingGuard guard;
    make_vertex_array(&vao, &vbo);
    glBufferData(GL_ARRAY_BUFFER, xy.size() * sizeof(float), xy.data(), GL_STATIC_DRAW);
  }
  out = capture(vao, static_cast<int>(xy.size() / 2), mode, alpha, 1.0f);
  delete_vertex_array(&vao, &vbo);
  return out;
}

}  // namespace attn::render
