#include "energy_meter.hpp"

#include <dlfcn.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

namespace tessera::bench {

namespace {

bool read_number(const std::string& path, std::uint64_t& value) {
  std::ifstream in(path);
  return static_cast<bool>(in >> value);
}

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

// ---- host: RAPL -----------------------------------------------------------------------------

HostEnergyCounters::HostEnergyCounters(const std::string& powercap_root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(powercap_root, ec)) {
    reason_ = "no " + powercap_root;
    return;
  }
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(powercap_root, ec)) {
    const std::string name = entry.path().filename().string();
    // intel-rapl:0 is a package; intel-rapl:0:1 one of its parts.
    if (name.rfind("intel-rapl:", 0) == 0 && name.find(':', 11) == std::string::npos) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    Zone zone;
    zone.energy_path = powercap_root + "/" + name + "/energy_uj";
    if (!read_number(zone.energy_path, zone.last_uj) ||
        !read_number(powercap_root + "/" + name + "/max_energy_range_uj", zone.range_uj)) {
      zones_.clear();
      reason_ = zone.energy_path + " is not readable";
      return;
    }
    zones_.push_back(zone);
  }
  if (zones_.empty()) reason_ = "no RAPL package zone under " + powercap_root;
}

double HostEnergyCounters::joules() {
  double total = 0;
  for (Zone& zone : zones_) {
    std::uint64_t now = 0;
    if (read_number(zone.energy_path, now)) {
      const std::uint64_t delta = now >= zone.last_uj ? now - zone.last_uj : now + (zone.range_uj - zone.last_uj);
      zone.total_joules += static_cast<double>(delta) * 1e-6;
      zone.last_uj = now;
    }
    total += zone.total_joules;
  }
  return total;
}

// ---- GPUs: NVML -----------------------------------------------------------------------------

// The NVML entry points used, declared here so that no NVML header or library is needed to build.
struct GpuEnergyCounters::Api {
  using Device = void*;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*by_index)(unsigned, Device*) = nullptr;
  int (*by_pci_bus_id)(const char*, Device*) = nullptr;
  int (*total_energy)(Device, unsigned long long*) = nullptr;
  int (*name)(Device, char*, unsigned) = nullptr;
  const char* (*error_string)(int) = nullptr;
};

namespace {

template <class F>
bool bind(void* library, const char* symbol, F& function) {
  function = reinterpret_cast<F>(dlsym(library, symbol));
  return function != nullptr;
}

}  // namespace

GpuEnergyCounters::GpuEnergyCounters(const std::vector<std::string>& pci_bus_ids) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    reason_ = "no libnvidia-ml.so.1 (NVML comes with the NVIDIA driver)";
    return;
  }
  api_ = new Api;
  Api& a = *api_;
  if (!bind(library_, "nvmlInit_v2", a.init) || !bind(library_, "nvmlShutdown", a.shutdown) ||
      !bind(library_, "nvmlDeviceGetCount_v2", a.count) || !bind(library_, "nvmlDeviceGetHandleByIndex_v2", a.by_index) ||
      !bind(library_, "nvmlDeviceGetHandleByPciBusId_v2", a.by_pci_bus_id) ||
      !bind(library_, "nvmlDeviceGetTotalEnergyConsumption", a.total_energy) ||
      !bind(library_, "nvmlDeviceGetName", a.name) || !bind(library_, "nvmlErrorString", a.error_string)) {
    reason_ = "libnvidia-ml.so.1 lacks an NVML entry point used here";
    return;
  }
  if (const int rc = a.init(); rc != 0) {
    reason_ = std::string("nvmlInit: ") + a.error_string(rc);
    a.init = nullptr;  // nothing to shut down
    return;
  }
  std::vector<Api::Device> found;
  if (pci_bus_ids.empty()) {
    unsigned count = 0;
    if (a.count(&count) == 0)
      for (unsigned i = 0; i < count; ++i) {
        Api::Device d = nullptr;
        if (a.by_index(i, &d) == 0) found.push_back(d);
      }
  } else {
    for (const std::string& id : pci_bus_ids) {
      Api::Device d = nullptr;
      if (const int rc = a.by_pci_bus_id(id.c_str(), &d); rc != 0) {
        reason_ = "NVML has no GPU at PCI " + id + ": " + a.error_string(rc);
        return;
      }
      found.push_back(d);
    }
  }
  for (Api::Device d : found) {
    unsigned long long mj = 0;
    if (const int rc = a.total_energy(d, &mj); rc != 0) {
      reason_ = std::string("NVML total energy: ") + a.error_string(rc);
      return;
    }
    char name[96] = {};
    a.name(d, name, sizeof name);
    names_.emplace_back(name);
  }
  if (found.empty()) reason_ = "NVML sees no GPU";
  devices_ = found;
}

GpuEnergyCounters::~GpuEnergyCounters() {
  if (api_ && api_->init) api_->shutdown();
  delete api_;
  if (library_) dlclose(library_);
}

std::uint64_t GpuEnergyCounters::millijoules() const {
  std::uint64_t total = 0;
  for (void* d : devices_) {
    unsigned long long mj = 0;
    if (api_->total_energy(d, &mj) == 0) total += mj;
  }
  return total;
}

// ---- the meter ------------------------------------------------------------------------------

EnergyMeter::EnergyMeter(const std::vector<std::string>& gpu_pci_bus_ids, const std::string& powercap_root)
    : gpu_(gpu_pci_bus_ids), host_(powercap_root) {}

std::string EnergyMeter::description() const {
  std::string gpu = "GPU energy: ";
  if (gpu_.available()) {
    gpu += "NVML total energy of";
    for (const std::string& name : gpu_.names()) gpu += " " + name;
  } else {
    gpu += "none (" + gpu_.unavailable_reason() + ")";
  }
  const std::string host = host_.available() ? "RAPL, " + std::to_string(host_.zones()) + " package zone(s)"
                                               : "none (" + host_.unavailable_reason() + ")";
  return gpu + "; host energy: " + host;
}

std::uint64_t EnergyMeter::next_gpu_step(Clock::time_point* when) const {
  const std::uint64_t start = gpu_.millijoules();
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(1);
  for (;;) {
    const std::uint64_t now = gpu_.millijoules();
    *when = Clock::now();
    if (now != start || *when > give_up) return now;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void EnergyMeter::measure_idle(double seconds) {
  Clock::time_point t0 = Clock::now(), t1;
  const std::uint64_t e0 = gpu_.available() ? next_gpu_step(&t0) : 0;
  const double h0 = host_.available() ? host_.joules() : 0;
  const Clock::time_point host_t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double h1 = host_.available() ? host_.joules() : 0;
  const Clock::time_point host_t1 = Clock::now();
  const std::uint64_t e1 = gpu_.available() ? next_gpu_step(&t1) : 0;
  if (gpu_.available()) idle_gpu_watts_ = static_cast<double>(e1 - e0) * 1e-3 / seconds_between(t0, t1);
  if (host_.available()) idle_host_watts_ = (h1 - h0) / seconds_between(host_t0, host_t1);
}

void EnergyMeter::begin() {
  begin_time_ = Clock::now();
  if (gpu_.available()) begin_gpu_mj_ = next_gpu_step(&begin_time_);
  if (host_.available()) begin_host_joules_ = host_.joules();
  begin_cpu_seconds_ = process_cpu_seconds();
}

EnergyReading EnergyMeter::end() {
  const Clock::time_point work_end = Clock::now();
  EnergyReading r;
  r.seconds = seconds_between(begin_time_, work_end);
  r.cpu_seconds = process_cpu_seconds() - begin_cpu_seconds_;
  if (host_.available()) r.host_joules = host_.joules() - begin_host_joules_;
  if (gpu_.available()) {
    Clock::time_point step;
    const std::uint64_t mj = next_gpu_step(&step);
    // From the work's end to the step the GPU idled.
    r.gpu_joules = static_cast<double>(mj - begin_gpu_mj_) * 1e-3 - idle_gpu_watts_ * seconds_between(work_end, step);
  }
  return r;
}

EnergyMeter::PerCall EnergyMeter::per_call(double seconds, int min_calls, const std::function<void()>& prepare,
                                           const std::function<void()>& work, const std::function<void()>& finish) {
  if (prepare) prepare();
  work();
  finish();
  PerCall result;
  begin();
  const Clock::time_point start = Clock::now();
  do {
    if (prepare) prepare();
    work();
    ++result.calls;
  } while (result.calls < min_calls || seconds_between(start, Clock::now()) < seconds);
  finish();
  EnergyReading total = end();
  if (prepare) {
    begin();
    for (int call = 0; call < result.calls; ++call) prepare();
    finish();
    total = total.minus(end());
  }
  result.energy = total.per_call(result.calls);
  return result;
}

}  // namespace tessera::bench
