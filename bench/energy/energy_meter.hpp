// Energy of a benchmark's timed work, for the GPU benchmarks: the GPUs' cumulative energy
// counters (NVML's total energy, loaded at run time: no link dependency on the driver) and the
// host's RAPL package counters (/sys/class/powercap) where they can be read. See
// docs/performance.md ("Energy") for the method.
//
//   EnergyMeter meter(cuda_pci_bus_ids());
//   meter.measure_idle(1.0);
//   meter.begin();  ... work, synchronised ...  const EnergyReading e = meter.end();
//
// NVML's counter advances in steps (every 100 ms on an H200), so begin() waits for a step and
// starts the reading on it, and end() waits for the step after the work and takes off the time
// between the work's end and that step at the idle power measured before: the reading then covers
// the work alone, however it falls between the steps. The host counters advance every
// millisecond or so and are read directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace tessera::bench {

inline constexpr double kNoReading = std::numeric_limits<double>::quiet_NaN();

// Joules over an interval; NaN where that counter cannot be read. cpu_seconds: the process's CPU
// time (all its threads, user and system) over the interval, which shows the cores a run keeps
// busy where the host's energy cannot be read.
struct EnergyReading {
  double seconds = 0;
  double gpu_joules = kNoReading;
  double host_joules = kNoReading;
  double cpu_seconds = 0;

  // This reading less another, field by field.
  EnergyReading minus(const EnergyReading& other) const {
    return {seconds - other.seconds, gpu_joules - other.gpu_joules, host_joules - other.host_joules,
            cpu_seconds - other.cpu_seconds};
  }
  // Each field over `calls`: a reading of that many calls as one call's.
  EnergyReading per_call(int calls) const {
    return {seconds / calls, gpu_joules / calls, host_joules / calls, cpu_seconds / calls};
  }
};

// GFLOP per joule, which is GFLOP/s per watt; NaN without a reading.
inline double gflops_per_watt(double flops, double joules) { return flops / joules * 1e-9; }

// The RAPL package zones under a powercap root (intel-rapl:N, the processor packages; their
// sub-zones are parts of them and are left out), summed, each corrected for its counter's wrap.
class HostEnergyCounters {
 public:
  explicit HostEnergyCounters(const std::string& powercap_root = "/sys/class/powercap");
  bool available() const { return !zones_.empty(); }
  // Why the host's energy cannot be read (empty when it can).
  const std::string& unavailable_reason() const { return reason_; }
  std::size_t zones() const { return zones_.size(); }
  // Joules since construction; call at least once per wrap period of the counters (hours).
  double joules();

 private:
  struct Zone {
    std::string energy_path;
    std::uint64_t range_uj = 0;  // the counter wraps to 0 after range_uj
    std::uint64_t last_uj = 0;
    double total_joules = 0;
  };
  std::vector<Zone> zones_;
  std::string reason_;
};

// The total-energy counters of a set of GPUs through NVML, summed.
class GpuEnergyCounters {
 public:
  // pci_bus_ids: the GPUs to read ("0000:41:00.0", as cudaDeviceGetPCIBusId gives them); empty:
  // every GPU NVML sees.
  explicit GpuEnergyCounters(const std::vector<std::string>& pci_bus_ids);
  ~GpuEnergyCounters();
  GpuEnergyCounters(const GpuEnergyCounters&) = delete;
  GpuEnergyCounters& operator=(const GpuEnergyCounters&) = delete;
  bool available() const { return !devices_.empty(); }
  const std::string& unavailable_reason() const { return reason_; }
  // The GPUs read, by name.
  const std::vector<std::string>& names() const { return names_; }
  // The summed counters in millijoules (since each driver load).
  std::uint64_t millijoules() const;

 private:
  struct Api;
  void* library_ = nullptr;
  Api* api_ = nullptr;
  std::vector<void*> devices_;
  std::vector<std::string> names_;
  std::string reason_;
};

class EnergyMeter {
 public:
  explicit EnergyMeter(const std::vector<std::string>& gpu_pci_bus_ids = {},
                       const std::string& powercap_root = "/sys/class/powercap");
  bool gpu_available() const { return gpu_.available(); }
  bool host_available() const { return host_.available(); }
  // One line: which counters are read, or why not.
  std::string description() const;

  // The power with nothing running, over `seconds`; kept for end()'s tail.
  void measure_idle(double seconds);
  double idle_gpu_watts() const { return idle_gpu_watts_; }
  double idle_host_watts() const { return idle_host_watts_; }

  // A reading from begin() to end(); the work between them must be finished (synchronised) when
  // end() is called.
  void begin();
  EnergyReading end();

  // The energy of one call of work() (prepare() untimed before each call): the calls repeated back
  // to back for at least `seconds` (and `min_calls`), less the same count of prepare() alone, each
  // measured from begin() to end() with finish() (the synchronisation) at the end.
  struct PerCall {
    EnergyReading energy;  // per call
    int calls = 0;
  };
  PerCall per_call(double seconds, int min_calls, const std::function<void()>& prepare,
                   const std::function<void()>& work, const std::function<void()>& finish);

 private:
  using Clock = std::chrono::steady_clock;
  // Waits for the GPU counter's next step; its value and time.
  std::uint64_t next_gpu_step(Clock::time_point* when) const;

  GpuEnergyCounters gpu_;
  HostEnergyCounters host_;
  double idle_gpu_watts_ = 0;
  double idle_host_watts_ = 0;
  Clock::time_point begin_time_{};
  std::uint64_t begin_gpu_mj_ = 0;
  double begin_host_joules_ = 0;
  double begin_cpu_seconds_ = 0;
};

}  // namespace tessera::bench
