// attnlab_mechanisms_json: writes the mechanism registry as data (attention_mechanism_table,
// core/attention/registry.h) for the Python package, which ships it as
// python/attnlab/mechanisms.json and reads its rules from it instead of copies of its own.
//   attnlab_mechanisms_json                 prints the table
//   attnlab_mechanisms_json --write FILE    writes it to FILE
//   attnlab_mechanisms_json --check FILE    exit 1 with how to regenerate when FILE differs
//   attnlab_mechanisms_json --resolve CONFIG  prints the config's resolved model.attention, or
//                                           its refusal (exit 2): what the Python package's
//                                           config.resolve must match (tests/python/
//                                           test_mechanism_rules.py)
// (ctest mechanisms_json_current runs --check on the committed file; the build target
// mechanisms_json runs --write on it). Torch-free. It lives in core/config/, the layer above the
// registry, because --resolve parses configs.
#include <cstdio>
#include <exception>
#include <string>

#include "core/attention/registry.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/config/config.h"

namespace {

std::string table_text() {
  const nlohmann::json doc = {
      {"about",
       "Generated from attnlab's mechanism registry (core/attention/mechanisms.def and each "
       "mechanism's descriptor) by attnlab_mechanisms_json. Do not edit: regenerate with "
       "`cmake --build build --target mechanisms_json`."},
      {"format", 1},
      {"mechanisms", attn::attention_mechanism_table()}};
  return doc.dump(2) + "\n";
}

// The first line where a and b differ, 1-based.
size_t first_difference(const std::string& a, const std::string& b) {
  size_t line = 1;
  for (size_t i = 0; i < a.size() && i < b.size() && a[i] == b[i]; ++i)
    if (a[i] == '\n') ++line;
  return line;
}

int check(const std::string& path, const std::string& text) {
  std::string committed;
  try {
    committed = attn::read_regular_file(path, uint64_t(1) << 24);
  } catch (const std::exception& e) {
    committed = "";
  }
  if (committed == text) return 0;
  std::fprintf(stderr,
               "%s differs from the mechanism registry of this build (first at line %zu): a "
               "descriptor changed (a default, a range, a rule) and the Python package would "
               "apply the old one. Regenerate it with `cmake --build build --target "
               "mechanisms_json` (or attnlab_mechanisms_json --write %s) and commit it.\n",
               path.c_str(), first_difference(committed, text), path.c_str());
  return 1;
}

int resolve(const std::string& config_path) {
  try {
    const attn::ExperimentConfig c = attn::load_config_file(config_path);
    std::printf("%s\n", nlohmann::json(c.model.attention).dump().c_str());
    return 0;
  } catch (const attn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string text = table_text();
    const std::string mode = argc > 1 ? argv[1] : "";
    if (argc == 1) {
      std::fputs(text.c_str(), stdout);
      return 0;
    }
    if (argc == 3 && mode == "--check") return check(argv[2], text);
    if (argc == 3 && mode == "--resolve") return resolve(argv[2]);
    if (argc == 3 && mode == "--write") {
      attn::write_file_atomic(argv[2], text);
      return 0;
    }
    std::fprintf(
        stderr,
        "usage: attnlab_mechanisms_json [--write FILE | --check FILE | --resolve CONFIG]\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab_mechanisms_json: %s\n", e.what());
    return 1;
  }
}
