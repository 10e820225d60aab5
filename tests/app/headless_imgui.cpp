#include "headless_imgui.h"

#include <assert.h>  // the declaration of __assert_fail defined below
#include <imgui_internal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "render/plot/figure_font.h"

namespace attn::test {
namespace {

std::mutex g_context_mutex;
std::string g_context;
thread_local AssertTrap* t_trap = nullptr;

// Special keys live at 256 + ImGuiKey_*, away from the character codes some code compares with.
constexpr int kKeyBase = 256;
constexpr ImGuiKey kKeys[] = {ImGuiKey_Tab,      ImGuiKey_LeftArrow, ImGuiKey_RightArrow,
                              ImGuiKey_UpArrow,  ImGuiKey_DownArrow, ImGuiKey_PageUp,
                              ImGuiKey_PageDown, ImGuiKey_Home,      ImGuiKey_End,
                              ImGuiKey_Delete,   ImGuiKey_Backspace, ImGuiKey_Space,
                              ImGuiKey_Enter,    ImGuiKey_Escape,    ImGuiKey_KeyPadEnter,
                              ImGuiKey_A,        ImGuiKey_C,         ImGuiKey_V,
                              ImGuiKey_X,        ImGuiKey_Y,         ImGuiKey_Z};
constexpr const char* kKeyNames[] = {
    "Tab",         "Left", "Right",  "Up",        "Down",  "PageUp", "PageDown",
    "Home",        "End",  "Delete", "Backspace", "Space", "Enter",  "Escape",
    "KeyPadEnter", "A",    "C",      "V",         "X",     "Y",      "Z"};
constexpr const char kTyped[] = "0123456789.-e+ abcxyzKQ/_,:";

}  // namespace

void set_assert_context(const std::string& context) {
  std::lock_guard<std::mutex> lock(g_context_mutex);
  g_context = context;
}

void AssertTrap::arm() {
  t_trap = this;
}

void AssertTrap::disarm() {
  if (t_trap == this) t_trap = nullptr;
}

HeadlessImGui::HeadlessImGui(float width, float height) {
  IMGUI_CHECKVERSION();
  context_ = ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.LogFilename = nullptr;
  io.DisplaySize = ImVec2(width, height);
  io.DisplayFramebufferScale = ImVec2(1, 1);
  io.DeltaTime = 1.0f / 60;
  io.BackendPlatformName = "attnlab panel harness";
  // What the window's backends declare (imgui_impl_glfw: cursors, set-mouse-pos; imgui_impl_opengl3
  // on GL 3.2+: vertex offsets, so a draw list may pass 65,536 vertices, e.g. the geometry
  // panel's CPU grid).
  io.BackendFlags |= ImGuiBackendFlags_HasMouseCursors | ImGuiBackendFlags_HasSetMousePos |
                     ImGuiBackendFlags_RendererHasVtxOffset;
  for (int i = 0; i < ImGuiKey_COUNT; ++i) io.KeyMap[i] = kKeyBase + i;
  ImGui::StyleColorsDark();
  // The window's fonts (gui/window/window.cpp): the figure font at two sizes, else ImGui's own.
  const std::string font = fig::default_font_path();
  if (std::ifstream(font, std::ios::binary).good()) {
    ImFontConfig config;
    config.OversampleH = config.OversampleV = 1;
    config.PixelSnapH = true;
    static const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2212, 0x2212,
                                      0x2026, 0x2026, 0x2190, 0x2193, 0};
    io.Fonts->AddFontFromFileTTF(font.c_str(), 15.0f, &config, kRanges);
    small_font_ = io.Fonts->AddFontFromFileTTF(font.c_str(), 12.0f, &config, kRanges);
  }
  if (!small_font_) {
    io.Fonts->Clear();
    small_font_ = io.Fonts->AddFontDefault();
  }
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(1)));
}

HeadlessImGui::~HeadlessImGui() {
  if (context_) ImGui::DestroyContext(context_);
}

void HeadlessImGui::abandon() {
  context_ = nullptr;
  ImGui::SetCurrentContext(nullptr);
}

ImVec2 RandomInput::target_point(const ImGuiIO& io) {
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  if (!drawn_.empty() && unit(rng_) < 0.75f) {
    const ImVec2 p = drawn_[rng_() % drawn_.size()];
    std::uniform_real_distribution<float> jitter(-3.0f, 3.0f);
    return ImVec2(p.x + jitter(rng_), p.y + jitter(rng_));
  }
  return ImVec2(unit(rng_) * io.DisplaySize.x, unit(rng_) * io.DisplaySize.y);
}

void RandomInput::log(const std::string& event) {
  char head[96];
  std::snprintf(head, sizeof head,
                "frame %llu at (%.0f, %.0f): ", static_cast<unsigned long long>(frame_), mouse_.x,
                mouse_.y);
  recent_.push_back(head + event);
  if (recent_.size() > 12) recent_.erase(recent_.begin());
}

std::string RandomInput::recent() const {
  std::string out;
  for (const std::string& e : recent_) out += "  " + e + "\n";
  return out;
}

void RandomInput::next_frame(ImGuiIO& io) {
  ++frame_;
  io.DeltaTime = 1.0f / 60;
  io.MouseWheel = io.MouseWheelH = 0;
  if (held_key_ >= 0) io.KeysDown[held_key_] = false, held_key_ = -1;
  io.KeyCtrl = io.KeyShift = io.KeyAlt = io.KeySuper = false;
  if (held_button_ >= 0) {  // a click's release, or one more frame of a drag
    if (--hold_frames_ <= 0) {
      io.MouseDown[held_button_] = false;
      held_button_ = -1;
    } else {
      std::uniform_real_distribution<float> delta(-40.0f, 40.0f);
      mouse_ = ImVec2(mouse_.x + delta(rng_), mouse_.y + delta(rng_) * 0.5f);
    }
    io.MousePos = mouse_;
    return;
  }
  const int action = static_cast<int>(rng_() % 100);
  if (action < 2) {  // the mouse leaves the window
    mouse_ = ImVec2(-FLT_MAX, -FLT_MAX);
    io.MousePos = mouse_;
    log("mouse out");
    return;
  }
  mouse_ = target_point(io);
  io.MousePos = mouse_;
  if (action < 30) {
    log("move");
  } else if (action < 60) {  // click: down this frame, up the next (double: again soon after)
    const int r = static_cast<int>(rng_() % 20);
    held_button_ = r < 16 ? 0 : r < 19 ? 1 : 2;
    hold_frames_ = 1;
    io.MouseDown[held_button_] = true;
    if (rng_() % 8 == 0) io.KeyCtrl = true;
    if (rng_() % 8 == 0) io.KeyShift = true;
    log(std::string(held_button_ == 0   ? "left"
                    : held_button_ == 1 ? "right"
                                        : "middle") +
        " click" + (io.KeyCtrl ? " +ctrl" : "") + (io.KeyShift ? " +shift" : ""));
  } else if (action < 70) {  // drag with the left button for a few frames
    held_button_ = 0;
    hold_frames_ = 2 + static_cast<int>(rng_() % 20);
    io.MouseDown[0] = true;
    log("drag, " + std::to_string(hold_frames_) + " frames");
  } else if (action < 78) {  // wheel (horizontal, or with Ctrl: zoom in some views)
    const int notches = 1 + static_cast<int>(rng_() % 3);
    const float turn = static_cast<float>(rng_() % 2 ? notches : -notches);
    if (rng_() % 4 == 0)
      io.MouseWheelH = turn;
    else
      io.MouseWheel = turn;
    if (rng_() % 4 == 0) io.KeyCtrl = true;
    log(std::string(io.MouseWheelH != 0 ? "horizontal " : "") + "wheel " +
        std::to_string(static_cast<int>(turn)) + (io.KeyCtrl ? " +ctrl" : ""));
  } else if (action < 90) {  // a key, sometimes with Ctrl or Shift
    const size_t k = rng_() % (sizeof kKeys / sizeof kKeys[0]);
    held_key_ = kKeyBase + kKeys[k];
    io.KeysDown[held_key_] = true;
    io.KeyCtrl = rng_() % 4 == 0;
    io.KeyShift = rng_() % 5 == 0;
    log(std::string("key ") + (io.KeyCtrl ? "Ctrl+" : "") + (io.KeyShift ? "Shift+" : "") +
        kKeyNames[k]);
  } else {  // typed text
    const int n = 1 + static_cast<int>(rng_() % 6);
    std::string typed;
    for (int i = 0; i < n; ++i) typed += kTyped[rng_() % (sizeof kTyped - 1)];
    for (const char c : typed) io.AddInputCharacter(static_cast<unsigned char>(c));
    log("type \"" + typed + "\"");
  }
}

void RandomInput::observe(const ImDrawData* data) {
  drawn_.clear();
  if (!data) return;
  // Each sample picks a draw list (a window: the menu bar, the timeline bar, a tile, a popup)
  // uniformly, then one of its vertices: a small bar's buttons are aimed at as often as a tile
  // full of plots.
  std::vector<const ImDrawList*> lists;
  for (int l = 0; l < data->CmdListsCount; ++l)
    if (data->CmdLists[l]->VtxBuffer.Size > 0) lists.push_back(data->CmdLists[l]);
  if (lists.empty()) return;
  constexpr int kSamples = 512;
  for (int i = 0; i < kSamples; ++i) {
    const ImDrawList* list = lists[rng_() % lists.size()];
    const ImVec2 p = list->VtxBuffer[static_cast<int>(rng_() % list->VtxBuffer.Size)].pos;
    if (p.x >= 0 && p.y >= 0 && p.x < data->DisplaySize.x && p.y < data->DisplaySize.y)
      drawn_.push_back(p);
  }
}

}  // namespace attn::test

// Every failed assert() in this process, ImGui's IM_ASSERT included (see headless_imgui.h).
extern "C" void __assert_fail(const char* expr, const char* file, unsigned int line,
                              const char* function) noexcept {
  char message[1024];
  std::snprintf(message, sizeof message, "assertion failed: %s (%s:%u, %s)", expr ? expr : "?",
                file ? file : "?", line, function ? function : "?");
  if (attn::test::AssertTrap* trap = attn::test::t_trap) {
    attn::test::t_trap = nullptr;
    trap->message = message;
    siglongjmp(trap->env, 1);
  }
  std::string context;
  if (attn::test::g_context_mutex.try_lock()) {
    context = attn::test::g_context;
    attn::test::g_context_mutex.unlock();
  }
  std::fprintf(stderr, "panel harness: %s\n%s\n", message, context.c_str());
  std::fflush(stderr);
  std::_Exit(attn::test::kAssertExitCode);
}
