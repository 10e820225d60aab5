#include "app/gui/window/window.h"

// epoxy must come before GLFW; GLFW_INCLUDE_NONE keeps GLFW from including a GL header itself.
#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "render/plot/figure_draw.h"
#include "render/plot/figure_font.h"

namespace attn::gui {
namespace {

constexpr float kFontSize = 15.0f, kSmallFontSize = 12.0f;

std::string g_glfw_error;    // last message from the GLFW error callback
Window* g_window = nullptr;  // the one window, for the C callbacks below

void glfw_error_callback(int code, const char* description) {
  g_glfw_error = description ? description : ("GLFW error " + std::to_string(code));
}

std::string default_layout_path() {
  namespace fs = std::filesystem;
  fs::path base;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    base = fs::path(home) / ".config";
  } else {
    return {};
  }
  return (base / "attnlab" / "layout.ini").string();
}

bool readable(const char* path) {
  return std::ifstream(path, std::ios::binary).good();
}

}  // namespace

std::unique_ptr<Window> Window::open(const WindowOptions& options, std::string* error) {
  glfwSetErrorCallback(glfw_error_callback);
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((!display || !*display) && (!wayland || !*wayland)) {
    // Say it plainly rather than passing on GLFW's platform-specific wording.
    if (error) *error = "no display: DISPLAY is unset";
    return nullptr;
  }
  // Mesa's software rasteriser (llvmpipe, the renderer of GPU-less machines) starts one thread
  // per core; the trainer thread keeps a core busy, and the two then contend: at 1920x1080 on
  // 2 cores frame p99 fell from 15.9 to 10.9-13.4 ms with one rasteriser thread fewer
  // (tests/e2e/bench_frames.sh). Left alone when the user set it; no effect on a GPU driver.
  if (!std::getenv("LP_NUM_THREADS")) {
    const unsigned cores = std::max(2u, std::thread::hardware_concurrency());
    setenv("LP_NUM_THREADS", std::to_string(cores - 1).c_str(), 0);
  }
  if (!glfwInit()) {
    if (error) *error = g_glfw_error.empty() ? "glfwInit failed" : g_glfw_error;
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  GLFWwindow* w =
      glfwCreateWindow(options.width, options.height, options.title.c_str(), nullptr, nullptr);
  if (!w) {
    if (error) *error = g_glfw_error.empty() ? "glfwCreateWindow failed" : g_glfw_error;
    glfwTerminate();
    return nullptr;
  }
  std::unique_ptr<Window> window(new Window());
  window->window_ = w;
  g_window = window.get();
  glfwMakeContextCurrent(w);
  glfwSwapInterval(options.vsync ? 1 : 0);
  if (std::getenv("ATTN_GL_INFO"))  // which GL renders (bench/gpu_window.sh: the GPU's, or Mesa's?)
    std::fprintf(stderr, "attnlab: GL_RENDERER %s; GL_VENDOR %s; GL_VERSION %s\n",
                 reinterpret_cast<const char*>(glGetString(GL_RENDERER)),
                 reinterpret_cast<const char*>(glGetString(GL_VENDOR)),
                 reinterpret_cast<const char*>(glGetString(GL_VERSION)));

  // Activity tracking for frame pacing. Installed before ImGui's callbacks, which chain to these.
  glfwSetCursorPosCallback(w, [](GLFWwindow* win, double, double) { on_event(win); });
  glfwSetMouseButtonCallback(w, [](GLFWwindow* win, int, int, int) { on_event(win); });
  glfwSetScrollCallback(w, [](GLFWwindow* win, double, double) { on_event(win); });
  glfwSetKeyCallback(w, [](GLFWwindow* win, int key, int, int action, int mods) {
    on_event(win);
    if (g_window && action == GLFW_PRESS && g_window->key_presses_.size() < 64)
      g_window->key_presses_.push_back({key, mods});
  });
  glfwSetCharCallback(w, [](GLFWwindow* win, unsigned) { on_event(win); });
  glfwSetFramebufferSizeCallback(w, [](GLFWwindow* win, int, int) { on_event(win); });
  glfwSetWindowRefreshCallback(w, [](GLFWwindow* win) { on_event(win); });

  window->options_ = options;
  window->setup_imgui(options);
  return window;
}

void Window::build_fonts(float scale) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  small_font_ = nullptr;
  ImGui::GetStyle() = ImGuiStyle();
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 3.0f;
  style.FrameRounding = 2.0f;
  style.ScaleAllSizes(scale);
  style.AntiAliasedLinesUseTex = false;  // line AA from geometry: the atlas is sampled nearest
  // Opaque backgrounds: with 0.94 alpha, whatever lies below shows through and looks like data.
  // Tiles never overlap, so child windows need no fill of their own (each full-size fill costs
  // llvmpipe about a millisecond at 1920x1080): the framebuffer is cleared to WindowBg instead.
  for (const ImGuiCol c : {ImGuiCol_WindowBg, ImGuiCol_PopupBg, ImGuiCol_MenuBarBg})
    style.Colors[c].w = 1.0f;
  // The figures' dark theme background (fig::Theme::dark()): live figures need no fill of their
  // own (gui/plot/live_figure.cpp).
  style.Colors[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.09f, 0.10f, 1.0f);

  // The figure font (DejaVu Sans, or $ATTNLAB_FONT): the same file the exports embed.
  const std::string font_path = fig::default_font_path();
  const char* font_file = font_path.c_str();
  // Checked first: ImGui asserts when a font file is missing.
  if (readable(font_file)) {
    // Glyphs rasterised 1:1 and snapped to whole pixels, so the atlas can be sampled with
    // GL_NEAREST (see begin_frame) and text stays crisp.
    ImFontConfig config;
    config.OversampleH = config.OversampleV = 1;
    config.PixelSnapH = true;
    // Latin-1 plus what the figures write: Greek (lambda, theta), the minus sign of negative
    // ticks (U+2212) and the ellipsis of shortened titles (U+2026); '?' otherwise.
    static const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2212, 0x2212,
                                      0x2026, 0x2026, 0x2190, 0x2193, 0};
    io.Fonts->AddFontFromFileTTF(font_file, kFontSize * scale, &config, kRanges);
    small_font_ = io.Fonts->AddFontFromFileTTF(font_file, kSmallFontSize * scale, &config, kRanges);
  }
  if (!small_font_) {
    io.Fonts->Clear();
    small_font_ = io.Fonts->AddFontDefault();
    if (notes_.find("built-in font") == std::string::npos)
      notes_ += std::string("Font: ImGui's built-in font (") + font_file +
                " not found; install fonts-dejavu-core)\n";
  }
  applied_scale_ = scale;
}

void Window::set_ui_scale(float scale) {
  wanted_scale_ = scale > 0 ? std::clamp(scale, 0.5f, 4.0f) : monitor_scale_;
}

void Window::on_event(GLFWwindow*) {
  if (g_window) g_window->last_event_time_ = glfwGetTime();
}

void Window::setup_imgui(const WindowOptions& options) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();

  layout_path_ = options.layout_path.empty() ? default_layout_path() : options.layout_path;
  if (!layout_path_.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path parent = fs::path(layout_path_).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) {
      notes_ += "Layout not saved: cannot create " + parent.string() + " (" + ec.message() + ")\n";
      layout_path_.clear();
    }
  } else {
    notes_ += "Layout not saved: neither XDG_CONFIG_HOME nor HOME is set\n";
  }
  io.IniFilename = layout_path_.empty() ? nullptr : layout_path_.c_str();

  // Scale for HiDPI monitors; 1 under Xvfb.
  float scale = 1.0f;
  glfwGetWindowContentScale(window_, &scale, nullptr);
  if (!(scale >= 1.0f && scale <= 4.0f)) scale = 1.0f;
  monitor_scale_ = wanted_scale_ = scale;
  build_fonts(scale);

  ImGui_ImplGlfw_InitForOpenGL(window_, /*install_callbacks=*/true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  imgui_ready_ = true;
  if (!notes_.empty() && notes_.back() == '\n') notes_.pop_back();
}

void Window::rebuild_imgui() {
  const float scale = applied_scale_;
  if (imgui_ready_) {
    imgui_ready_ = false;
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();  // gives GLFW's callbacks back to ours; setup chains to them again
    ImGui::DestroyContext();
  }
  font_sampling_set_ = false;
  notes_.clear();  // setup_imgui says again what still holds
  setup_imgui(options_);
  wanted_scale_ = scale;  // the user's scale, applied at the next begin_frame
}

Window::~Window() {
  if (imgui_ready_) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();  // writes the layout file
  }
  if (window_) glfwDestroyWindow(window_);
  glfwTerminate();
  g_window = nullptr;
}

bool Window::should_close() const {
  return glfwWindowShouldClose(window_);
}

void Window::request_close() {
  glfwSetWindowShouldClose(window_, GLFW_TRUE);
}

bool Window::hidden() const {
  // Below this size ImGui would clamp every panel into the corner and the layout file would
  // keep the damage, so a tiny window is treated like a minimised one.
  constexpr int kMinDrawable = 64;
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  return glfwGetWindowAttrib(window_, GLFW_ICONIFIED) || w < kMinDrawable || h < kMinDrawable;
}

void Window::framebuffer_size(int* width, int* height) const {
  glfwGetFramebufferSize(window_, width, height);
}

void Window::begin_frame() {
  if (wanted_scale_ != applied_scale_) {
    build_fonts(wanted_scale_);
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
    font_sampling_set_ = false;
  }
  ImGui_ImplOpenGL3_NewFrame();  // creates the font texture on its first call
  if (!font_sampling_set_) {
    // Every ImGui fragment samples the font atlas (solid fills use its white texel). Nearest
    // instead of bilinear sampling cuts the frame time by about a quarter on Mesa's software
    // rasteriser (llvmpipe), the usual renderer on the GPU-less machines this tool targets.
    font_sampling_set_ = true;
    const auto tex = static_cast<GLuint>(reinterpret_cast<intptr_t>(ImGui::GetIO().Fonts->TexID));
    if (tex != 0) {
      GLint previous = 0;
      glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
      glBindTexture(GL_TEXTURE_2D, tex);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
      glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
    }
  }
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void Window::render() {
  ImGui::Render();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  glViewport(0, 0, w, h);
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void Window::swap() {
  glfwSwapBuffers(window_);
}

void Window::hide() {
  glfwHideWindow(window_);
}

}  // namespace attn::gui
