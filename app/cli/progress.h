// Progress of a headless run on stderr (stdout carries only results). On a terminal the
// "step N/T ..." lines redraw one status line with a bar; otherwise, and in the children of a
// sweep (ATTNLAB_PROGRESS=lines), every line is printed as it comes, for logs and pipes.
#pragma once
#include <string>

namespace attn {

class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool quiet = false);
  ~ProgressPrinter() { finish(); }
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  void operator()(const std::string& line);
  // Ends a status line still being redrawn, so that what follows starts on a line of its own.
  void finish();

 private:
  bool quiet_;
  bool redraw_;           // stderr is a terminal and plain lines were not asked for
  bool pending_ = false;  // a status line without its newline is on screen
};

// Set in the environment of child runs so that their progress stays plain lines.
constexpr const char* kProgressEnv = "ATTNLAB_PROGRESS";

}  // namespace attn
