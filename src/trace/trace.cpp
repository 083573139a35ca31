// tessera::Trace: the events a traced request recorded, rendered as Chrome trace-event JSON or an
// SVG Gantt chart. No StarPU: the runtime layer records into it (src/runtime/starpu/trace.cpp).
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

// A Gantt chart of a trace's events: a row per worker, the time axis in milliseconds, a legend of
// the task kinds present; each part's SVG text in turn.
class GanttChart {
 public:
  GanttChart(const std::vector<TraceEvent>& events, bool with_transfers) : workers_(workers_of(events)) {
    t0_ = first_start(events);
    double t1 = t0_;
    for (const TraceEvent& e : events) t1 = std::max(t1, e.end_us);
    span_ = std::max(t1 - t0_, 1.0);
    x_scale_ = g_.plot_width / span_;
    for (const auto& [id, name] : workers_) row_of_.emplace(id, static_cast<int>(row_of_.size()));
    axis_y_ = g_.top + static_cast<double>(workers_.size()) * (g_.row_height + g_.row_gap);
    width_ = g_.left + g_.plot_width + 20;
    height_ = axis_y_ + g_.axis_height + g_.legend_height + 10 + (with_transfers ? 18 : 0);
  }

  // The document's start and its title: tasks, workers, span and how busy the workers were.
  std::string header(const std::vector<TraceEvent>& events) const {
    double busy = 0;
    for (const TraceEvent& e : events) busy += e.end_us - e.start_us;
    const double occupancy = workers_.empty() ? 0.0 : busy / (span_ * static_cast<double>(workers_.size()));
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
        "font-family=\"sans-serif\" font-size=\"11\">\n"
        "<text x=\"{:.0f}\" y=\"20\" font-size=\"13\">{} tasks on {} workers, {:.3f} ms, workers busy {:.0f}% "
        "(grey: idle)</text>\n",
        width_, height_, width_, height_, g_.left, events.size(), workers_.size(), span_ / 1000, occupancy * 100);
  }

  // A grey band per worker, so that idle time shows between the tasks.
  std::string rows() const {
    std::string out;
    for (const auto& [id, name] : workers_) {
      const double y = row_y(id);
      out += fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", g_.left - 6,
                         y + g_.row_height - 5, xml_escaped(short_worker_name(name)));
      out += fmt::format(
          "<rect class=\"idle\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#eeeeee\"/>\n",
          g_.left, y, g_.plot_width, g_.row_height);
    }
    return out;
  }

  std::string tasks(const std::vector<TraceEvent>& events) const {
    std::string out;
    for (const TraceEvent& e : events) {
      const double x = g_.left + (e.start_us - t0_) * x_scale_;
      const double w = std::max((e.end_us - e.start_us) * x_scale_, 0.5);
      out += fmt::format(
          "<rect class=\"task\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{} k={} ({},{}) on {}: {:.3f} to {:.3f} ms</title></rect>\n",
          x, row_y(e.worker), w, g_.row_height, colour_of(e.kind), to_string(e.kind), e.step, e.i, e.j,
          xml_escaped(short_worker_name(e.worker_name)), (e.start_us - t0_) / 1000, (e.end_us - t0_) / 1000);
    }
    return out;
  }

  // The time axis in milliseconds.
  std::string time_axis() const {
    const double step_us = tick_step(span_, 8);
    std::string out = fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"black\"/>\n",
                                  g_.left, axis_y_, g_.left + g_.plot_width, axis_y_);
    for (double t = 0; t <= span_ + step_us * 1e-9; t += step_us) {
      const double x = g_.left + t * x_scale_;
      out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"black\"/>\n", x,
                         axis_y_, x, axis_y_ + 5);
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}</text>\n", x, axis_y_ + 17,
                         t / 1000);
    }
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">time (ms)</text>\n",
                       g_.left + g_.plot_width / 2, axis_y_ + 31);
    return out;
  }

  // The task kinds present, and the bytes moved between memory nodes.
  std::string legend(const std::vector<TraceEvent>& events, const std::vector<TraceTransfer>& transfers) const {
    std::set<TaskKind> kinds;
    for (const TraceEvent& e : events) kinds.insert(e.kind);
    std::string out;
    double x = g_.left;
    const double legend_y = axis_y_ + g_.axis_height + 4;
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
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", g_.left, legend_y + 27, xml_escaped(moved));
    return out;
  }

 private:
  double row_y(int worker) const { return g_.top + row_of_.at(worker) * (g_.row_height + g_.row_gap); }

  const GanttLayout g_;
  const std::map<int, std::string> workers_;
  std::map<int, int> row_of_;
  double t0_ = 0, span_ = 1, x_scale_ = 1, axis_y_ = 0, width_ = 0, height_ = 0;
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
  const GanttChart chart(events, !transfers.empty());
  std::string out = chart.header(events);
  for (const std::vector<std::string>& plan : this->plans()) {
    std::string lines;
    for (const std::string& reason : plan) lines += (lines.empty() ? "" : "; ") + reason;
    out += "<desc>plan: " + xml_escaped(lines) + "</desc>\n";
  }
  out += chart.rows();
  out += chart.tasks(events);
  out += chart.time_axis();
  out += chart.legend(events, transfers);
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
