#include "perfmodel_files.hpp"

#include <fcntl.h>
#include <starpu.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
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

// mkdir -p with StarPU's mode (its own creation aborts on the first failure): the first problem.
std::optional<std::string> make_private_directories(const fs::path& directory) {
  fs::path path;
  for (const fs::path& part : directory) {
    path /= part;
    if (path.empty() || part == "/") continue;
    if (::mkdir(path.c_str(), S_IRWXU) == 0) continue;
    const int error = errno;
    struct stat status {};
    if (error == EEXIST && ::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) continue;
    if (error == EEXIST) return path.string() + " exists and is not a directory";
    return path.string() + ": " + std::strerror(error);
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) return directory.string() + ": " + std::strerror(errno);
  return std::nullopt;
}

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

namespace {

std::optional<std::string> read_bus_file(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return std::nullopt;
  std::string bytes;
  const SharedFileLock lock(f.get());
  char buffer[4096];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, f.get())) > 0;) bytes.append(buffer, got);
  if (std::ferror(f.get())) return std::nullopt;
  return bytes;
}

}  // namespace

bool bus_file_is_sound(const std::string& path) {
  const std::optional<std::string> bytes = read_bus_file(path);
  return !bytes || bus_text_is_whole(*bytes);
}

bool bus_text_is_whole(const std::string& bytes) {
  if (bytes.empty() || bytes.back() != '\n') return false;
  for (const char c : bytes)
    if (!(c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f))) return false;
  return true;
}

namespace {

// The lines of a bus file that hold numbers, split into fields at tabs and spaces: lines that
// are empty or start with '#' are skipped (StarPU's _starpu_drop_comments), and with
// `trailing_comments` a '#' ends a line's numbers (the configuration file's "4 # Number of CPUs").
std::vector<std::vector<std::string>> bus_rows(const std::string& text, bool trailing_comments) {
  std::vector<std::vector<std::string>> rows;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    if (trailing_comments) line = line.substr(0, line.find('#'));
    std::vector<std::string> fields;
    std::size_t p = 0;
    while (p < line.size()) {
      const std::size_t q = line.find_first_of(" \t", p);
      const std::size_t stop = q == std::string::npos ? line.size() : q;
      if (stop > p) fields.push_back(line.substr(p, stop - p));
      p = stop + 1;
    }
    rows.push_back(std::move(fields));
  }
  return rows;
}

bool is_unsigned(const std::string& field) {
  return !field.empty() && field.size() <= 9 &&
         std::all_of(field.begin(), field.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// A real as StarPU writes one (%e, or nan / inf in any case).
bool is_real(const std::string& field) {
  if (field.empty()) return false;
  char* end = nullptr;
  std::strtod(field.c_str(), &end);
  return end == field.c_str() + field.size();
}

// StarPU 1.3's memory nodes (STARPU_MAXNODES in its configuration): the rows and columns of the
// latency and bandwidth files.
constexpr std::size_t kStarpuMaxNodes = STARPU_MAXNODES;

// Latency or bandwidth: one row per memory node, one real per memory node in each.
bool bus_matrix_is_sound(const std::string& text) {
  const auto rows = bus_rows(text, false);
  if (rows.size() != kStarpuMaxNodes) return false;
  for (const auto& row : rows)
    if (row.size() != kStarpuMaxNodes || !std::all_of(row.begin(), row.end(), is_real)) return false;
  return true;
}

// The configuration: CPUs, NUMA nodes, CUDA, OpenCL, MIC and MPI devices, one per line.
std::optional<std::vector<unsigned>> bus_config_counts(const std::string& text) {
  constexpr std::size_t kCounts = 6;
  const auto rows = bus_rows(text, true);
  if (rows.size() != kCounts) return std::nullopt;
  std::vector<unsigned> counts;
  for (const auto& row : rows) {
    if (row.size() != 1 || !is_unsigned(row[0])) return std::nullopt;
    counts.push_back(static_cast<unsigned>(std::stoul(row[0])));
  }
  return counts;
}

// The GPUs' NUMA affinities: a line per GPU (numbered from 0) with a NUMA node per NUMA node.
// StarPU reads as many lines as the GPUs it finds, and the configuration it has just checked
// names that count (or StarPU recalibrates everything before reading this file).
bool bus_affinity_is_sound(const std::string& text, unsigned gpus, unsigned numa_nodes) {
  if (text.compare(0, 5, "# GPU") != 0) return false;
  const auto rows = bus_rows(text, false);
  if (rows.size() != gpus) return false;
  for (unsigned g = 0; g < gpus; ++g) {
    const auto& row = rows[g];
    if (row.size() != 1 + static_cast<std::size_t>(numa_nodes) || row[0] != std::to_string(g)) return false;
    if (!std::all_of(row.begin() + 1, row.end(), is_unsigned)) return false;
  }
  return true;
}

// A file StarPU must read (it asserts when it cannot open or parse it) or rewrite (fopen "a+",
// asserted): a regular file this process can read and write.
bool usable_by_starpu(const fs::path& file) {
  std::error_code ec;
  return fs::is_regular_file(file, ec) && ::access(file.c_str(), R_OK | W_OK) == 0;
}

}  // namespace

std::vector<std::string> set_aside_corrupt_perf_models(const PerfModelLocation& location) {
  std::vector<std::string> bad;
  std::error_code ec;
  const fs::path root(location.directory);
  const std::string host_suffix = "." + location.hostname;
  const fs::path codelets = root / "codelets" / std::to_string(kPerfModelVersion);
  for (fs::directory_iterator it(codelets, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!ends_with(name, host_suffix)) continue;
    if (!usable_by_starpu(it->path()) || !perf_model_file_is_sound(it->path().string())) set_aside(it->path(), bad);
  }
  // Bus files (the platform XML files are only read by simulation builds). Each one set aside is
  // made again by StarPU: all of them when the configuration is missing.
  const fs::path bus = root / "bus";
  auto file = [&](const char* kind) { return bus / (location.hostname + kind); };
  auto check = [&](const char* kind, auto&& sound) {
    const fs::path path = file(kind);
    if (!fs::exists(fs::symlink_status(path, ec))) return;
    const std::optional<std::string> text = usable_by_starpu(path) ? read_bus_file(path.string()) : std::nullopt;
    if (!text || !bus_text_is_whole(*text) || !sound(*text)) set_aside(path, bad);
  };
  std::optional<std::vector<unsigned>> counts;
  check(".config", [&](const std::string& text) { return (counts = bus_config_counts(text)).has_value(); });
  check(".latency", bus_matrix_is_sound);
  check(".bandwidth", bus_matrix_is_sound);
#ifdef STARPU_USE_CUDA
  // Read only by a StarPU with CUDA, after the configuration: a file set aside with it is rewritten.
  if (counts)
    check(".affinity", [&](const std::string& text) { return bus_affinity_is_sound(text, (*counts)[2], (*counts)[1]); });
#endif
  return bad;
}

std::optional<std::string> perf_model_directory_problem(const PerfModelLocation& location) {
  // StarPU formats its directories and file names into buffers of 256 characters and cuts what
  // does not fit: the codelet directory plus a model's name (Tessera's are short) and the host.
  constexpr std::size_t kStarpuPathLength = 256, kLongestFileName = 64;
  const std::size_t longest =
      location.directory.size() + std::string("//codelets/45/").size() + kLongestFileName + location.hostname.size();
  if (longest >= kStarpuPathLength)
    return "the path is too long for StarPU (" + std::to_string(location.directory.size()) + " characters, at most " +
           std::to_string(kStarpuPathLength - 1 - (longest - location.directory.size())) + " here)";
  const fs::path root(location.directory);
  for (const fs::path& directory : {root / "codelets" / std::to_string(kPerfModelVersion), root / "bus"}) {
    if (const std::optional<std::string> problem = make_private_directories(directory)) return problem;
    // StarPU creates and rewrites its files there, and aborts where it cannot.
    std::string probe = (directory / ".tessera-probe-XXXXXX").string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) return directory.string() + ": cannot create a file there (" + std::strerror(errno) + ")";
    ::close(fd);
    ::unlink(probe.c_str());
  }
  return std::nullopt;
}

}  // namespace tessera::detail
