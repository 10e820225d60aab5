#include "app/cli/repro/repro_provenance.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/base/error.h"
#include "core/base/version.h"
#include "core/json/json_reader.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// FIPS 180-4's SHA-256, fed in pieces.
class Sha256 {
 public:
  void update(const unsigned char* data, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      block_[fill_++] = data[i];
      if (fill_ == 64) {
        compress();
        fill_ = 0;
      }
    }
    bytes_ += n;
  }
  std::string hex() {
    const uint64_t bits = bytes_ * 8;
    const unsigned char one = 0x80, zero = 0;
    update(&one, 1);
    while (fill_ != 56) update(&zero, 1);
    for (int i = 7; i >= 0; --i) {
      const unsigned char b = static_cast<unsigned char>(bits >> (8 * i));
      update(&b, 1);
    }
    char out[65];
    for (int i = 0; i < 8; ++i) std::snprintf(out + 8 * i, 9, "%08x", h_[i]);
    return std::string(out, 64);
  }

 private:
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void compress() {
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (uint32_t(block_[4 * i]) << 24) | (uint32_t(block_[4 * i + 1]) << 16) |
             (uint32_t(block_[4 * i + 2]) << 8) | uint32_t(block_[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 =
          h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    const uint32_t add[8] = {a, b, c, d, e, f, g, h};
    for (int i = 0; i < 8; ++i) h_[i] += add[i];
  }

  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> block_{};
  size_t fill_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace

std::string sha256_hex(const std::string& bytes) {
  Sha256 s;
  s.update(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  return s.hex();
}

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot be read to hash it");
  Sha256 s;
  std::array<char, 1 << 16> buf;
  while (in) {
    in.read(buf.data(), buf.size());
    s.update(reinterpret_cast<const unsigned char*>(buf.data()), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(path + ": read failed while hashing it");
  return s.hex();
}

json this_binary_sha256() {
  try {
    return sha256_file("/proc/self/exe");
  } catch (const Error&) {
    return nullptr;  // no /proc (not Linux): the commit still names the build
  }
}

json report_provenance(const ReproPlan& plan, const ReproRuns& runs) {
  const json binary = this_binary_sha256();
  std::map<std::string, int> commits;
  for (const RunDirectory& r : runs.runs)
    ++commits[r.summary.is_object() ? r.summary.value("commit", "unrecorded") : "unrecorded"];
  return {{"manifest", "assets/configs/repro/" + plan.paper + "/repro.json"},
          {"manifest_sha256", sha256_file((fs::path(plan.dir) / "repro.json").string())},
          {"binary_sha256", binary},
          {"commit", commit_string()},
          {"run_commits", commits}};
}

std::string provenance_markdown(const json& p, int seeds_override) {
  auto short_hash = [](const json& h) {
    return h.is_string() ? "`" + h.get<std::string>().substr(0, 16) + "`" : std::string("-");
  };
  std::string runs;
  for (const auto& [commit, n] : p.at("run_commits").items())
    runs += (runs.empty() ? "" : ", ") + ("`" + commit.substr(0, 12) + "`") + " (" +
            std::to_string(n.get<int>()) + ")";
  std::string md = "Provenance: " + p.at("manifest").get<std::string>() + " sha256 " +
                   short_hash(p.at("manifest_sha256")) + "; this report's binary sha256 " +
                   short_hash(p.at("binary_sha256")) + ", commit `" +
                   p.at("commit").get<std::string>().substr(0, 12) +
                   "`; the runs' commits (runs): " + (runs.empty() ? "-" : runs) + ".\n\n";
  if (seeds_override > 0)
    md += "> **--seeds " + std::to_string(seeds_override) +
          "**: every arm's seed count is overridden; they are not the counts the manifest "
          "fixed in advance.\n\n";
  return md;
}

namespace {

// The seeds of `arm` that OUT/runs holds finished beyond the plan's count, at any rate its
// seeds directory has (seeds/lr=RATE/seed-N). Reads only: no rate is chosen (that may write the
// grid's validation.json).
std::vector<uint64_t> seeds_beyond_plan(const TunedArm& arm, const std::string& runs_dir) {
  std::vector<uint64_t> out;
  const fs::path dir = fs::path(runs_dir) / arm.dir / "seeds";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  TunedArm wide = arm;
  wide.seeds = 100;  // repro.json's most (repro_plan.cpp)
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec) || name.rfind("lr=", 0) != 0) continue;
    double lr = 0;
    try {
      lr = std::stod(name.substr(3));
    } catch (const std::exception&) {
      continue;
    }
    if (!(lr > 0) || "lr=" + lr_text(lr) != name) continue;  // not a directory reproduce wrote
    const SweepPlan all = tuned_seeds_plan(wide, lr);
    for (size_t i = arm.seeds > 1 ? static_cast<size_t>(arm.seeds - 1) : 0; i < all.cells.size();
         ++i)
      if (cell_state(dir.string(), all.cells[i]) == CellState::Done)
        out.push_back(all.cells[i].seed);
  }
  return out;
}

// Whether repro.json's looks record a look at `count` seeds of `arm`.
bool look_recorded(const json& manifest, const std::string& arm, int count) {
  for (const json& l : manifest.value("looks", json::array()))
    if (l.contains("seeds") && l["seeds"].value(arm, -1) == count) return true;
  return false;
}

}  // namespace

void check_seed_counts(const ReproPlan& plan, const std::string& out_dir, bool quick,
                       bool seeds_overridden) {
  const std::string file = plan.dir + "/repro.json";
  std::error_code ec;
  const std::string runs_dir = (fs::path(out_dir) / "runs").string();
  if (fs::is_directory(runs_dir, ec))
    for (const TunedArm& arm : plan.arms) {
      const std::vector<uint64_t> extra = seeds_beyond_plan(arm, runs_dir);
      if (extra.empty()) continue;
      std::string list;
      for (uint64_t s : extra) list += (list.empty() ? "" : ", ") + std::to_string(s);
      throw Error(runs_dir + "/" + arm.dir + "/seeds holds finished runs of seed(s) " + list +
                  " beyond the " + std::to_string(arm.seeds) + " seed(s) " + file +
                  " plans for arm \"" + arm.name +
                  "\" (its \"seeds\"): the report would leave them out unseen. Raise the arm's "
                  "seeds and record the earlier report as a look (repro.json \"looks\"), or "
                  "move those runs out of " +
                  runs_dir);
    }
  const fs::path old_report = fs::path(out_dir) / "report.json";
  if (seeds_overridden || !fs::exists(old_report, ec)) return;
  const json old = read_json_file(old_report.string());
  if (old.value("paper", "") != plan.paper || old.value("quick", false) != quick) return;
  for (const json& a : old.value("arms", json::array())) {
    const std::string name = a.value("name", "");
    const int before = a.value("seeds_planned", 0);
    for (const TunedArm& arm : plan.arms)
      if (arm.name == name && arm.seeds > before && !look_recorded(plan.manifest, name, before))
        throw Error(old_report.string() + " was written with " + std::to_string(before) +
                    " seed(s) of arm \"" + name + "\" and " + file + " now plans " +
                    std::to_string(arm.seeds) +
                    ": seeds added after a look must be a recorded look. Add to repro.json "
                    "\"looks\" {\"at\": COMMIT, \"note\": WHY, \"seeds\": {\"" +
                    name + "\": " + std::to_string(before) + "}}");
  }
}

}  // namespace attn
