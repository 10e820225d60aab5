// The paper-specific parts of `attnlab reproduce`'s report (app/cli/repro/cli_reproduce.cpp): each
// paper's tables and figures, appended to the report's Markdown. Torch-free.
#pragma once
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/repro/repro_plan.h"
#include "render/plot/figure.h"

namespace attn {

struct GroupSummary;

// The report being written: its Markdown and the figure files written beside it.
struct ReproReport {
  std::ostringstream md;
  std::vector<std::string> figures;  // stems written
  std::string dir;
  // Writes the figure as PDF, PNG, CSV and JSON and links it with its caption.
  void figure(const fig::Figure& f, const std::string& stem, const std::string& caption,
              double width_in = 7.0);
};

// Appends the paper's own section (condor, conn, kernel or neural; nothing for others).
void paper_section(ReproReport& report, const ReproPlan& plan, const ReproRuns& runs,
                   const std::vector<GroupSummary>& groups);

}  // namespace attn
