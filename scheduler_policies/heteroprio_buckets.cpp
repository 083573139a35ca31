// StarPU's heteroprio with buckets for Tessera's task kinds. heteroprio keeps one FIFO bucket per
// priority value and gives each kind of worker its own order of buckets. Both kinds serve the
// critical path first (potrf, trsm, then syrk and gemm); what differs is how eagerly a CPU takes
// a task a GPU also runs (the slow factors below). With the updates first on the GPU, as in
// heteroprio's classic Cholesky setting, potrf waited behind every update of its step, which made
// heteroprio much slower than dmdas in gpu and hybrid modes (docs/policies.md). A task's priority is
// its bucket, and heteroprio requires that every worker allowed to scan a bucket can run each of
// its tasks: a task's bucket depends on its kind and on where it may run.
#include <starpu_heteroprio.h>

#include <initializer_list>

#include "registry.hpp"

namespace tessera::detail {

namespace {

// Where a task may run: the three sets Tessera's modes produce.
enum class Placement { cpu = 0, cuda = 1, both = 2 };
constexpr int placements = 3;
// Bucket 0 holds an application's own tasks submitted with priority 0 (CPU tasks).
constexpr unsigned application_bucket = 0;

Placement placement_of(uint32_t where) {
  const bool cpu = (where & STARPU_CPU) != 0;
  const bool cuda = (where & STARPU_CUDA) != 0;
  return cpu && cuda ? Placement::both : cuda ? Placement::cuda : Placement::cpu;
}

unsigned bucket_of(TaskKind kind, Placement placement) {
  return 1 + static_cast<unsigned>(kind) * placements + static_cast<unsigned>(placement);
}

// How many tasks each CUDA worker must have waiting before a CPU takes one of a bucket both can
// serve: a CPU core is one to two orders of magnitude slower than a GPU at the updates, and a
// long update on a CPU at the end of the graph delays everything after it.
float cpu_slow_factor(TaskKind kind) {
  switch (kind) {
    case TaskKind::potrf: return 8;
    case TaskKind::trsm:
    case TaskKind::syrk: return 32;
    case TaskKind::gemm: return 64;
    default: return 4;
  }
}

constexpr std::initializer_list<TaskKind> cpu_order = {TaskKind::copy_in, TaskKind::potrf, TaskKind::trsm,
                                                       TaskKind::syrk,    TaskKind::gemm,  TaskKind::other,
                                                       TaskKind::copy_out};
constexpr std::initializer_list<TaskKind> cuda_order = {TaskKind::potrf, TaskKind::trsm, TaskKind::syrk, TaskKind::gemm,
                                                        TaskKind::other};

void map_cpu_buckets(unsigned ctx, bool with_cuda) {
  unsigned index = 0;
  for (TaskKind kind : cpu_order) {
    starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, index++, bucket_of(kind, Placement::cpu));
    if (with_cuda) starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, index++, bucket_of(kind, Placement::both));
  }
  starpu_heteroprio_set_mapping(ctx, STARPU_CPU_IDX, index++, application_bucket);
  starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_IDX, index);
}

void map_cuda_buckets(unsigned ctx, bool with_cpu) {
  unsigned index = 0;
  for (TaskKind kind : cuda_order) {
    starpu_heteroprio_set_mapping(ctx, STARPU_CUDA_IDX, index++, bucket_of(kind, Placement::cuda));
    if (!with_cpu) continue;
    const unsigned shared = bucket_of(kind, Placement::both);
    starpu_heteroprio_set_mapping(ctx, STARPU_CUDA_IDX, index++, shared);
    starpu_heteroprio_set_faster_arch(ctx, STARPU_CUDA_IDX, shared);
    starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_IDX, shared, cpu_slow_factor(kind));
  }
  starpu_heteroprio_set_nb_prios(ctx, STARPU_CUDA_IDX, index);
}

}  // namespace

void init_heteroprio_buckets(unsigned sched_ctx) {
  const bool cpus = starpu_cpu_worker_get_count() > 0;
  const bool gpus = starpu_cuda_worker_get_count() > 0;
  if (cpus) map_cpu_buckets(sched_ctx, gpus);
  if (gpus) map_cuda_buckets(sched_ctx, cpus);
}

int heteroprio_bucket(TaskKind bucket, uint32_t where) {
  return static_cast<int>(bucket_of(bucket, placement_of(where)));
}

}  // namespace tessera::detail
