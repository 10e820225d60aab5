// What a reproduction's report records of its making (issue 49, item 2): the SHA-256 of the
// manifest it followed (repro.json), of the binary that wrote it (/proc/self/exe) and the commit
// that binary was built at, and the commits its runs record. And the rule that fixes seeds in
// advance: a report reads only the seeds its manifest plans, and refuses what would let seeds be
// added after a look without the look being recorded. Torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "app/cli/repro/repro_plan.h"

namespace attn {

// The SHA-256 of a file's bytes as 64 lowercase hex digits (FIPS 180-4); throws attn::Error
// naming the file when it cannot be read.
std::string sha256_file(const std::string& path);
// The same of a byte string.
std::string sha256_hex(const std::string& bytes);

// This binary's SHA-256 (/proc/self/exe), or null where it cannot be read (not Linux): the
// commit still names the build. Reports and leaderboards record it.
nlohmann::json this_binary_sha256();

// {"manifest": "configs/.../repro.json" as given, "manifest_sha256", "binary_sha256" (null when
// /proc/self/exe cannot be read), "commit" (this binary's), "run_commits": {commit: runs}} (a run
// that recorded none counts under "unrecorded").
nlohmann::json report_provenance(const ReproPlan& plan, const ReproRuns& runs);
// The report's provenance line (hashes shortened to 16 digits; report.json has them whole), and
// with --seeds N a note that the seed counts are not the manifest's.
std::string provenance_markdown(const nlohmann::json& provenance, int seeds_override);

// Refuses (attn::Error naming the arm, the directory and repro.json's key) when
//  - OUT/runs holds finished seed runs of an arm beyond the seeds its plan reads (runs the
//    report would silently leave out: seeds added, or a count lowered after a look); or
//  - OUT/report.json, an earlier report of the same paper and mode, planned fewer seeds for an
//    arm than the plan does now and repro.json's "looks" records no look at that count for the
//    arm (repro_corrections.h): seeds added after a look must be a recorded look.
// The second check is skipped with --seeds (seeds_overridden: the report then says its counts
// are not the manifest's). Reads only; the caller runs it before anything is written.
void check_seed_counts(const ReproPlan& plan, const std::string& out_dir, bool quick,
                       bool seeds_overridden);

}  // namespace attn
