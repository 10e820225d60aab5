// The Connections panel's (ky_connections_panel.h) row of the panel table, registered as every
// mechanism panel's is (app/panels/mechanism_panels.h). In a file of its own only while another
// change of issue 47 reworks ky_connections_panel.cpp; it belongs at the end of that file.
#include "app/panels/mechanism_panels.h"
#include "app/panels/mechanisms/ky_connections_panel.h"

namespace attn::gui {
namespace {

const bool kRegistered =
    register_mechanism_panel({"ky",
                              /*replaces_attention=*/false,
                              {"connections", "Connections", TilePlace::Right,
                               [](const PanelSetup& s) { return experiment_uses(s, "ky"); },
                               make_mechanism_panel<KyConnectionsPanel>}});

}  // namespace
}  // namespace attn::gui
