/* The loader of a lazy CUDA forwarder: on the first call of any of its functions, finds and opens
 * the real library and fills the trampolines' slots (make_forwarder.py writes the rest).
 *
 * The real library cannot be opened by its soname: the forwarder is already loaded under that
 * name, and the dynamic loader would hand it back. So it is looked for by path where the loader
 * would look for it and where the CUDA toolkit keeps it: the folder a program named with
 * tessera_lazy_cuda_prefer_folder (the Python package: NVIDIA's pip packages' folder),
 * LD_LIBRARY_PATH's folders, the folder of the CUDA runtime this process loaded, the toolkit this
 * forwarder was built against, and the usual system folders; the forwarder itself is skipped. The
 * real library's CUDA dependencies without a forwarder (cuBLASLt, nvJitLink) are opened from the
 * same folder first where they are not loaded yet: the dynamic loader might not look there. Found
 * nowhere, its functions say so (stand_in): linked to the real library, the program would not
 * have started at all. The real library's own dependency on another forwarded library (cuSOLVER's
 * on cuBLAS) resolves to that forwarder, which is why each forwarder exports every function of
 * its library. Nothing is printed. */
#define _GNU_SOURCE
#include "lazy_library.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TESSERA_LAZY_TOOLKIT_DIR
#define TESSERA_LAZY_TOOLKIT_DIR ""
#endif

enum { kPathMax = 4096 };

static const char* const kSystemFolders[] = {
    "/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu", "/usr/lib64",          "/usr/lib"};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char preferred_folder[kPathMax];
static char searched[8 * kPathMax];  // the folders tried, for the message when none has it

static void note_searched(const char* folder) {
  size_t used = strlen(searched);
  if (used + strlen(folder) + 3 < sizeof searched)
    snprintf(searched + used, sizeof searched - used, "%s%s", used ? ", " : "", folder);
}

/* Opens FOLDER/soname unless it is this forwarder; NULL otherwise. */
static void* open_in(const char* folder, size_t length, const struct stat* self) {
  char path[kPathMax];
  if (length == 0 || length + strlen(tessera_lazy_soname) + 2 > sizeof path) return NULL;
  snprintf(path, sizeof path, "%.*s/%s", (int)length, folder, tessera_lazy_soname);
  note_searched(path);
  struct stat found;
  if (stat(path, &found) != 0 || (found.st_dev == self->st_dev && found.st_ino == self->st_ino)) return NULL;
  for (const char* const* dependency = tessera_lazy_dependencies; *dependency; ++dependency) {
    char dependency_path[kPathMax];
    snprintf(dependency_path, sizeof dependency_path, "%.*s/%s", (int)length, folder, *dependency);
    if (!dlopen(*dependency, RTLD_LAZY | RTLD_NOLOAD) && access(dependency_path, R_OK) == 0)
      dlopen(dependency_path, RTLD_LAZY | RTLD_LOCAL);
  }
  return dlopen(path, RTLD_LAZY | RTLD_LOCAL);
}

static int find_cuda_runtime(struct dl_phdr_info* info, size_t size, void* folder) {
  (void)size;
  const char* slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  if (!slash || strncmp(slash + 1, "libcudart.so", 12) != 0) return 0;
  snprintf((char*)folder, kPathMax, "%.*s", (int)(slash - info->dlpi_name), info->dlpi_name);
  return 1;
}

static void* open_real_library(void) {
  Dl_info info;
  struct stat self;
  if (!dladdr((void*)&tessera_lazy_resolve, &info) || !info.dli_fname || stat(info.dli_fname, &self) != 0) {
    memset(&self, 0, sizeof self);
  }
  void* handle = open_in(preferred_folder, strlen(preferred_folder), &self);
  const char* paths = getenv("LD_LIBRARY_PATH");
  for (const char* p = paths; p && *p && !handle; p += strcspn(p, ":"), p += (*p == ':')) {
    handle = open_in(p, strcspn(p, ":"), &self);
  }
  char runtime_folder[kPathMax] = "";
  if (!handle && dl_iterate_phdr(find_cuda_runtime, runtime_folder))
    handle = open_in(runtime_folder, strlen(runtime_folder), &self);
  if (!handle) handle = open_in(TESSERA_LAZY_TOOLKIT_DIR, strlen(TESSERA_LAZY_TOOLKIT_DIR), &self);
  for (size_t i = 0; !handle && i < sizeof kSystemFolders / sizeof *kSystemFolders; ++i)
    handle = open_in(kSystemFolders[i], strlen(kSystemFolders[i]), &self);
  return handle;
}

/* What a function answers where the real library or the function is missing, as the library
 * would when it cannot start: the status "not initialized" (1 in cuBLAS, cuSOLVER and cuSPARSE
 * alike), or, from the functions that name a status, the reason. A CUDA status check then fails
 * with that reason, and the runtime runs without CUDA workers, as on a machine without a GPU. */
static char failure[sizeof searched + 256];
static long not_initialized(void) { return 1; }
static const char* failure_text(void) { return failure; }

static void* stand_in(unsigned index) {
  return tessera_lazy_returns_text[index] ? (void*)&failure_text : (void*)&not_initialized;
}

static void load(void) {
  void* handle = open_real_library();
  if (handle)
    snprintf(failure, sizeof failure, "%s as found has no such function (older than the CUDA Tessera was built with)",
             tessera_lazy_soname);
  else
    snprintf(failure, sizeof failure, "%s was not found (looked for: %s)", tessera_lazy_soname, searched);
  for (unsigned i = 0; i < tessera_lazy_count; ++i) {
    void* function = handle ? dlsym(handle, tessera_lazy_names[i]) : NULL;
    __atomic_store_n(&tessera_lazy_slots[i], function ? function : stand_in(i), __ATOMIC_RELEASE);
  }
}

void* tessera_lazy_resolve(unsigned index) {
  pthread_once(&load_once, load);
  return __atomic_load_n(&tessera_lazy_slots[index], __ATOMIC_ACQUIRE);
}

/* Exported beside the real library's functions: a folder to look in before any other, for a
 * program that knows where the real library is (before the first call into it). */
__attribute__((visibility("default"))) void tessera_lazy_cuda_prefer_folder(const char* folder) {
  snprintf(preferred_folder, sizeof preferred_folder, "%s", folder ? folder : "");
}
