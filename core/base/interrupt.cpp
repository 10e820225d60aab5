#include "core/base/interrupt.h"

#include <signal.h>

#include <csignal>
#include <initializer_list>

namespace attn {
namespace {

volatile std::sig_atomic_t g_signal = 0;    // the stop's reason
volatile std::sig_atomic_t g_received = 0;  // the signal that delivered it

extern "C" void on_stop_signal(int sig, siginfo_t* info, void*) {
  if (g_received == sig) {  // asked twice: stop now
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_received = sig;
  int reason = sig;
#ifdef SI_QUEUE
  // forward_stop(): the signal the parent got (a sweep's SIGUSR1 reaches its cell as SIGTERM).
  if (info && info->si_code == SI_QUEUE && info->si_value.sival_int > 0 &&
      info->si_value.sival_int < 65)
    reason = info->si_value.sival_int;
#endif
  g_signal = reason;
}

}  // namespace

void stop_also_on(int sig) {
  struct sigaction sa {};
  sa.sa_sigaction = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  ::sigaction(sig, &sa, nullptr);
}

void install_stop_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) stop_also_on(sig);
}

int stop_signal() {
  return g_signal;
}

void clear_stop_signal() {
  g_signal = 0;
  g_received = 0;
}

void forward_stop(pid_t pid, int sig, int reason) {
#ifdef __linux__
  union sigval value {};
  value.sival_int = reason;
  if (::sigqueue(pid, sig, value) == 0) return;
#endif
  (void)reason;
  ::kill(pid, sig);
}

const char* stop_signal_name(int sig) {
  return sig == SIGINT    ? "SIGINT"
         : sig == SIGTERM ? "SIGTERM"
         : sig == SIGHUP  ? "SIGHUP"
         : sig == SIGUSR1 ? "SIGUSR1"
                          : "a signal";
}

}  // namespace attn
