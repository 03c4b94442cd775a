#include "tools/bench_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace swarm::tools {

namespace {

constexpr const char* font = "font-family=\"sans-serif\"";

struct series_style {
  const char* name;
  double latency_stats::*field;
  const char* colour;
};

constexpr series_style styles[] = {{"p50", &latency_stats::p50, "#1f77b4"},
                                   {"p90", &latency_stats::p90, "#2ca02c"},
                                   {"p99", &latency_stats::p99, "#ff7f0e"},
                                   {"p99.9", &latency_stats::p999, "#d62728"},
                                   {"max", &latency_stats::max, "#7f7f7f"}};

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

std::string size_label(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf,
                v >= 100    ? "%.0f"
                : v >= 10   ? "%.1f"
                : v >= 0.01 ? "%.2f"
                            : "%.1g",
                v);
  return buf;
}

/// Maps log10 of a positive value in [lo, hi] onto [a, b].
struct log_axis {
  double lo, hi, a, b;
  double at(double v) const {
    v = std::clamp(v, lo, hi);
    return a +
           (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * (b - a);
  }
};

void latency_panel(std::ostringstream& svg, const latency_curve& c, double top) {
  const double left = 70, width = 560, height = 240;
  double lo = 1e300, hi = 0;
  for (auto& p : c.points)
    for (auto& s : styles)
      for (double v : {p.call.*s.field, p.floor.*s.field})
        if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  if (hi <= 0) return;
  lo = std::pow(10, std::floor(std::log10(lo)));
  hi = std::pow(10, std::ceil(std::log10(hi)));
  if (hi <= lo) hi = lo * 10;
  log_axis y{lo, hi, top + height, top};
  size_t n = c.points.size();
  auto x_at = [&](size_t i) {
    return n > 1 ? left + static_cast<double>(i) * width / static_cast<double>(n - 1)
                 : left + width / 2;
  };
  svg << "<text x=\"" << left << "\" y=\"" << top - 12 << "\" " << font
      << " font-size=\"13\" font-weight=\"bold\">" << escaped(c.title) << "</text>\n";
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << width
      << "\" height=\"" << height << "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (double d = lo; d <= hi * 1.0001; d *= 10) {
    svg << "<line x1=\"" << left << "\" x2=\"" << left + width << "\" y1=\"" << y.at(d)
        << "\" y2=\"" << y.at(d) << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6
        << "\" y=\"" << y.at(d) + 4 << "\" " << font
        << " font-size=\"11\" text-anchor=\"end\">" << number(d) << "</text>\n";
  }
  svg << "<text x=\"14\" y=\"" << top + height / 2 << "\" " << font
      << " font-size=\"11\" transform=\"rotate(-90 14 " << top + height / 2
      << ")\" text-anchor=\"middle\">latency, µs (log)</text>\n";
  for (size_t i = 0; i < n; ++i)
    svg << "<text x=\"" << x_at(i) << "\" y=\"" << top + height + 16 << "\" " << font
        << " font-size=\"11\" text-anchor=\"middle\">" << size_label(c.points[i].bytes)
        << "</text>\n";
  auto line = [&](double latency_stats::*f, bool floor, const char* colour) {
    svg << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\""
        << (floor ? " stroke-dasharray=\"6 4\"" : "") << " points=\"";
    for (size_t i = 0; i < n; ++i) {
      auto& st = floor ? c.points[i].floor : c.points[i].call;
      svg << x_at(i) << "," << y.at(st.*f) << " ";
    }
    svg << "\"/>\n";
  };
  double ly = top + 6;
  for (auto& s : styles) {
    line(s.field, false, s.colour);
    svg << "<line x1=\"" << left + width + 14 << "\" x2=\"" << left + width + 40
        << "\" y1=\"" << ly + 8 << "\" y2=\"" << ly + 8 << "\" stroke=\"" << s.colour
        << "\" stroke-width=\"2\"/><text x=\"" << left + width + 46 << "\" y=\""
        << ly + 12 << "\" " << font << " font-size=\"11\">" << s.name << "</text>\n";
    ly += 18;
  }
  for (auto& s : {styles[0], styles[2]}) {
    line(s.field, true, s.colour);
    svg << "<line x1=\"" << left + width + 14 << "\" x2=\"" << left + width + 40
        << "\" y1=\"" << ly + 8 << "\" y2=\"" << ly + 8 << "\" stroke=\"" << s.colour
        << "\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/><text x=\""
        << left + width + 46 << "\" y=\"" << ly + 12 << "\" " << font
        << " font-size=\"11\">floor " << s.name << "</text>\n";
    ly += 18;
  }
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out{path};
  out << text;
  if (!out) throw std::runtime_error("cannot write '" + path.string() + "'");
}

} // namespace

std::string latency_svg(const std::vector<latency_curve>& curves) {
  const double panel = 320;
  std::ostringstream svg;
  double total = 40 + panel * static_cast<double>(std::max<size_t>(1, curves.size()));
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"" << total
      << "\" viewBox=\"0 0 900 " << total << "\">\n<rect width=\"100%\" height=\"100%\" "
      << "fill=\"white\"/>\n";
  double top = 50;
  for (auto& c : curves) {
    latency_panel(svg, c, top);
    top += panel;
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string ratios_svg(const std::vector<figure>& rows) {
  std::vector<const figure*> bars;
  for (auto& f : rows)
    if (!f.ref_key.empty() && f.ref > 0 && f.value > 0) bars.push_back(&f);
  const double label_w = 330, left = label_w + 10, width = 360, bar_h = 16, gap = 6;
  double lo = 1, hi = 1;
  for (auto* f : bars)
    lo = std::min(lo, ratio_of(*f)), hi = std::max(hi, ratio_of(*f));
  lo = std::pow(10, std::floor(std::log10(lo)));
  hi = std::pow(10, std::ceil(std::log10(hi)));
  if (hi <= lo) hi = lo * 10;
  log_axis x{lo, hi, left, left + width};
  double height = 70 + static_cast<double>(bars.size()) * (bar_h + gap);
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1180\" height=\"" << height
      << "\" viewBox=\"0 0 1180 " << height
      << "\">\n<rect width=\"100%\" height=\"100%\" "
      << "fill=\"white\"/>\n<text x=\"10\" y=\"20\" " << font
      << " font-size=\"13\" font-weight=\"bold\">each figure over its floor or "
         "reference, "
         "measured in the same run (log scale; for times, lower is better; for rates, "
         "higher)</text>\n";
  double top = 40;
  for (double d = lo; d <= hi * 1.0001; d *= 10)
    svg << "<line x1=\"" << x.at(d) << "\" x2=\"" << x.at(d) << "\" y1=\"" << top
        << "\" y2=\"" << height - 20 << "\" stroke=\"" << (d == 1 ? "#333" : "#ddd")
        << "\"/>\n<text x=\"" << x.at(d) << "\" y=\"" << height - 6 << "\" " << font
        << " font-size=\"11\" text-anchor=\"middle\">" << number(d) << "x</text>\n";
  for (auto* f : bars) {
    double r = ratio_of(*f);
    double a = x.at(std::min(1.0, r)), b = x.at(std::max(1.0, r));
    const char* colour = f->kind == goal::none ? "#1f77b4"
                         : met(*f)             ? "#2ca02c"
                                               : "#d62728";
    svg << "<text x=\"" << label_w << "\" y=\"" << top + 12 << "\" " << font
        << " font-size=\"11\" text-anchor=\"end\">" << escaped(f->key) << "</text>\n"
        << "<rect x=\"" << a << "\" y=\"" << top << "\" width=\"" << std::max(1.0, b - a)
        << "\" height=\"" << bar_h << "\" fill=\"" << colour << "\"/>\n"
        << "<text x=\"" << left + width + 8 << "\" y=\"" << top + 12 << "\" " << font
        << " font-size=\"11\">" << number(r) << "x: " << number(f->value) << " "
        << escaped(f->unit) << " vs " << escaped(f->ref_key) << " " << number(f->ref)
        << "</text>\n";
    top += bar_h + gap;
  }
  svg << "</svg>\n";
  return svg.str();
}

std::vector<std::string> write_plots(const std::string& dir,
                                     const std::vector<figure>& rows,
                                     const std::vector<latency_curve>& curves) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create folder '" + dir + "': " + ec.message());
  std::vector<std::string> written;
  if (!curves.empty()) {
    auto path = std::filesystem::path{dir} / "latency.svg";
    write_file(path, latency_svg(curves));
    written.push_back(path.string());
  }
  auto path = std::filesystem::path{dir} / "ratios.svg";
  write_file(path, ratios_svg(rows));
  written.push_back(path.string());
  return written;
}

} // namespace swarm::tools
