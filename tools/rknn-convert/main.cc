// rknn-convert: ONNX to the open .rknn format. Parses the command line (options/) and calls the
// library entry points (converter.h); everything it does is testable without this file.
#include <cstdio>
#include <string>
#include <vector>

#include "converter.h"
#include "export/model_export.h"
#include "options/option_parsing.h"
#include "passes/passes.h"

namespace {

int fail(const orknn::Status& status) {
  std::fprintf(stderr, "E rknn-convert: %s\n", status.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace orknn::convert;
  const std::vector<std::string> arguments(argv, argv + argc);
  if (arguments.size() <= 1) {
    std::fputs(usage_text().c_str(), stderr);
    return 2;
  }
  orknn::Result<ParsedCommandLine> parsed = parse_command_line(arguments);
  if (!parsed.ok()) {
    fail(parsed.status());
    std::fprintf(stderr, "run rknn-convert --help for the options\n");
    return 2;
  }
  const ConvertOptions& options = parsed->options;
  switch (parsed->command) {
    case Command::kHelp:
      std::fputs(usage_text().c_str(), stdout);
      return 0;
    case Command::kVersion:
      std::printf("rknn-convert %s (OpenRKNN)\n", converter_version());
      return 0;
    case Command::kListOps:
      std::printf("%s\n", supported_ops_text().c_str());
      return 0;
    case Command::kConvert: {
      ConversionSummary summary;
      orknn::Status status = convert_model(options, &summary);
      if (!status.ok()) return fail(status);
      if (!options.quiet) std::fputs(format_summary(summary).c_str(), stdout);
      return 0;
    }
    case Command::kHybridStep1: {
      orknn::Status status = write_quantization_config(options);
      if (!status.ok()) return fail(status);
      if (!options.quiet) {
        std::printf(
            "wrote the quantization config; edit it, then convert with "
            "--quantization-config\n");
      }
      return 0;
    }
    case Command::kAccuracyAnalysis: {
      orknn::Status status = run_accuracy_analysis(options);
      if (!status.ok()) return fail(status);
      return 0;
    }
  }
  return 0;
}
