#include "runtime_flags.hpp"

#include <iostream>
#include <string>

#include "checks.hpp"

namespace tessera::cli {

void add_runtime_flags(CLI::App* command, RuntimeFlags& flags) {
  command->add_option("--ncpu", flags.ncpu, "CPU workers, at most the CPUs present (default: TESSERA_NCPU, else every core less one per CUDA worker and one for the calling thread, with GPUs or from 16 cores)")
      ->check(non_negative_int());
  command->add_option("--ncuda", flags.ncuda, "GPUs to use (default: TESSERA_NCUDA, else all)")->check(non_negative_int());
  command->add_flag("--oversubscribe", flags.oversubscribe, "start every CPU worker --ncpu or TESSERA_NCPU asks for, even more than the CPUs present");
  command->add_option("--gpu-placement", flags.gpu_placement, "several GPUs: block-cyclic (each tile task on the GPU owning its tile) or policy (the scheduler places tasks) (default: TESSERA_GPU_PLACEMENT, else block-cyclic)")
      ->check(CLI::IsMember({"block-cyclic", "policy"}));
  command->add_option("--objective", flags.objective, "time or energy: what the runtime's own choices make smallest (energy: auto runs gpu mode wherever there is a GPU) (default: TESSERA_OBJECTIVE, else time)")
      ->check(CLI::IsMember({"time", "energy"}));
}

RuntimeOptions runtime_options(const RuntimeFlags& flags, Mode mode) {
  RuntimeOptions options = RuntimeOptions::from_environment();
  const bool from_flag = flags.ncpu >= 0;
  if (from_flag) options.ncpus = flags.ncpu;
  if (flags.ncuda >= 0) options.ncuda = flags.ncuda;
  if (!flags.gpu_placement.empty()) options.gpu_placement = parse_gpu_placement(flags.gpu_placement);
  if (!flags.objective.empty()) options.objective = parse_objective(flags.objective);
  if (options.ncpus >= 0) {
    const std::string source = (from_flag ? "--ncpu " : "TESSERA_NCPU=") + std::to_string(options.ncpus);
    options.ncpus = cap_cpu_workers(options.ncpus, flags.oversubscribe, source, std::cerr);
  }
  options = options.for_mode(mode);
  options.hide_gpus_from_process = mode == Mode::cpu;  // the CLI's process uses the GPUs for nothing else
  return options;
}

}  // namespace tessera::cli
