// Reading ConvertOptions from a YAML/JSON config file and from command-line arguments.
//
// Both sources go through one table of keys (option_parsing.cc), so every option has the same
// name and value syntax in both: on the command line `--mean-values '[[0,0,0]]'` (dashes or
// underscores, values in YAML flow syntax, or comma/semicolon separated lists) and in a file
// `mean_values: [[0, 0, 0]]`. Unknown keys are errors, so a typo never silently does nothing.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "options/convert_options.h"

namespace orknn::convert {

enum class Command { kConvert, kHybridStep1, kAccuracyAnalysis, kHelp, kVersion, kListOps };

struct ParsedCommandLine {
  Command command = Command::kConvert;
  ConvertOptions options;
};

// Parses argv (argv[0] is the program). A --config file is applied first, then every other
// argument in order, so the command line overrides the file.
Result<ParsedCommandLine> parse_command_line(const std::vector<std::string>& arguments);

// Applies the YAML or JSON document in `path` to *options (relative paths inside it resolve
// against its directory). Exposed for tests and the library entry point.
Status apply_config_file(const std::string& path, ConvertOptions* options);
// Applies a config document given as text; relative paths resolve against `base_directory`.
Status apply_config_text(const std::string& text, const std::string& base_directory,
                         const std::string& source_name, ConvertOptions* options);

// The --help text.
std::string usage_text();

}  // namespace orknn::convert
