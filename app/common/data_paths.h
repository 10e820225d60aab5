// Where attnlab finds its data files (configs, reproduction configs) wherever it was built or
// installed: nothing is baked in that only exists on the build machine.
#pragma once
#include <string>
#include <vector>

namespace attn {

// The running executable's absolute path; empty where the platform cannot tell.
std::string executable_path();

// The places a data file may be, in lookup order, for `relative` such as "configs/copy.json":
// <executable dir>/../share/attnlab/ (an install anywhere, a .deb, a moved prefix), the
// configured install prefix's share/attnlab/, then the source tree's assets/ (a build tree).
std::vector<std::string> data_path_candidates(const std::string& relative);

// The first candidate that exists; empty when none does.
std::string find_data_path(const std::string& relative);

}  // namespace attn
