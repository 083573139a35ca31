#include "perfmodel_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

namespace tessera::detail {

namespace {

namespace fs = std::filesystem;

constexpr int kPerfModelVersion = 45;  // StarPU 1.3's _STARPU_PERFMODEL_VERSION
constexpr int kMaxDeviceTypes = 5;     // StarPU 1.3 device types are 0..5
constexpr int kMaxDevicesPerComb = 256;

using File = std::unique_ptr<FILE, int (*)(FILE*)>;

// StarPU holds a POSIX read lock on a perf-model or bus file while it reads it, and a write lock
// while it rewrites it (truncate, then write) at the end of another process's run. Reading under
// the same lock never sees a file half rewritten: without it, processes running side by side
// took each other's files for corrupt.
class SharedFileLock {
 public:
  explicit SharedFileLock(FILE* f) : fd_(fileno(f)) {
    struct flock lock {};
    lock.l_type = F_RDLCK;
    lock.l_whence = SEEK_SET;
    while (fcntl(fd_, F_SETLKW, &lock) == -1 && errno == EINTR) {
    }
  }
  ~SharedFileLock() {
    struct flock lock {};
    lock.l_type = F_UNLCK;
    lock.l_whence = SEEK_SET;
    fcntl(fd_, F_SETLK, &lock);
  }
  SharedFileLock(const SharedFileLock&) = delete;
  SharedFileLock& operator=(const SharedFileLock&) = delete;

 private:
  int fd_;
};

// The fields of one history line, in the syntax StarPU 1.3 writes them (printf's %x, %lu, %e
// and %u between white space), which its sscanf reads back. Checked without converting them
// (sscanf of every line cost 302 million instructions at a start on 3.1 MB of models, this 61
// million): a field is accepted only in that syntax and only whole, so nothing accepted here
// fails StarPU's reading.
class HistoryLine {
 public:
  explicit HistoryLine(const char* line) : p_(line) {}

  bool with_flops() {
    bool flops_sound = false;
    return leading_fields() && real(flops_sound, true) && trailing_fields() && flops_sound;
  }
  bool without_flops() { return leading_fields() && trailing_fields(); }

 private:
  // footprint (%x) and size (%lu)
  bool leading_fields() { return digits(true) && digits(false); }
  // mean, deviation, sum and sum2, each at least 0, then the sample count (%u) and nothing else
  bool trailing_fields() {
    for (int i = 0; i < 4; ++i) {
      bool sound = false;
      if (!real(sound, false) || !sound) return false;
    }
    if (!digits(false)) return false;
    skip_space();
    return *p_ == '\0';
  }

  void skip_space() {
    while (std::isspace(static_cast<unsigned char>(*p_))) ++p_;
  }
  bool field_ends() const { return *p_ == '\0' || std::isspace(static_cast<unsigned char>(*p_)); }

  bool digits(bool hexadecimal) {
    skip_space();
    const char* start = p_;
    while (hexadecimal ? std::isxdigit(static_cast<unsigned char>(*p_)) : std::isdigit(static_cast<unsigned char>(*p_)))
      ++p_;
    return p_ > start && field_ends();
  }

  bool word(const char* lower) {
    std::size_t i = 0;
    while (lower[i] && std::tolower(static_cast<unsigned char>(p_[i])) == lower[i]) ++i;
    if (lower[i]) return false;
    p_ += i;
    return true;
  }

  // A real as %e writes it (or nan, inf); `sound`: not below 0, or NaN where `nan_allowed`
  // (StarPU's checks: isnan(flops) || flops >= 0, and mean, deviation, sum, sum2 >= 0).
  bool real(bool& sound, bool nan_allowed) {
    skip_space();
    const char* start = p_;
    const bool minus = *p_ == '-';
    if (*p_ == '-' || *p_ == '+') ++p_;
    if (word("nan")) {
      sound = nan_allowed;
      return field_ends();
    }
    if (word("inf")) {
      word("inity");
      sound = !minus;
      return field_ends();
    }
    const char* mantissa = p_;
    while (std::isdigit(static_cast<unsigned char>(*p_))) ++p_;
    bool any_digit = p_ > mantissa;
    if (*p_ == '.') {
      const char* fraction = ++p_;
      while (std::isdigit(static_cast<unsigned char>(*p_))) ++p_;
      any_digit = any_digit || p_ > fraction;
    }
    if (!any_digit) return false;
    if (*p_ == 'e' || *p_ == 'E') {
      ++p_;
      if (*p_ == '-' || *p_ == '+') ++p_;
      const char* exponent = p_;
      while (std::isdigit(static_cast<unsigned char>(*p_))) ++p_;
      if (p_ == exponent) return false;
    }
    if (!field_ends()) return false;
    // Only a minus sign needs the value: -0 is not below 0.
    sound = !minus || std::strtod(start, nullptr) >= 0;
    return true;
  }

  const char* p_;
};

// A reader following StarPU 1.3's parser step by step (the same scanf conversions in the same
// order), reporting failure where StarPU would assert.
class ModelReader {
 public:
  explicit ModelReader(FILE* f) : f_(f) {}

  // Between fields StarPU skips empty lines and comment lines ('#' first), nothing else.
  void skip_comments() {
    for (;;) {
      int c = std::getc(f_);
      while (c == '\n') c = std::getc(f_);
      if (c != '#') {
        if (c != EOF) std::ungetc(c, f_);
        return;
      }
      while (c != '\n' && c != EOF) c = std::getc(f_);
    }
  }

  bool integer_line(int& value) {
    skip_comments();
    return std::fscanf(f_, "%d\n", &value) == 1;
  }
  bool unsigned_line(unsigned& value) {
    skip_comments();
    return std::fscanf(f_, "%u\n", &value) == 1;
  }
  // StarPU writes NaN as "nan" (read by scanf) or, with its own NaN reader, "NaN".
  bool real(const char* format) {
    double v = 0;
    return std::fscanf(f_, format, &v) == 1;
  }
  bool end_of_line() { return std::fscanf(f_, "\n") == 0; }

  bool regression() {
    skip_comments();
    double s[4];
    if (std::fscanf(f_, "%le\t%le\t%le\t%le\t", &s[0], &s[1], &s[2], &s[3]) != 4) return false;
    if (!real("%le") || !real("\t%le")) return false;
    unsigned nsample = 0;
    unsigned long minx = 0, maxx = 0;
    if (std::fscanf(f_, "\t%u\t%lu\t%lu\n", &nsample, &minx, &maxx) != 3) return false;
    skip_comments();
    if (!real("%le") || !real("\t%le") || !real("%le") || !end_of_line()) return false;
    skip_comments();
    unsigned ncoeff = 0;
    if (std::fscanf(f_, "%u", &ncoeff) != 1 || ncoeff > 1024) return false;
    for (unsigned i = 0; i < ncoeff; ++i)
      if (!real("%le")) return false;
    return end_of_line();
  }

  // One history line: footprint, size, [flops,] mean, deviation, sum, sum2, samples; the values
  // StarPU asserts on must not be negative. Read into a buffer of StarPU's length (its
  // STR_LONG_LENGTH): a longer line fails its assertion that the line ends there.
  bool history_entry() {
    skip_comments();
    char line[256];
    if (!std::fgets(line, sizeof line, f_) || !std::strchr(line, '\n')) return false;
    return HistoryLine(line).with_flops() || HistoryLine(line).without_flops();
  }

  bool per_arch() {
    unsigned entries = 0;
    if (!unsigned_line(entries) || !regression()) return false;
    for (unsigned e = 0; e < entries; ++e)
      if (!history_entry()) return false;
    return true;
  }

  bool combination() {
    int devices = 0;
    if (!integer_line(devices) || devices < 1 || devices > kMaxDevicesPerComb) return false;
    for (int d = 0; d < devices; ++d) {
      int type = 0, id = 0, cores = 0;
      if (!integer_line(type) || !integer_line(id) || !integer_line(cores)) return false;
      if (type < 0 || type > kMaxDeviceTypes || id < 0 || cores < 0) return false;
    }
    unsigned implementations = 0;
    if (!unsigned_line(implementations) || implementations < 1) return false;
    for (unsigned i = 0; i < implementations; ++i)
      if (!per_arch()) return false;
    return true;
  }

  bool model() {
    int version = 0, combinations = 0;
    if (!integer_line(version) || version != kPerfModelVersion) return false;
    if (!integer_line(combinations) || combinations < 0) return false;
    for (int c = 0; c < combinations; ++c)
      if (!combination()) return false;
    return true;
  }

 private:
  FILE* f_;
};

void set_aside(const fs::path& file, std::vector<std::string>& set_aside_paths) {
  std::error_code ec;
  fs::path target = file;
  target += ".corrupt";
  fs::rename(file, target, ec);
  if (ec) fs::remove(file, ec);  // a file StarPU would abort on must not stay in place
  set_aside_paths.push_back(file.string());
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool perf_model_file_is_sound(const std::string& path) {
  File f(std::fopen(path.c_str(), "r"), &std::fclose);
  if (!f) return true;  // unreadable: StarPU will not read it either
  const SharedFileLock lock(f.get());
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return false;
  if (std::ftell(f.get()) == 0) return true;
  std::rewind(f.get());
  return ModelReader(f.get()).model();
}

bool bus_file_is_sound(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return true;
  std::string bytes;
  {
    const SharedFileLock lock(f.get());
    char buffer[4096];
    for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, f.get())) > 0;) bytes.append(buffer, got);
  }
  if (bytes.empty() || bytes.back() != '\n') return false;
  for (const char c : bytes)
    if (!(c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f))) return false;
  return true;
}

std::vector<std::string> set_aside_corrupt_perf_models(const PerfModelLocation& location) {
  std::vector<std::string> bad;
  std::error_code ec;
  const fs::path root(location.directory);
  const std::string host_suffix = "." + location.hostname;
  const fs::path codelets = root / "codelets" / std::to_string(kPerfModelVersion);
  for (fs::directory_iterator it(codelets, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file(ec) && ends_with(name, host_suffix) && !perf_model_file_is_sound(it->path().string()))
      set_aside(it->path(), bad);
  }
  // Bus files: <host>.affinity, .bandwidth, .config, .latency (the platform XML files are only
  // read by simulation builds).
  for (const char* kind : {".affinity", ".bandwidth", ".config", ".latency"}) {
    const fs::path file = root / "bus" / (location.hostname + kind);
    if (fs::is_regular_file(file, ec) && !bus_file_is_sound(file.string())) set_aside(file, bad);
  }
  return bad;
}

}  // namespace tessera::detail
