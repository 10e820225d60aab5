// The probe editor's model (app/panels/probe/probe_editor_model.h) without a window: the field
// follows the trainer's accepted probe unless the user is editing, and what its buttons ask for.
#include <doctest/doctest.h>

#include <string>

#include "app/panels/probe/probe_editor_model.h"

using namespace attn;
using attn::gui::ProbeEditorModel;

TEST_CASE("probe editor model: the field follows the accepted probe unless being edited") {
  ProbeEditorModel m;
  Snapshot s;
  s.probe_text = "3 1 4";
  m.follow(s, /*editing=*/false);
  CHECK(m.text() == "3 1 4");
  CHECK(m.submit() == "3 1 4");
  // The user types; a snapshot with the same accepted probe leaves the typed text alone.
  m.set_text("2 7 1 8");
  m.follow(s, false);
  CHECK(m.text() == "2 7 1 8");
  // Another panel's editor changes the probe: while editing the field keeps the typed text,
  // after it the field shows the new probe.
  s.probe_text = "5 5";
  m.follow(s, /*editing=*/true);
  CHECK(m.text() == "2 7 1 8");
  m.follow(s, false);
  CHECK(m.text() == "5 5");
}

TEST_CASE("probe editor model: Task's probe empties the field and asks for the task's own") {
  ProbeEditorModel m;
  Snapshot s;
  CHECK_FALSE(ProbeEditorModel::can_reset(s));  // already the task's probe
  s.probe_text = "abc";
  CHECK(ProbeEditorModel::can_reset(s));
  m.follow(s, false);
  CHECK(m.reset().empty());
  CHECK(m.text().empty());
  CHECK(m.submit().empty());
}

TEST_CASE("probe editor model: the hint and whether it is shown depend on the task") {
  Snapshot s;
  s.task = "text";
  CHECK(std::string(ProbeEditorModel::hint(s)).find("characters") != std::string::npos);
  s.task = "copy";
  CHECK(std::string(ProbeEditorModel::hint(s)).find("token ids") != std::string::npos);
  CHECK(ProbeEditorModel::shown(s));
  s.probe_image.rows = s.probe_image.cols = 2;
  s.probe_image.pixels = {0, 1, 1, 0};
  CHECK_FALSE(ProbeEditorModel::shown(s));  // image tasks pick a test image instead
}

TEST_CASE("probe editor model: typed text longer than the field is cut at its capacity") {
  ProbeEditorModel m;
  m.set_text(std::string(2 * ProbeEditorModel::kCapacity, 'x'));
  CHECK(m.text().size() == ProbeEditorModel::kCapacity - 1);
}
