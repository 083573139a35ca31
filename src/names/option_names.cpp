// The names of the public options' values (tessera/options.hpp, tessera/trace.hpp): parse_* reads
// one (any case), to_string writes the one the parser reads back. No StarPU: the environment
// reader, the API, the CLI and the traces' renderings all name values through here.
#include <string>

#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/trace.hpp"

namespace tessera {

namespace {

std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

}  // namespace

Mode parse_mode(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "cpu") return Mode::cpu;
  if (s == "gpu") return Mode::gpu;
  if (s == "hybrid") return Mode::hybrid;
  if (s == "auto") return Mode::automatic;
  throw InvalidArgument("unknown mode '" + name + "' (expected cpu, gpu, hybrid or auto)");
}

const char* to_string(Mode mode) {
  switch (mode) {
    case Mode::cpu:
      return "cpu";
    case Mode::gpu:
      return "gpu";
    case Mode::hybrid:
      return "hybrid";
    case Mode::automatic:
      return "auto";
  }
  return "?";
}

Uplo parse_uplo(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "l" || s == "lower") return Uplo::lower;
  if (s == "u" || s == "upper") return Uplo::upper;
  throw InvalidArgument("unknown uplo '" + name + "' (expected L or U)");
}

const char* to_string(Uplo uplo) { return uplo == Uplo::lower ? "L" : "U"; }

GpuKernels parse_gpu_kernels(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "vendor") return GpuKernels::vendor;
  if (s == "custom") return GpuKernels::custom;
  if (s == "any" || s == "mixed") return GpuKernels::any;
  throw InvalidArgument("unknown GPU kernel choice '" + name + "' (expected vendor, custom or any)");
}

TensorCores parse_tensor_cores(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "off") return TensorCores::off;
  if (s == "tf32") return TensorCores::tf32;
  if (s == "bf16") return TensorCores::bf16;
  if (s == "fp16") return TensorCores::fp16;
  throw InvalidArgument("unknown tensor-core arithmetic '" + name + "' (expected off, tf32, bf16 or fp16)");
}

const char* to_string(TensorCores cores) {
  switch (cores) {
    case TensorCores::tf32:
      return "tf32";
    case TensorCores::bf16:
      return "bf16";
    case TensorCores::fp16:
      return "fp16";
    case TensorCores::off:
      break;
  }
  return "off";
}

Refinement parse_refinement(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "lapack") return Refinement::lapack;
  if (s == "gmres") return Refinement::classical_then_gmres;
  throw InvalidArgument("unknown refinement '" + name + "' (expected lapack or gmres)");
}

const char* to_string(Refinement refinement) {
  return refinement == Refinement::classical_then_gmres ? "gmres" : "lapack";
}

TaskGrain parse_task_grain(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "tiles") return TaskGrain::tiles;
  if (s == "block-columns") return TaskGrain::block_columns;
  if (s == "whole-matrix") return TaskGrain::whole_matrix;
  if (s == "auto") return TaskGrain::automatic;
  throw InvalidArgument("unknown task grain '" + name + "' (expected tiles, block-columns, whole-matrix or auto)");
}

const char* to_string(TaskGrain grain) {
  switch (grain) {
    case TaskGrain::tiles:
      return "tiles";
    case TaskGrain::block_columns:
      return "block-columns";
    case TaskGrain::whole_matrix:
      return "whole-matrix";
    case TaskGrain::automatic:
      return "auto";
  }
  return "?";
}

HostTiles parse_host_tiles(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "auto") return HostTiles::automatic;
  if (s == "pin-on-reuse") return HostTiles::pin_on_reuse;
  if (s == "pinned") return HostTiles::pinned;
  if (s == "pageable") return HostTiles::pageable;
  if (s == "in-place") return HostTiles::in_place;
  if (s == "staged") return HostTiles::staged;
  throw InvalidArgument("unknown host tile memory '" + name +
                        "' (expected auto, pin-on-reuse, pinned, pageable, in-place or staged)");
}

const char* to_string(HostTiles tiles) {
  switch (tiles) {
    case HostTiles::automatic:
      return "auto";
    case HostTiles::pin_on_reuse:
      return "pin-on-reuse";
    case HostTiles::pinned:
      return "pinned";
    case HostTiles::pageable:
      return "pageable";
    case HostTiles::in_place:
      return "in-place";
    case HostTiles::staged:
      return "staged";
  }
  return "?";
}

Objective parse_objective(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "time") return Objective::time;
  if (s == "energy") return Objective::energy;
  throw InvalidArgument("unknown objective '" + name + "' (expected time or energy)");
}

const char* to_string(Objective objective) { return objective == Objective::energy ? "energy" : "time"; }

GpuPlacement parse_gpu_placement(const std::string& name) {
  const std::string s = lower_case(name);
  if (s == "block-cyclic") return GpuPlacement::block_cyclic;
  if (s == "policy") return GpuPlacement::by_policy;
  throw InvalidArgument("unknown GPU placement '" + name + "' (expected block-cyclic or policy)");
}

const char* to_string(GpuPlacement placement) {
  switch (placement) {
    case GpuPlacement::block_cyclic:
      return "block-cyclic";
    case GpuPlacement::by_policy:
      return "policy";
  }
  return "?";
}

const char* to_string(GpuKernels kernels) {
  switch (kernels) {
    case GpuKernels::vendor:
      return "vendor";
    case GpuKernels::custom:
      return "custom";
    case GpuKernels::any:
      return "any";
  }
  return "?";
}

const char* to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::potrf:
      return "potrf";
    case TaskKind::trsm:
      return "trsm";
    case TaskKind::syrk:
      return "syrk";
    case TaskKind::gemm:
      return "gemm";
    case TaskKind::copy_in:
      return "copy_in";
    case TaskKind::copy_out:
      return "copy_out";
    case TaskKind::other:
      return "other";
  }
  return "?";
}

}  // namespace tessera
