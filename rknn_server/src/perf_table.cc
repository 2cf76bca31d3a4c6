#include "perf_table.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

namespace orknn::server {
namespace {

std::vector<std::string> split_columns(const std::string& line) {
  std::vector<std::string> cells;
  size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && line[at] == ' ') ++at;
    if (at >= line.size()) break;
    size_t end = line.find("  ", at);
    if (end == std::string::npos) end = line.size();
    size_t trimmed = end;
    while (trimmed > at && line[trimmed - 1] == ' ') --trimmed;
    cells.push_back(line.substr(at, trimmed - at));
    at = end;
  }
  return cells;
}

}  // namespace

std::vector<openrknn::server::v1::LayerPerf> parse_perf_detail(const std::string& text) {
  std::vector<openrknn::server::v1::LayerPerf> layers;
  std::istringstream lines(text);
  std::string line;
  std::map<std::string, size_t> column;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (!in_table) {
      const std::vector<std::string> header = split_columns(line);
      if (header.size() >= 3 && header[0] == "ID" && header[1] == "OpType") {
        for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
        in_table = column.count("Time(us)") != 0;
      }
      continue;
    }
    if (line.rfind("---", 0) == 0) break;
    const std::vector<std::string> cells = split_columns(line);
    auto cell = [&](const char* name) -> std::string {
      const auto found = column.find(name);
      return found != column.end() && found->second < cells.size() ? cells[found->second]
                                                                   : std::string();
    };
    char* end = nullptr;
    const std::string id = cell("ID");
    const long parsed_id = std::strtol(id.c_str(), &end, 10);
    if (id.empty() || *end != '\0' || parsed_id < 0) continue;
    openrknn::server::v1::LayerPerf layer;
    layer.set_id(static_cast<uint32_t>(parsed_id));
    layer.set_op_type(cell("OpType"));
    layer.set_data_type(cell("DataType"));
    layer.set_target(cell("Target"));
    layer.set_input_shape(cell("InputShape"));
    layer.set_output_shape(cell("OutputShape"));
    layer.set_time_us(std::strtoll(cell("Time(us)").c_str(), nullptr, 10));
    layer.set_full_name(cell("FullName"));
    layers.push_back(std::move(layer));
  }
  return layers;
}

std::string format_perf_summary(const std::vector<openrknn::server::v1::LayerPerf>& layers,
                                int64_t total_time_us, double fps) {
  static const char kRule[] = "=====================================================\n";
  std::string out;
  out += kRule;
  out += "                    Performance\n";
  out += kRule;
  char line[512];
  if (!layers.empty()) {
    std::snprintf(line, sizeof(line), "%-12s%-39s%s\n", "Layer ID", "Name", "Time(us)");
    out += line;
    for (const auto& layer : layers) {
      std::snprintf(line, sizeof(line), "%-12u%-39s%lld\n", layer.id(), layer.full_name().c_str(),
                    static_cast<long long>(layer.time_us()));
      out += line;
    }
  }
  std::snprintf(line, sizeof(line), "Total Time(us): %lld\nFPS: %.2f\n",
                static_cast<long long>(total_time_us), fps);
  out += line;
  out += kRule;
  return out;
}

}  // namespace orknn::server
