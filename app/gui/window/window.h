// Window: the GLFW window, its OpenGL 3.3 core context and the Dear ImGui context.
// Contract:
//  - open() returns nullptr and sets *error to a one-line reason ("no display: DISPLAY is
//    unset" or GLFW's own message) when no window can be made; it never exits the process.
//  - One Window per process, used from the thread that opened it. The destructor shuts down
//    ImGui (which writes the layout file), destroys the context and terminates GLFW: GL objects
//    (textures) must be released before it runs.
//  - Layout persists in options.layout_path, or $XDG_CONFIG_HOME/attnlab/layout.ini
//    (~/.config/attnlab/layout.ini); the directory is created. layout_path() is empty when no
//    writable location exists (the layout is then not saved, and notes() says so).
//  - Opaque: window, child and popup backgrounds have alpha 1 (nothing shows through).
//  - Fonts: DejaVu Sans (regular and a small size for tick and token labels); if the file is
//    missing, ImGui's built-in font is used and notes() says so.
#pragma once
#include <memory>
#include <string>
#include <vector>

struct GLFWwindow;
struct ImFont;

namespace attn::gui {

struct WindowOptions {
  int width = 1280, height = 800;
  bool vsync = true;
  std::string layout_path;  // empty: the per-user default
  std::string title = "attnlab";
};

// A key press seen by GLFW (GLFW_KEY_*, GLFW_MOD_* bits). Collected from the key callback, so a
// tap shorter than a frame is never lost (ImGui 1.86 only sees keys held at frame start).
struct KeyPress {
  int key = 0;
  int mods = 0;
};

class Window {
 public:
  static std::unique_ptr<Window> open(const WindowOptions& options, std::string* error);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  bool should_close() const;
  void request_close();  // as if the user closed the window (the layout is saved on the way out)
  // True while iconified or the framebuffer is (nearly) zero-size: skip drawing then.
  bool hidden() const;
  void framebuffer_size(int* width, int* height) const;
  // Seconds (glfwGetTime) of the last input or window event: frame pacing stays fast after one.
  double last_event_time() const { return last_event_time_; }
  // Key presses since the last call (repeats excluded), oldest first.
  std::vector<KeyPress> take_key_presses() {
    std::vector<KeyPress> out;
    out.swap(key_presses_);
    return out;
  }

  // Scale of fonts and sizes (0.5..4; 0: the monitor's content scale), applied at the next
  // begin_frame() by rebuilding the fonts; call between frames.
  void set_ui_scale(float scale);
  float ui_scale() const { return applied_scale_; }

  // Destroys the ImGui context and makes a fresh one (fonts at the current UI scale, the
  // layout file re-read): the last resort after a drawing fault left ImGui's state beyond repair
  // (gui/window/draw_guard.h). Call between frames; GL textures of panels are untouched.
  void rebuild_imgui();

  void begin_frame();  // ImGui new frame
  void render();       // ImGui render into the back buffer (cleared first)
  void swap();
  void hide();

  ImFont* small_font() const { return small_font_; }
  const std::string& notes() const { return notes_; }  // for the Run panel; may be empty
  const std::string& layout_path() const { return layout_path_; }

 private:
  Window() = default;
  void setup_imgui(const WindowOptions& options);
  void build_fonts(float scale);  // fonts and style at `scale`
  static void on_event(GLFWwindow* w);

  WindowOptions options_;  // for rebuild_imgui
  GLFWwindow* window_ = nullptr;
  bool imgui_ready_ = false;
  bool font_sampling_set_ = false;
  ImFont* small_font_ = nullptr;
  float monitor_scale_ = 1, applied_scale_ = 1, wanted_scale_ = 1;
  std::string notes_;
  std::string layout_path_;  // must outlive the ImGui context (io.IniFilename points into it)
  double last_event_time_ = 0;
  std::vector<KeyPress> key_presses_;
};

}  // namespace attn::gui
