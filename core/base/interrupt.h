// SIGINT, SIGTERM and SIGHUP (and any signal stop_also_on() adds) as a request to stop cleanly.
// A long command (train) installs the handlers, polls stop_signal() between steps, saves, and
// exits 128 + the signal. A second signal of the same kind while a stop is pending ends the
// process at once (the default action), so an impatient Ctrl-C still works.
#pragma once
#include <sys/types.h>

namespace attn {

void install_stop_signals();
// Also stop cleanly on `sig` (a Slurm array task: SIGUSR1, the warning before its time limit).
void stop_also_on(int sig);
// The signal that asked to stop, or 0. A stop forwarded with forward_stop() reports the signal
// the forwarding process got (its `reason`), not the one that carried it.
int stop_signal();
// Forgets a pending request (tests; a command that handled it).
void clear_stop_signal();
// Asks process `pid` to stop with signal `sig`, naming `reason` (on Linux through sigqueue's
// value; elsewhere the child sees `sig`).
void forward_stop(pid_t pid, int sig, int reason);
// "SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", else "a signal".
const char* stop_signal_name(int sig);

// A run stopped by a signal, after saving: the CLI exits 128 + signal.
struct Interrupted {
  int signal;
};

}  // namespace attn
