// tessera::Trace: the events a traced request recorded, rendered as Chrome trace-event JSON or an
// SVG Gantt chart. No StarPU: the runtime layer records into it (src/runtime/trace.cpp).
#include "tessera/trace.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <utility>

#include "tessera/error.hpp"

namespace tessera {

namespace {

enum class TraceFormat { json, svg };

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TraceFormat format_of(const std::string& path) {
  if (ends_with(path, ".json")) return TraceFormat::json;
  if (ends_with(path, ".svg")) return TraceFormat::svg;
  throw InvalidArgument("trace file '" + path +
                        "': the extension must be .json (Chrome trace events) or .svg (Gantt chart)");
}

double first_start(const std::vector<TraceEvent>& events) {
  double t0 = 0;
  for (std::size_t e = 0; e < events.size(); ++e) t0 = e == 0 ? events[e].start_us : std::min(t0, events[e].start_us);
  return t0;
}

// Workers that ran at least one task: id -> name, in id order.
std::map<int, std::string> workers_of(const std::vector<TraceEvent>& events) {
  std::map<int, std::string> workers;
  for (const TraceEvent& e : events) workers.emplace(e.worker, e.worker_name);
  return workers;
}

const char* colour_of(TaskKind kind) {
  switch (kind) {
    case TaskKind::potrf:
      return "#d62728";
    case TaskKind::trsm:
      return "#ff7f0e";
    case TaskKind::syrk:
      return "#2ca02c";
    case TaskKind::gemm:
      return "#1f77b4";
    case TaskKind::copy_in:
      return "#9467bd";
    case TaskKind::copy_out:
      return "#8c564b";
    case TaskKind::other:
      return "#7f7f7f";
  }
  return "#7f7f7f";
}

std::string xml_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// "CUDA 0.1 (NVIDIA H100 80GB HBM3 ...)" -> "CUDA 0.1": the row label.
std::string short_worker_name(const std::string& name) { return name.substr(0, name.find(" (")); }

// A tick step of 1, 2 or 5 times a power of ten giving about `target` ticks over `span`.
double tick_step(double span, int target) {
  const double raw = span / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

// Gantt chart geometry, in SVG user units.
struct GanttLayout {
  double left = 110;  // worker labels
  double plot_width = 1000;
  double top = 40;  // title
  double row_height = 18;
  double row_gap = 4;
  double axis_height = 36;
  double legend_height = 24;
};

}  // namespace

Trace::Trace(std::string save_to) : save_to_(std::move(save_to)) {
  if (!save_to_.empty()) format_of(save_to_);
}

Trace::~Trace() {
  if (save_to_.empty()) return;
  try {
    write(save_to_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: could not write the trace: %s\n", e.what());
  }
}

void Trace::record(TraceEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

std::vector<TraceEvent> Trace::events() const {
  std::vector<TraceEvent> copy;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    copy = events_;
  }
  std::stable_sort(copy.begin(), copy.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.start_us < b.start_us; });
  return copy;
}

void Trace::record(const TraceTransfer& transfer) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (TraceTransfer& t : transfers_)
    if (t.from == transfer.from && t.to == transfer.to) {
      t.bytes += transfer.bytes;
      t.count += transfer.count;
      return;
    }
  transfers_.push_back(transfer);
}

std::vector<TraceTransfer> Trace::transfers() const {
  std::vector<TraceTransfer> copy;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    copy = transfers_;
  }
  std::sort(copy.begin(), copy.end(), [](const TraceTransfer& a, const TraceTransfer& b) {
    return std::tie(a.from, a.to) < std::tie(b.from, b.to);
  });
  return copy;
}

void Trace::record_plan(std::vector<std::string> reasons) {
  std::lock_guard<std::mutex> lock(mutex_);
  plans_.push_back(std::move(reasons));
}

std::vector<std::vector<std::string>> Trace::plans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plans_;
}

void Trace::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
  transfers_.clear();
  plans_.clear();
}

std::string Trace::chrome_json() const {
  using nlohmann::json;
  const std::vector<TraceEvent> events = this->events();
  const double t0 = first_start(events);
  json trace_events = json::array();
  for (const auto& [id, name] : workers_of(events))
    trace_events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", id}, {"args", {{"name", name}}}});
  for (const TraceEvent& e : events)
    trace_events.push_back({{"name", to_string(e.kind)},
                            {"cat", to_string(e.kind)},
                            {"ph", "X"},
                            {"pid", 0},
                            {"tid", e.worker},
                            {"ts", e.start_us - t0},
                            {"dur", e.end_us - e.start_us},
                            {"args", {{"step", e.step}, {"i", e.i}, {"j", e.j}, {"worker", e.worker_name}}}});
  json transfers = json::array();
  for (const TraceTransfer& t : this->transfers())
    transfers.push_back({{"from", t.from}, {"to", t.to}, {"bytes", t.bytes}, {"count", t.count}});
  return json{{"traceEvents", trace_events},
              {"displayTimeUnit", "ms"},
              {"otherData", {{"transfers", transfers}, {"plans", this->plans()}}}}
      .dump(1);
}

std::string Trace::svg() const {
  const std::vector<TraceEvent> events = this->events();
  const std::vector<TraceTransfer> transfers = this->transfers();
  const std::map<int, std::string> workers = workers_of(events);
  const GanttLayout g;
  const double t0 = first_start(events);
  double t1 = t0;
  for (const TraceEvent& e : events) t1 = std::max(t1, e.end_us);
  const double span = std::max(t1 - t0, 1.0);
  const double x_scale = g.plot_width / span;

  std::map<int, int> row_of;
  for (const auto& [id, name] : workers) row_of.emplace(id, static_cast<int>(row_of.size()));
  const double rows_height = static_cast<double>(workers.size()) * (g.row_height + g.row_gap);
  const double axis_y = g.top + rows_height;
  const double width = g.left + g.plot_width + 20;
  const double height = axis_y + g.axis_height + g.legend_height + 10 + (transfers.empty() ? 0 : 18);

  double busy = 0;
  for (const TraceEvent& e : events) busy += e.end_us - e.start_us;
  const double occupancy = workers.empty() ? 0.0 : busy / (span * static_cast<double>(workers.size()));

  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n"
      "<text x=\"{:.0f}\" y=\"20\" font-size=\"13\">{} tasks on {} workers, {:.3f} ms, workers busy {:.0f}% "
      "(grey: idle)</text>\n",
      width, height, width, height, g.left, events.size(), workers.size(), span / 1000, occupancy * 100);
  for (const std::vector<std::string>& plan : this->plans()) {
    std::string lines;
    for (const std::string& reason : plan) lines += (lines.empty() ? "" : "; ") + reason;
    out += "<desc>plan: " + xml_escaped(lines) + "</desc>\n";
  }

  // Rows: a grey band per worker, so that idle time shows between the tasks.
  for (const auto& [id, name] : workers) {
    const double y = g.top + row_of[id] * (g.row_height + g.row_gap);
    out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", g.left - 6,
                       y + g.row_height - 5, xml_escaped(short_worker_name(name)));
    out += fmt::format(
        "<rect class=\"idle\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#eeeeee\"/>\n",
        g.left, y, g.plot_width, g.row_height);
  }
  for (const TraceEvent& e : events) {
    const double y = g.top + row_of[e.worker] * (g.row_height + g.row_gap);
    const double x = g.left + (e.start_us - t0) * x_scale;
    const double w = std::max((e.end_us - e.start_us) * x_scale, 0.5);
    out += fmt::format(
        "<rect class=\"task\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\">"
        "<title>{} k={} ({},{}) on {}: {:.3f} to {:.3f} ms</title></rect>\n",
        x, y, w, g.row_height, colour_of(e.kind), to_string(e.kind), e.step, e.i, e.j,
        xml_escaped(short_worker_name(e.worker_name)), (e.start_us - t0) / 1000, (e.end_us - t0) / 1000);
  }

  // Time axis in milliseconds.
  const double step_us = tick_step(span, 8);
  out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"black\"/>\n", g.left,
                     axis_y, g.left + g.plot_width, axis_y);
  for (double t = 0; t <= span + step_us * 1e-9; t += step_us) {
    const double x = g.left + t * x_scale;
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"black\"/>\n", x, axis_y,
                       x, axis_y + 5);
    out +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}</text>\n", x, axis_y + 17, t / 1000);
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">time (ms)</text>\n",
                     g.left + g.plot_width / 2, axis_y + 31);

  // Legend: the kernels present.
  std::set<TaskKind> kinds;
  for (const TraceEvent& e : events) kinds.insert(e.kind);
  double x = g.left;
  const double legend_y = axis_y + g.axis_height + 4;
  for (TaskKind kind : kinds) {
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/>\n", x + 5, legend_y + 5,
                       colour_of(kind));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x + 14, legend_y + 9, to_string(kind));
    x += 80;
  }
  std::string moved;
  for (const TraceTransfer& t : transfers)
    moved += fmt::format("{}{} to {}: {:.2f} GB in {}", moved.empty() ? "moved: " : "; ", t.from, t.to, t.bytes / 1e9,
                         t.count);
  if (!moved.empty())
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", g.left, legend_y + 27, xml_escaped(moved));
  out += "</svg>\n";
  return out;
}

void Trace::check_file_name(const std::string& path) { format_of(path); }

void Trace::write(const std::string& path) const {
  const std::string text = format_of(path) == TraceFormat::json ? chrome_json() : svg();
  errno = 0;
  std::ofstream file(path, std::ios::binary);
  file << text;
  file.close();
  if (!file)
    throw Error("could not write the trace file '" + path + "'" +
                (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
}

}  // namespace tessera
