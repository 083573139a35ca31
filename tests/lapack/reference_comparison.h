/* What the programs comparing libtessera_lapack with reference LAPACK in one process share (one
 * program per executable includes it: it defines xerbla_): an XERBLA that records what LAPACK's
 * and Tessera's routines report, the count of calls that went through Tessera (from the verbose
 * lines on stderr, which the program redirects to verbose_log), reference LAPACK's library handle
 * and a reproducible random sequence. */
#ifndef TESSERA_REFERENCE_COMPARISON_H
#define TESSERA_REFERENCE_COMPARISON_H

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct xerbla_record {
  char name[16];
  int position;
  int calls;
};
static struct xerbla_record last_xerbla;

void xerbla_(const char *name, const int *position, size_t name_length) {
  memset(last_xerbla.name, 0, sizeof last_xerbla.name);
  memcpy(last_xerbla.name, name, name_length < 15 ? name_length : 15);
  for (int k = (int)strlen(last_xerbla.name) - 1; k >= 0 && last_xerbla.name[k] == ' '; --k) last_xerbla.name[k] = 0;
  last_xerbla.position = *position;
  ++last_xerbla.calls;
}

/* Calls through Tessera so far, counted from the verbose lines on stderr (redirected to a file). */
static FILE *verbose_log;
static int lines_through_tessera(void) {
  fflush(stderr);
  rewind(verbose_log);
  char line[512];
  int count = 0;
  while (fgets(line, sizeof line, verbose_log))
    if (strstr(line, ": tessera ")) ++count;
  return count;
}

/* Reference LAPACK (dlopen handle): each call is repeated straight into it. */
static void *reference;

/* main's start: opens the reference LAPACK named by the one argument and sends stderr to
 * verbose_log. 0, or the exit status to return (2, with the reason on stderr). */
static int start_comparison(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s REFERENCE_LIBLAPACK\n", argv[0]);
    return 2;
  }
  reference = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!reference) {
    fprintf(stderr, "cannot open %s: %s\n", argv[1], dlerror());
    return 2;
  }
  verbose_log = tmpfile();
  if (!verbose_log || dup2(fileno(verbose_log), STDERR_FILENO) < 0) return 2;
  return 0;
}

/* Uniform in [-0.5, 0.5) from a linear congruential sequence. */
static double next_uniform(unsigned long long *state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*state >> 11) / 9007199254740992.0 - 0.5;
}

#endif
