#include "app/gui/window/draw_guard.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace attn::gui {
namespace {

thread_local bool t_asserts_throw = false;
std::vector<DrawFaultRecord> g_faults;

std::string where_of(const char* file, unsigned line, const char* function) {
  return std::string(file ? file : "?") + ":" + std::to_string(line) + " (" +
         (function ? function : "?") + ")";
}

// ImGui's recovery log, kept for the fault's message.
void log_to_string(void* user, const char* fmt, ...) {
  char line[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  auto* out = static_cast<std::string*>(user);
  if (out) *out += (out->empty() ? "" : "; ") + std::string(line);
}

// ImGui's state at the start of a guarded body, in the window it draws into.
struct Mark {
  ImGuiWindow* window = nullptr;
  int windows = 0;
  ImGuiStackSizes sizes;
  ImGuiTable* table = nullptr;
  ImGuiTabBar* tab_bar = nullptr;
  int tree_depth = 0;
  int disabled = 0;

  Mark() {
    ImGuiContext& g = *GImGui;
    window = g.CurrentWindow;
    windows = g.CurrentWindowStack.Size;
    sizes.SetToCurrentState();
    table = g.CurrentTable;
    tab_bar = g.CurrentTabBar;
    tree_depth = window ? window->DC.TreeDepth : 0;
    disabled = g.DisabledStackSize;
  }

  // What the body left open ("" = nothing): each stack that grew, named by its push and pop.
  std::string unbalanced() const {
    ImGuiContext& g = *GImGui;
    if (g.CurrentWindowStack.Size != windows || g.CurrentWindow != window)
      return "a Begin/BeginChild without its End/EndChild (window '" +
             std::string(g.CurrentWindow ? g.CurrentWindow->Name : "?") + "' left open)";
    std::string out;
    auto grew = [&](const char* what, int now, int then) {
      if (now > then)
        out += (out.empty() ? "" : ", ") + std::string(what) + " (" + std::to_string(now - then) +
               " left open)";
    };
    grew("PushStyleColor/PopStyleColor", g.ColorStack.Size, sizes.SizeOfColorStack);
    grew("PushStyleVar/PopStyleVar", g.StyleVarStack.Size, sizes.SizeOfStyleVarStack);
    grew("PushID/PopID", window->IDStack.Size, sizes.SizeOfIDStack);
    grew("PushFont/PopFont", g.FontStack.Size, sizes.SizeOfFontStack);
    grew("BeginGroup/EndGroup", g.GroupStack.Size, sizes.SizeOfGroupStack);
    grew("PushItemFlag/PopItemFlag", g.ItemFlagsStack.Size, sizes.SizeOfItemFlagsStack);
    grew("PushFocusScope/PopFocusScope", g.FocusScopeStack.Size, sizes.SizeOfFocusScopeStack);
    grew("BeginDisabled/EndDisabled", g.DisabledStackSize, disabled);
    grew("TreeNode/TreePop", window->DC.TreeDepth, tree_depth);
    if (g.CurrentTable != table)
      out += (out.empty() ? "" : ", ") + std::string("BeginTable/EndTable");
    if (g.CurrentTabBar != tab_bar)
      out += (out.empty() ? "" : ", ") + std::string("BeginTabBar/EndTabBar");
    return out.empty() ? out : "unbalanced " + out;
  }

  // Closes what the body opened: the windows it began (ImGui's own per-window recovery, then
  // End/EndChild), then, in the mark's window, every table, tab bar, tree, group, push and
  // disabled block above the mark. Throws DrawFault when ImGui cannot be repaired.
  void restore(std::string* log) const {
    ImGuiContext& g = *GImGui;
    while (g.CurrentWindowStack.Size > windows) {
      ImGui::ErrorCheckEndWindowRecover(log_to_string, log);
      if (g.CurrentWindow->Flags & ImGuiWindowFlags_ChildWindow)
        ImGui::EndChild();
      else
        ImGui::End();
    }
    if (g.CurrentWindow != window) throw DrawFault("the window stack is damaged below the panel");
    while (g.CurrentTable && g.CurrentTable != table &&
           (g.CurrentTable->OuterWindow == window || g.CurrentTable->InnerWindow == window))
      ImGui::EndTable();
    while (g.CurrentTabBar && g.CurrentTabBar != tab_bar) ImGui::EndTabBar();
    while (window->DC.TreeDepth > tree_depth) ImGui::TreePop();
    while (g.GroupStack.Size > sizes.SizeOfGroupStack) ImGui::EndGroup();
    while (window->IDStack.Size > sizes.SizeOfIDStack) ImGui::PopID();
    while (g.DisabledStackSize > disabled) ImGui::EndDisabled();
    while (g.ColorStack.Size > sizes.SizeOfColorStack) ImGui::PopStyleColor();
    while (g.ItemFlagsStack.Size > sizes.SizeOfItemFlagsStack) ImGui::PopItemFlag();
    while (g.StyleVarStack.Size > sizes.SizeOfStyleVarStack) ImGui::PopStyleVar();
    while (g.FocusScopeStack.Size > sizes.SizeOfFocusScopeStack) ImGui::PopFocusScope();
    while (g.FontStack.Size > sizes.SizeOfFontStack) ImGui::PopFont();
  }
};

// ATTN_TEST_DRAW_FAULT=WHERE:KIND, parsed once.
struct TestFault {
  std::string where, kind;
  std::map<std::string, int> draws;
  bool fired = false;
};

TestFault& test_fault() {
  static TestFault t = [] {
    TestFault f;
    const char* env = std::getenv("ATTN_TEST_DRAW_FAULT");
    if (!env || !*env) return f;
    const std::string s = env;
    const size_t colon = s.find(':');
    f.where = s.substr(0, colon);
    f.kind = colon == std::string::npos ? "assert" : s.substr(colon + 1);
    return f;
  }();
  return t;
}

}  // namespace

void route_asserts_to_draw_faults() {
  t_asserts_throw = true;
}

std::string draw_guarded(const std::string& name, const std::function<void()>& body) {
  const Mark mark;
  std::string error;
  try {
    maybe_inject_test_fault(name);
    body();
    error = mark.unbalanced();
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an unknown exception";
  }
  if (error.empty()) return error;
  std::string log;
  mark.restore(&log);  // a DrawFault from here goes to the frame loop's net (recover_frame)
  record_draw_fault("panel " + name, error);
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
  ImGui::TextWrapped(
      "This panel failed to draw: %s\nIt is drawn again next frame; the run saved and training "
      "goes on.",
      error.c_str());
  ImGui::PopStyleColor();
  return error;
}

bool recover_frame(std::string* log) {
  try {
    ImGuiContext& g = *GImGui;
    if (!g.WithinFrameScope) return true;  // the frame had ended: nothing open
    ImGui::ErrorCheckEndFrameRecover(log_to_string, log);
    ImGui::EndFrame();
    return true;
  } catch (const std::exception& e) {
    log_to_string(log, "%s", e.what());
    return false;
  }
}

std::vector<DrawFaultRecord> take_draw_faults() {
  std::vector<DrawFaultRecord> out;
  out.swap(g_faults);
  return out;
}

void record_draw_fault(const std::string& where, const std::string& what) {
  if (g_faults.size() < 64) g_faults.push_back({where, what});
}

void maybe_inject_test_fault(const std::string& where) {
  TestFault& t = test_fault();
  if (t.fired || t.where != where || ++t.draws[where] < 60) return;
  t.fired = true;
  if (t.kind == "throw") throw std::runtime_error("test fault (ATTN_TEST_DRAW_FAULT) in " + where);
  if (t.kind == "leak") {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0, 1, 1));  // never popped
    return;
  }
  // "assert": a pop without its push, as the Latest button did: ImGui's own assertion (the
  // window's ID stack holds only the window's own ID at the start of a panel and of a frame).
  ImGui::PopID();
}

}  // namespace attn::gui

// Every assert() linked into the executable (libimgui.a's IM_ASSERT included) comes here with
// -Wl,--wrap=__assert_fail: see the header.
extern "C" void __wrap___assert_fail(const char* assertion, const char* file, unsigned int line,
                                     const char* function) {
  if (attn::gui::t_asserts_throw)
    throw attn::gui::DrawFault(std::string("assertion failed: ") + (assertion ? assertion : "?") +
                               " at " + attn::gui::where_of(file, line, function));
  std::fprintf(stderr, "attnlab: %s:%u: %s: Assertion `%s' failed.\n", file ? file : "?", line,
               function ? function : "?", assertion ? assertion : "?");
  std::abort();
}
