// Draw guard: a fault while drawing (a Dear ImGui assertion, an exception thrown by a panel, a
// panel that leaves ImGui's stacks unbalanced) never takes the window, or the run it trains, down.
// Contract:
//  - ImGui here is Debian's prebuilt libimgui.a, whose IM_ASSERT is assert(), so its assertions
//    reach glibc's __assert_fail. The attnlab executable links with -Wl,--wrap=__assert_fail
//    (app/CMakeLists.txt): every assert() compiled into the executable's own objects and into
//    libimgui.a calls __wrap___assert_fail below instead (shared libraries such as LibTorch keep
//    their own). On the thread that called route_asserts_to_draw_faults() (the UI thread), it
//    throws DrawFault naming the file, line, function and expression; on any other thread it
//    prints glibc's message and aborts, as assert() does. Without the link option nothing here
//    is called and an assertion aborts as before.
//  - draw_guarded(name, body) runs body inside the window it was begun in (a panel's child
//    window). An exception from body, or stacks it leaves unbalanced (a push without its pop, a
//    Begin without its End), is caught: every window, table, tab bar, group, push and disabled
//    block body opened is closed again (ImGui's own ErrorCheckEndWindowRecover per window), the
//    error is drawn in red in the window and recorded (take_draw_faults), and the caller goes on
//    drawing its other panels. Returns the error ("" when body drew cleanly).
//  - recover_frame() is the net under a whole frame: after a fault outside any guarded panel
//    (the menu bar, the timeline, a dialog) it closes what is open and ends the frame. It returns
//    false when ImGui's state could not be repaired (a fault inside End() itself); the caller
//    then rebuilds the ImGui context (Window::rebuild_imgui).
//  - Test hook: ATTN_TEST_DRAW_FAULT=WHERE:KIND makes the 60th guarded draw of WHERE (a panel
//    name, or "frame" for the frame loop outside the panels) fail once, with KIND "assert" (a
//    PopStyleColor without its push: ImGui's own assertion), "throw" (a std::runtime_error) or
//    "leak" (a PushStyleColor without its pop). maybe_inject_test_fault(WHERE) is that hook.
//  - UI thread only (but the assertion handler, which any thread may reach).
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::gui {

class DrawFault : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// From now on ImGui's (and attnlab's own) assertions on the calling thread throw DrawFault.
void route_asserts_to_draw_faults();

std::string draw_guarded(const std::string& name, const std::function<void()>& body);

bool recover_frame(std::string* log);

// A fault caught so far: where ("panel loss", "frame") and what.
struct DrawFaultRecord {
  std::string where;
  std::string what;
};
// The faults caught since the last call, oldest first.
std::vector<DrawFaultRecord> take_draw_faults();
// Records a fault caught outside draw_guarded (the frame loop's).
void record_draw_fault(const std::string& where, const std::string& what);

void maybe_inject_test_fault(const std::string& where);

}  // namespace attn::gui
