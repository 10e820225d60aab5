#include "core/base/interrupt.h"

#include <signal.h>

#include <csignal>
#include <initializer_list>

namespace attn {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_signal == sig) {  // asked twice: stop now
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_signal = sig;
}

}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

int stop_signal() {
  return g_signal;
}

void clear_stop_signal() {
  g_signal = 0;
}

}  // namespace attn
