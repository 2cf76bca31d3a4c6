#include "perf_chart.h"

#include <algorithm>
#include <cstdio>

namespace orknn::client {

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
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
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string perf_chart_svg(const openrknn::server::v1::EvalPerfResponse& perf,
                           const std::string& title) {
  constexpr int kRow = 18, kLabel = 320, kBars = 460, kTop = 40;
  int64_t longest = 1;
  for (const auto& layer : perf.layers()) longest = std::max<int64_t>(longest, layer.time_us());
  const int height = kTop + kRow * std::max(1, perf.layers_size()) + 30;
  const int width = kLabel + kBars + 90;
  std::string svg;
  char line[1024];
  std::snprintf(line, sizeof(line),
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                "font-family=\"monospace\" font-size=\"12\">\n",
                width, height);
  svg += line;
  std::snprintf(line, sizeof(line),
                "<text x=\"8\" y=\"20\" font-size=\"14\">%s: total %lld us, %.2f FPS</text>\n",
                xml_escape(title).c_str(), static_cast<long long>(perf.total_time_us()),
                perf.fps());
  svg += line;
  if (perf.layers_size() == 0) {
    svg += "<text x=\"8\" y=\"50\">no per-layer times (init the context with perf_debug)</text>\n";
  }
  int row = 0;
  for (const auto& layer : perf.layers()) {
    const int y = kTop + row * kRow;
    const int bar = static_cast<int>(static_cast<double>(layer.time_us()) * kBars / longest);
    const std::string colour = layer.target() == "NPU"   ? "#4c9a2a"
                               : layer.target() == "GPU" ? "#2a6f9a"
                                                         : "#c0711f";
    std::string label = std::to_string(layer.id()) + " " + layer.full_name();
    if (label.size() > 44) label = label.substr(0, 41) + "...";
    std::snprintf(line, sizeof(line),
                  "<text x=\"8\" y=\"%d\">%s</text><rect x=\"%d\" y=\"%d\" width=\"%d\" "
                  "height=\"%d\" fill=\"%s\"><title>%s %s %lld us</title></rect>"
                  "<text x=\"%d\" y=\"%d\">%lld</text>\n",
                  y + 12, xml_escape(label).c_str(), kLabel, y + 2, std::max(bar, 1), kRow - 4,
                  colour.c_str(), xml_escape(layer.full_name()).c_str(),
                  xml_escape(layer.target()).c_str(), static_cast<long long>(layer.time_us()),
                  kLabel + std::max(bar, 1) + 6, y + 12, static_cast<long long>(layer.time_us()));
    svg += line;
    ++row;
  }
  svg += "</svg>\n";
  return svg;
}

std::string perf_chart_html(const openrknn::server::v1::EvalPerfResponse& perf,
                            const std::string& title) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + xml_escape(title) +
         "</title></head>\n<body>\n" + perf_chart_svg(perf, title) + "<pre>" +
         xml_escape(perf.summary_text()) + "</pre>\n<pre>" + xml_escape(perf.perf_detail_text()) +
         "</pre>\n</body></html>\n";
}

}  // namespace orknn::client
