// doctest runner for the panel models (test_panel_models): each panel's plain model (its controls'
// state, the figures it shows for a snapshot, its report), tested without a window. The binary
// links no ImGui and no GL: it links attnlab_panel_models (every app/panels/*/*_model.cpp, built
// without ImGui's headers; app/CMakeLists.txt), so a model that includes ImGui does not build. One file per panel under
// tests/app/panel_models/ (test_<panel>.cpp), picked up by the glob.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
