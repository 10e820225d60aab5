// SIGINT, SIGTERM and SIGHUP as a request to stop cleanly. A long command (train) installs the
// handlers, polls stop_signal() between steps, saves, and exits 128 + the signal. A second
// signal of the same kind while a stop is pending ends the process at once (the default
// action), so an impatient Ctrl-C still works.
#pragma once

namespace attn {

void install_stop_signals();
// The signal that asked to stop, or 0.
int stop_signal();
// Forgets a pending request (tests; a command that handled it).
void clear_stop_signal();

// A run stopped by a signal, after saving: the CLI exits 128 + signal.
struct Interrupted {
  int signal;
};

}  // namespace attn
