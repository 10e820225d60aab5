// The headless panel harness's ImGui side (tests/app/panel_harness.cpp): an ImGui context with no
// platform or renderer backend, a seeded random input driver, and a trap for ImGui's assertions.
// Contract:
//  - HeadlessImGui: one live at a time, UI thread only. Backend flags as the window's GLFW and
//    OpenGL 3 backends set them (vertex offsets included). The font atlas is built (RGBA32) with a
//    fake texture id; Render() produces draw data that nothing renders. No ini file is written.
//  - RandomInput: the same seed gives the same input sequence (the panels' own state may still
//    differ between runs: trainers run on their own threads). Each frame it moves the mouse to a
//    point of something drawn last frame (a vertex of a draw list chosen uniformly: widgets,
//    text, frames, plots), to a
//    random point, or along a drag; presses, holds and releases buttons (left, right, middle;
//    double clicks), turns the wheel, and presses navigation/editing keys (with Ctrl/Shift) and
//    types characters (digits, letters, '.', '-', 'e', spaces).
//  - Assertions: this binary defines glibc's __assert_fail, which Debian's libimgui.a (1.86, built
//    with asserts) calls for every IM_ASSERT, so every check inside ImGui's library (Begin/End and
//    every push/pop stack at each window's End and at EndFrame, ID stack, popups, tables) is
//    caught, as are assert()s anywhere else in the process. A failed one prints the context set by
//    set_assert_context() and either jumps back to an armed AssertTrap (on the thread that armed
//    it) or exits the process with kAssertExitCode. IM_ASSERTs inlined from imgui.h into
//    attnlab's own files are compiled out where NDEBUG is set (Release builds).
#pragma once
#include <imgui.h>
#include <setjmp.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

struct ImFont;

namespace attn::test {

constexpr int kAssertExitCode = 3;

// Printed with a failed assertion: what the harness was doing (state, frame, seed, replay).
void set_assert_context(const std::string& context);

// A recovery point for a failed assertion on this thread: arm it right after sigsetjmp returned 0.
// After a jump, message holds what failed; the ImGui context is then mid-frame and must not be
// used again (HeadlessImGui::abandon()).
struct AssertTrap {
  sigjmp_buf env;
  std::string message;
  void arm();
  void disarm();
  ~AssertTrap() { disarm(); }
};

class HeadlessImGui {
 public:
  HeadlessImGui(float width, float height);
  ~HeadlessImGui();
  HeadlessImGui(const HeadlessImGui&) = delete;
  HeadlessImGui& operator=(const HeadlessImGui&) = delete;
  ImFont* small_font() const { return small_font_; }
  // After an assertion: the context is left as it is (never destroyed; it may be mid-frame).
  void abandon();

 private:
  ImGuiContext* context_ = nullptr;
  ImFont* small_font_ = nullptr;
};

class RandomInput {
 public:
  explicit RandomInput(uint64_t seed) : rng_(seed) {}
  // Sets io's mouse, wheel, keys and characters for the next frame (call before NewFrame).
  void next_frame(ImGuiIO& io);
  // Remembers points of what was drawn (call after Render).
  void observe(const ImDrawData* data);
  // The last few inputs, for the failure message.
  std::string recent() const;

 private:
  ImVec2 target_point(const ImGuiIO& io);
  void log(const std::string& event);

  std::mt19937_64 rng_;
  std::vector<ImVec2> drawn_;  // points of last frame's draw lists
  ImVec2 mouse_{-1, -1};
  int held_button_ = -1;  // a button held down (a drag while > 0 frames left)
  int hold_frames_ = 0;   // frames left before it is released
  int held_key_ = -1;     // index into io.KeysDown released next frame
  std::vector<std::string> recent_;
  uint64_t frame_ = 0;
};

}  // namespace attn::test
