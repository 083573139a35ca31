/* A LAPACK program with signal handlers of its own: SIGINT handled with SA_SIGINFO, SIGSEGV and
 * SIGTRAP left as they were when it started (their defaults, or a sanitizer's). Run under
 * LD_PRELOAD=libtessera_lapack.so, it factors (which starts Tessera's runtime), then checks that
 * its handlers are still those and that its SIGINT handler still receives the siginfo of a raised
 * SIGINT.
 *
 *   signals_program N          exit 0 when every handler is the program's own
 * It prints one line per signal: "SIGINT: intact" or "SIGINT: replaced".
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);

static volatile sig_atomic_t sigint_seen, sigint_info_right;

static void on_sigint(int sig, siginfo_t *info, void *context) {
  (void)context;
  sigint_seen = 1;
  sigint_info_right = sig == SIGINT && info && info->si_signo == SIGINT && info->si_pid == getpid();
}

struct action {
  void (*handler)(int);
  int siginfo;
};

static struct action action_of(int sig) {
  struct sigaction now;
  memset(&now, 0, sizeof now);
  sigaction(sig, NULL, &now);
  struct action a = {now.sa_handler, (now.sa_flags & SA_SIGINFO) != 0};
  return a;
}

static int unchanged(int sig, struct action before) {
  const struct action now = action_of(sig);
  return now.handler == before.handler && now.siginfo == before.siginfo;
}

static int report(const char *name, int intact) {
  printf("%s: %s\n", name, intact ? "intact" : "replaced");
  return intact;
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 300;
  struct sigaction handler;
  memset(&handler, 0, sizeof handler);
  handler.sa_sigaction = on_sigint;
  handler.sa_flags = SA_SIGINFO;
  sigemptyset(&handler.sa_mask);
  if (sigaction(SIGINT, &handler, NULL) != 0) return 2;
  const struct action segv = action_of(SIGSEGV), trap = action_of(SIGTRAP);

  double *a = calloc((size_t)n * n, sizeof(double));
  for (int j = 0; j < n; ++j) a[j + (size_t)j * n] = 4.0;
  int info = -1;
  dpotrf_("L", &n, a, &n, &info, 1);
  free(a);
  if (info != 0) {
    printf("FAILED: dpotrf_ info=%d\n", info);
    return 1;
  }

  struct sigaction now;
  int intact = 1;
  intact &= report("SIGINT", sigaction(SIGINT, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
                                 now.sa_sigaction == on_sigint);
  intact &= report("SIGSEGV", unchanged(SIGSEGV, segv));
  intact &= report("SIGTRAP", unchanged(SIGTRAP, trap));
  if (!intact) return 1;
  raise(SIGINT);
  printf("SIGINT handler called: %s, with its siginfo: %s\n", sigint_seen ? "yes" : "no",
         sigint_info_right ? "yes" : "no");
  return sigint_seen && sigint_info_right ? 0 : 1;
}
