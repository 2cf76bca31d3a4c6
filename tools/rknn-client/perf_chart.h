// A self-contained chart of per-layer time (no scripts, no external files): SVG, or the same SVG
// inside an HTML page with the summary text.
#pragma once

#include <string>

#include "openrknn/server/v1/rknn_server.pb.h"

namespace orknn::client {

std::string perf_chart_svg(const openrknn::server::v1::EvalPerfResponse& perf,
                           const std::string& title);
std::string perf_chart_html(const openrknn::server::v1::EvalPerfResponse& perf,
                            const std::string& title);

// Escapes &, <, >, " and ' for XML text and attributes.
std::string xml_escape(const std::string& text);

}  // namespace orknn::client
