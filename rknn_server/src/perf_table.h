// Reads the runtime's vendor-format per-layer table (RKNN_QUERY_PERF_DETAIL) into records, and
// writes the toolkit's "Performance" summary block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "openrknn/server/v1/rknn_server.pb.h"

namespace orknn::server {

// Rows of the "Network Layer Information Table": columns are found by their header names
// (ID, OpType, DataType, Target, InputShape, OutputShape, Time(us), FullName), cells are
// separated by two or more spaces. Lines that do not fit are skipped; text without the table
// gives no records.
std::vector<openrknn::server::v1::LayerPerf> parse_perf_detail(const std::string& text);

// The toolkit's block: "Layer ID / Name / Time(us)" rows, "Total Time(us): N", "FPS: X".
std::string format_perf_summary(const std::vector<openrknn::server::v1::LayerPerf>& layers,
                                int64_t total_time_us, double fps);

}  // namespace orknn::server
