// Only with CUDA: the table holds the CUDA tile kernels' configurations.
#ifdef TESSERA_HAVE_CUDA
#include "tile_tuning_table.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessera/error.hpp"
#include "tessera/tools/tuning.hpp"

namespace tessera::detail {

using kernels::cuda::TileKernelConfig;

void TileTuningTable::set(const TileTuningEntry& entry) {
  for (TileTuningEntry& e : entries_) {
    if (e.gpu == entry.gpu && e.precision == entry.precision && e.op == entry.op && e.nb == entry.nb) {
      e = entry;
      return;
    }
  }
  entries_.push_back(entry);
}

namespace {

// The entry for (gpu, precision, op) whose nb is nearest to nb on a log scale (the smaller nb on
// ties), or null.
const TileTuningEntry* nearest_entry(const std::vector<TileTuningEntry>& entries, const std::string& gpu,
                                     Precision precision, const std::string& op, int nb) {
  const TileTuningEntry* best = nullptr;
  double best_dist = 0;
  const double target = std::log(static_cast<double>(std::max(nb, 1)));
  for (const TileTuningEntry& e : entries) {
    if (e.gpu != gpu || e.precision != precision || e.op != op) continue;
    const double dist = std::fabs(std::log(static_cast<double>(std::max(e.nb, 1))) - target);
    if (!best || dist < best_dist - 1e-12 || (std::fabs(dist - best_dist) <= 1e-12 && e.nb < best->nb)) {
      best = &e;
      best_dist = dist;
    }
  }
  return best;
}

}  // namespace

std::optional<TileKernelConfig> TileTuningTable::lookup(const std::string& gpu, Precision precision,
                                                        const std::string& op, int nb) const {
  const TileTuningEntry* best = nearest_entry(entries_, gpu, precision, op, nb);
  if (!best) return std::nullopt;
  return best->cfg;
}

FasterKernel TileTuningTable::faster(const std::string& gpu, Precision precision, const std::string& op, int nb) const {
  const TileTuningEntry* best = nearest_entry(entries_, gpu, precision, op, nb);
  if (!best || best->vendor_time_us <= 0 || best->time_us <= 0) return FasterKernel::unknown;
  return best->time_us < best->vendor_time_us ? FasterKernel::custom : FasterKernel::vendor;
}

FasterKernels::FasterKernels(const TileTuningTable& table, const std::string& gpu) {
  for (const TileTuningEntry& e : table.entries())
    if (e.gpu == gpu && e.time_us > 0 && e.vendor_time_us > 0) entries_.push_back(e);
}

FasterKernel FasterKernels::at(Precision precision, const char* op, int nb) const {
  const TileTuningEntry* best = nullptr;
  int best_distance = 0;
  for (const TileTuningEntry& e : entries_) {
    if (e.precision != precision || e.op != op) continue;
    // Nearest on a log scale, the smaller nb on ties: compare nb / e.nb against e.nb / nb.
    const long long a = static_cast<long long>(std::max(nb, 1)), b = std::max(e.nb, 1);
    const int distance = static_cast<int>(a > b ? (a * 1024) / b : (b * 1024) / a);
    if (!best || distance < best_distance || (distance == best_distance && e.nb < best->nb)) {
      best = &e;
      best_distance = distance;
    }
  }
  if (!best) return FasterKernel::unknown;
  return best->time_us < best->vendor_time_us ? FasterKernel::custom : FasterKernel::vendor;
}

std::string TileTuningTable::to_json() const {
  nlohmann::json entries = nlohmann::json::array();
  for (const TileTuningEntry& e : entries_) {
    entries.push_back({{"gpu", e.gpu},
                       {"precision", std::string(1, lapack_letter(e.precision))},
                       {"op", e.op},
                       {"nb", e.nb},
                       {"ib", e.cfg.ib},
                       {"threads", e.cfg.threads},
                       {"tile", e.cfg.tile},
                       {"tile_n", e.cfg.tile_n},
                       {"variant", e.cfg.variant},
                       {"crossover", e.cfg.crossover},
                       {"time_us", e.time_us},
                       {"vendor_time_us", e.vendor_time_us}});
  }
  return nlohmann::json{{"version", 1}, {"entries", entries}}.dump(2);
}

TileTuningTable TileTuningTable::from_json(const std::string& text) {
  TileTuningTable table;
  try {
    const nlohmann::json doc = nlohmann::json::parse(text);
    for (const nlohmann::json& j : doc.at("entries")) {
      TileTuningEntry e;
      e.gpu = j.at("gpu").get<std::string>();
      const std::string p = j.at("precision").get<std::string>();
      if (p.size() != 1 || !precision_from_letter(p[0], &e.precision) || is_complex(e.precision))
        throw InvalidArgument("tuning table: precision must be s or d");
      e.op = j.at("op").get<std::string>();
      const auto& ops = tile_operations();
      if (std::find(ops.begin(), ops.end(), e.op) == ops.end())
        throw InvalidArgument("tuning table: unknown op " + e.op);
      e.nb = j.at("nb").get<int>();
      e.cfg.ib = j.value("ib", 0);
      e.cfg.threads = j.value("threads", 0);
      e.cfg.tile = j.value("tile", 0);
      e.cfg.tile_n = j.value("tile_n", 0);
      e.cfg.variant = j.value("variant", 0);
      e.cfg.crossover = j.value("crossover", 0);
      e.time_us = j.value("time_us", 0.0);
      e.vendor_time_us = j.value("vendor_time_us", 0.0);
      table.set(e);
    }
  } catch (const nlohmann::json::exception& ex) {
    throw InvalidArgument(std::string("tuning table: ") + ex.what());
  }
  return table;
}

void TileTuningTable::save(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw InvalidArgument("tuning table: cannot write " + path);
  out << to_json() << '\n';
}

TileTuningTable TileTuningTable::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("tuning table: cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return from_json(text.str());
}

}  // namespace tessera::detail

#endif  // TESSERA_HAVE_CUDA
