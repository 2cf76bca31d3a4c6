#include "options/option_parsing.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace orknn::convert {

const char* algorithm_name(QuantizedAlgorithm algorithm) {
  switch (algorithm) {
    case QuantizedAlgorithm::kNormal:
      return "normal";
    case QuantizedAlgorithm::kKlDivergence:
      return "kl_divergence";
    case QuantizedAlgorithm::kMmse:
      return "mmse";
  }
  return "?";
}

const char* method_name(QuantizedMethod method) {
  return method == QuantizedMethod::kChannel ? "channel" : "layer";
}

const char* float_type_name(FloatType type) {
  return type == FloatType::kFloat16 ? "float16" : "float32";
}

const char* weight_rounding_name(WeightRounding rounding) {
  return rounding == WeightRounding::kNearest ? "nearest" : "error_compensated";
}

namespace {

namespace fs = std::filesystem;

// Where a value came from, for messages: "config file 'a.yaml': mean_values" or "--mean-values".
struct ValueSource {
  std::string prefix;          // "config file 'a.yaml': " or ""
  std::string key;             // as the user wrote it
  std::string base_directory;  // for relative paths; empty means the working directory
  bool from_command_line = false;
};

template <typename... Parts>
Status option_error(const ValueSource& source, const Parts&... parts) {
  return invalid_argument(source.prefix, source.key, ": ", parts...);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string describe_node(const YAML::Node& node) {
  YAML::Emitter emitter;
  emitter.SetMapFormat(YAML::Flow);
  emitter.SetSeqFormat(YAML::Flow);
  emitter << node;
  return emitter.c_str();
}

std::string resolve_path(const ValueSource& source, const std::string& path) {
  if (path.empty() || source.base_directory.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(source.base_directory) / path).lexically_normal().string();
}

// A command-line list may be written "1,2,3" or "1,2,3;4,5,6" instead of YAML flow syntax;
// such a scalar is turned into the nested sequence it means.
YAML::Node split_scalar_list(const YAML::Node& node) {
  if (!node.IsScalar()) return node;
  const std::string text = node.Scalar();
  if (text.find(',') == std::string::npos && text.find(';') == std::string::npos) return node;
  auto split = [](const std::string& value, char separator) {
    std::vector<std::string> parts;
    std::stringstream stream(value);
    std::string part;
    while (std::getline(stream, part, separator)) parts.push_back(part);
    return parts;
  };
  auto trim = [](std::string value) {
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t") + 1);
    return value;
  };
  YAML::Node result(YAML::NodeType::Sequence);
  if (text.find(';') != std::string::npos) {
    for (const std::string& group : split(text, ';')) {
      YAML::Node inner(YAML::NodeType::Sequence);
      for (const std::string& item : split(group, ',')) inner.push_back(trim(item));
      result.push_back(inner);
    }
  } else {
    for (const std::string& item : split(text, ',')) result.push_back(trim(item));
  }
  return result;
}

Result<bool> read_bool(const ValueSource& source, const YAML::Node& node) {
  if (node.IsScalar()) {
    const std::string text = lower(node.Scalar());
    if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
    if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  }
  return option_error(source, "expected true or false, got ", describe_node(node));
}

Result<double> read_number(const ValueSource& source, const YAML::Node& node) {
  if (node.IsScalar()) {
    try {
      size_t used = 0;
      const double value = std::stod(node.Scalar(), &used);
      if (used == node.Scalar().size()) return value;
    } catch (const std::exception&) {
    }
  }
  return option_error(source, "expected a number, got ", describe_node(node));
}

Result<int64_t> read_integer(const ValueSource& source, const YAML::Node& node) {
  if (node.IsScalar()) {
    try {
      size_t used = 0;
      const long long value = std::stoll(node.Scalar(), &used);
      if (used == node.Scalar().size()) return static_cast<int64_t>(value);
    } catch (const std::exception&) {
    }
  }
  return option_error(source, "expected an integer, got ", describe_node(node));
}

Result<std::string> read_string(const ValueSource& source, const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  return option_error(source, "expected a text value, got ", describe_node(node));
}

Result<std::vector<std::string>> read_string_list(const ValueSource& source,
                                                  const YAML::Node& raw) {
  const YAML::Node node = split_scalar_list(raw);
  std::vector<std::string> values;
  if (node.IsScalar()) {
    values.push_back(node.Scalar());
    return values;
  }
  if (!node.IsSequence()) {
    return option_error(source, "expected a list of names, got ", describe_node(node));
  }
  for (const YAML::Node& item : node) {
    ORKNN_ASSIGN_OR_RETURN(std::string value, read_string(source, item));
    values.push_back(value);
  }
  return values;
}

// A list of lists of numbers; a flat list means one inner list (one input).
template <typename T>
Result<std::vector<std::vector<T>>> read_nested_numbers(const ValueSource& source,
                                                        const YAML::Node& raw) {
  const YAML::Node node = split_scalar_list(raw);
  if (!node.IsSequence()) {
    return option_error(source, "expected a list of lists of numbers such as [[1, 2, 3]], got ",
                        describe_node(node));
  }
  const bool flat =
      node.size() > 0 &&
      std::all_of(node.begin(), node.end(), [](const YAML::Node& n) { return n.IsScalar(); });
  std::vector<std::vector<T>> result;
  auto read_inner = [&](const YAML::Node& inner) -> Status {
    if (!inner.IsSequence()) {
      return option_error(source, "expected a list of numbers, got ", describe_node(inner));
    }
    std::vector<T> values;
    for (const YAML::Node& item : inner) {
      if constexpr (std::is_integral_v<T>) {
        ORKNN_ASSIGN_OR_RETURN(int64_t value, read_integer(source, item));
        values.push_back(static_cast<T>(value));
      } else {
        ORKNN_ASSIGN_OR_RETURN(double value, read_number(source, item));
        values.push_back(static_cast<T>(value));
      }
    }
    result.push_back(std::move(values));
    return ok_status();
  };
  if (flat) {
    ORKNN_RETURN_IF_ERROR(read_inner(node));
  } else {
    for (const YAML::Node& inner : node) ORKNN_RETURN_IF_ERROR(read_inner(inner));
  }
  return result;
}

Result<std::vector<std::vector<std::vector<int64_t>>>> read_shape_sets(const ValueSource& source,
                                                                       const YAML::Node& node) {
  const char* expected =
      "expected a list of shape sets, each a list with one shape per input, such as "
      "[[[1,3,224,224]], [[1,3,160,160]]]";
  if (!node.IsSequence()) return option_error(source, expected, ", got ", describe_node(node));
  std::vector<std::vector<std::vector<int64_t>>> sets;
  for (const YAML::Node& set : node) {
    if (!set.IsSequence() || set.size() == 0 || !set[0].IsSequence()) {
      return option_error(source, expected, ", got ", describe_node(node));
    }
    ORKNN_ASSIGN_OR_RETURN(auto shapes, read_nested_numbers<int64_t>(source, set));
    sets.push_back(std::move(shapes));
  }
  return sets;
}

Status reject_unsupported(const ValueSource& source, const YAML::Node& node, const char* why) {
  if (node.IsNull()) return ok_status();
  if (node.IsScalar()) {
    const std::string text = lower(node.Scalar());
    if (text == "false" || text == "none" || text == "0" || text.empty()) return ok_status();
  }
  return option_error(source, "is not supported by rknn-convert (", why, ")");
}

using Setter = std::function<Status(const ValueSource&, const YAML::Node&, ConvertOptions*)>;

struct OptionKey {
  const char* name;
  Setter apply;
};

const std::vector<std::string>& known_platforms() {
  static const std::vector<std::string> platforms = {"rk3562", "rk3566", "rk3568", "rk3576",
                                                     "rk3588", "rv1103", "rv1106"};
  return platforms;
}

std::string join(const std::vector<std::string>& values, const char* separator) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? separator : "") + values[i];
  return text;
}

const std::vector<OptionKey>& option_keys() {
  static const std::vector<OptionKey> keys = {
      {"model",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::string path, read_string(s, n));
         o->model_path = resolve_path(s, path);
         return ok_status();
       }},
      {"inputs",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(o->inputs, read_string_list(s, n));
         return ok_status();
       }},
      {"input_size_list",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(o->input_size_list, read_nested_numbers<int64_t>(s, n));
         return ok_status();
       }},
      {"outputs",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(o->outputs, read_string_list(s, n));
         return ok_status();
       }},
      {"mean_values",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(o->mean_values, read_nested_numbers<float>(s, n));
         return ok_status();
       }},
      {"std_values",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(o->std_values, read_nested_numbers<float>(s, n));
         return ok_status();
       }},
      {"quant_img_rgb2bgr",
       [](const ValueSource& s, const YAML::Node& raw, ConvertOptions* o) -> Status {
         const YAML::Node n = split_scalar_list(raw);
         o->quant_img_rgb2bgr.clear();
         if (n.IsSequence()) {
           for (const YAML::Node& item : n) {
             ORKNN_ASSIGN_OR_RETURN(bool value, read_bool(s, item));
             o->quant_img_rgb2bgr.push_back(value);
           }
         } else {
           ORKNN_ASSIGN_OR_RETURN(bool value, read_bool(s, n));
           o->quant_img_rgb2bgr.push_back(value);
         }
         return ok_status();
       }},
      {"target_platform",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         // Toolkit v1 took a list; one platform per model here.
         YAML::Node value = n;
         if (n.IsSequence()) {
           if (n.size() != 1) return option_error(s, "give one platform, not ", describe_node(n));
           value = n[0];
         }
         ORKNN_ASSIGN_OR_RETURN(std::string platform, read_string(s, value));
         platform = lower(platform);
         const auto& platforms = known_platforms();
         if (std::find(platforms.begin(), platforms.end(), platform) == platforms.end()) {
           return option_error(s, "'", platform, "' is not a known platform (",
                               join(platforms, ", "), ")");
         }
         o->target_platform = platform;
         return ok_status();
       }},
      {"custom_string",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         if (n.IsNull()) {
           o->custom_string.clear();
           return ok_status();
         }
         ORKNN_ASSIGN_OR_RETURN(o->custom_string, read_string(s, n));
         if (o->custom_string.size() > 1023) {
           return option_error(s, "is ", o->custom_string.size(),
                               " bytes long; the model format allows at most 1023");
         }
         return ok_status();
       }},
      {"quantized_dtype",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::string dtype, read_string(s, n));
         dtype = lower(dtype);
         if (dtype == "asymmetric_quantized-8") dtype = "w8a8";  // Toolkit2 1.x name
         if (dtype != "w8a8") {
           return option_error(
               s, "'", dtype,
               "' is not supported: rknn-convert quantizes to w8a8 (int8 weights and "
               "activations) only; w4a16, w8a16, w4a8, w16a16i and w16a16i_dfp need runtime "
               "kernels that do not exist yet");
         }
         o->quantized_dtype = dtype;
         return ok_status();
       }},
      {"quantized_algorithm",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::string name, read_string(s, n));
         name = lower(name);
         if (name == "normal") {
           o->quantized_algorithm = QuantizedAlgorithm::kNormal;
         } else if (name == "kl_divergence" || name == "kl") {
           o->quantized_algorithm = QuantizedAlgorithm::kKlDivergence;
         } else if (name == "mmse") {
           o->quantized_algorithm = QuantizedAlgorithm::kMmse;
         } else {
           return option_error(s, "'", name, "' is not one of normal, kl_divergence, mmse");
         }
         return ok_status();
       }},
      {"quantized_method",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::string name, read_string(s, n));
         name = lower(name);
         if (name == "channel") {
           o->quantized_method = QuantizedMethod::kChannel;
         } else if (name == "layer") {
           o->quantized_method = QuantizedMethod::kLayer;
         } else {
           return option_error(s, "'", name, "' is not one of channel, layer");
         }
         return ok_status();
       }},
      {"float_dtype",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::string name, read_string(s, n));
         name = lower(name);
         if (name == "float16" || name == "fp16") {
           o->float_dtype = FloatType::kFloat16;
         } else if (name == "float32" || name == "fp32") {
           o->float_dtype = FloatType::kFloat32;
         } else {
           return option_error(s, "'", name, "' is not one of float16, float32");
         }
         return ok_status();
       }},
      {"optimization_level",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(int64_t level, read_integer(s, n));
         if (level < 0 || level > 3) return option_error(s, level, " is not in [0, 3]");
         o->optimization_level = static_cast<int>(level);
         return ok_status();
       }},
      {"op_target",
       [](const ValueSource& s, const YAML::Node& raw, ConvertOptions* o) -> Status {
         o->op_target.clear();
         if (raw.IsNull()) return ok_status();
         YAML::Node n = raw;
         // Command line: "name:cpu,other:gpu".
         if (n.IsScalar()) {
           YAML::Node map(YAML::NodeType::Map);
           std::stringstream stream(n.Scalar());
           std::string item;
           while (std::getline(stream, item, ',')) {
             const size_t colon = item.rfind(':');
             if (colon == std::string::npos) {
               return option_error(s, "expected name:target pairs, got '", item, "'");
             }
             map[item.substr(0, colon)] = item.substr(colon + 1);
           }
           n = map;
         }
         if (!n.IsMap()) {
           return option_error(s,
                               "expected a map from output tensor name to cpu, npu, gpu or "
                               "auto, got ",
                               describe_node(n));
         }
         for (const auto& entry : n) {
           ORKNN_ASSIGN_OR_RETURN(std::string name, read_string(s, entry.first));
           ORKNN_ASSIGN_OR_RETURN(std::string target, read_string(s, entry.second));
           target = lower(target);
           if (target != "cpu" && target != "npu" && target != "gpu" && target != "auto") {
             return option_error(s, "'", name, "': target '", target,
                                 "' is not one of cpu, npu, gpu, auto");
           }
           o->op_target[name] = target;
         }
         return ok_status();
       }},
      {"dynamic_input",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         if (n.IsNull()) {
           o->dynamic_input.clear();
           return ok_status();
         }
         ORKNN_ASSIGN_OR_RETURN(o->dynamic_input, read_shape_sets(s, n));
         return ok_status();
       }},
      {"do_quantization",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(o->do_quantization, read_bool(s, n));
         return ok_status();
       }},
      {"dataset",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         if (n.IsNull()) {
           o->dataset_path.clear();
           return ok_status();
         }
         ORKNN_ASSIGN_OR_RETURN(std::string path, read_string(s, n));
         o->dataset_path = resolve_path(s, path);
         return ok_status();
       }},
      {"rknn_batch_size",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         if (n.IsNull()) {
           o->rknn_batch_size = 0;
           return ok_status();
         }
         ORKNN_ASSIGN_OR_RETURN(int64_t size, read_integer(s, n));
         if (size < 1 || size > 128) return option_error(s, size, " is not in [1, 128]");
         o->rknn_batch_size = static_cast<int>(size);
         return ok_status();
       }},
      {"export_path",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::string path, read_string(s, n));
         o->output_path = resolve_path(s, path);
         return ok_status();
       }},
      {"quantization_config",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::string path, read_string(s, n));
         o->quantization_config_path = resolve_path(s, path);
         return ok_status();
       }},
      {"calibration_threads",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(int64_t threads, read_integer(s, n));
         if (threads < 0 || threads > 64) return option_error(s, threads, " is not in [0, 64]");
         o->calibration_threads = static_cast<int>(threads);
         return ok_status();
       }},
      {"weight_rounding",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::string name, read_string(s, n));
         name = lower(name);
         if (name == "nearest") {
           o->weight_rounding = WeightRounding::kNearest;
         } else if (name == "error_compensated") {
           o->weight_rounding = WeightRounding::kErrorCompensated;
         } else {
           return option_error(s, "'", name, "' is not one of nearest, error_compensated");
         }
         return ok_status();
       }},
      {"bias_correction",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(o->bias_correction, read_bool(s, n));
         return ok_status();
       }},
      {"sequential_calibration",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(o->sequential_calibration, read_bool(s, n));
         return ok_status();
       }},
      {"auto_hybrid_layers",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(int64_t layers, read_integer(s, n));
         if (layers < 0 || layers > 100000)
           return option_error(s, layers, " is not in [0, 100000]");
         o->auto_hybrid_layers = static_cast<int>(layers);
         return ok_status();
       }},
      {"weight_rounding_rows",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(int64_t rows, read_integer(s, n));
         if (rows < 16 || rows > 1000000) return option_error(s, rows, " is not in [16, 1000000]");
         o->weight_rounding_rows = rows;
         return ok_status();
       }},
      {"analysis_inputs",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::vector<std::string> paths, read_string_list(s, n));
         o->analysis_inputs.clear();
         for (const std::string& path : paths) o->analysis_inputs.push_back(resolve_path(s, path));
         return ok_status();
       }},
      {"output_dir",
       [](const ValueSource& s, const YAML::Node& n, ConvertOptions* o) -> Status {
         ORKNN_ASSIGN_OR_RETURN(std::string path, read_string(s, n));
         o->analysis_output_directory = resolve_path(s, path);
         return ok_status();
       }},
  };
  return keys;
}

// Toolkit parameters with no equivalent; accepted only when they ask for nothing.
const std::vector<std::pair<const char*, const char*>>& unsupported_keys() {
  static const std::vector<std::pair<const char*, const char*>> keys = {
      {"remove_weight", "weight-sharing slave models"},
      {"compress_weight", "weight compression"},
      {"single_core_mode", "single-core NPU models"},
      {"model_pruning", "weight pruning"},
      {"quantize_weight", "weight-only quantization of float models"},
      {"remove_reshape", "removing input/output Reshape ops"},
      {"sparse_infer", "sparse inference"},
      {"enable_flash_attention", "flash attention"},
      {"input_initial_val", "freezing inputs to constants"},
      {"proposal", "hybrid quantization proposals"},
  };
  return keys;
}

// Other spellings of a key: the toolkit's own names for the same thing, and our short forms.
std::string canonical_key(std::string key) {
  key = lower(key);
  std::replace(key.begin(), key.end(), '-', '_');
  if (key == "output" || key == "o") return "export_path";
  if (key == "model_quantization_cfg" || key == "hybrid_config" || key == "quantization_cfg") {
    return "quantization_config";
  }
  if (key == "quant_img_rgb2bgr") return "quant_img_rgb2bgr";
  if (key == "analysis_input") return "analysis_inputs";
  if (key == "output_directory" || key == "snapshot_dir") return "output_dir";
  return key;
}

Status apply_key(const ValueSource& source, const std::string& key, const YAML::Node& value,
                 ConvertOptions* options) {
  const std::string canonical = canonical_key(key);
  for (const OptionKey& option : option_keys()) {
    if (canonical == option.name) return option.apply(source, value, options);
  }
  for (const auto& [name, why] : unsupported_keys()) {
    if (canonical == name) return reject_unsupported(source, value, why);
  }
  std::vector<std::string> names;
  for (const OptionKey& option : option_keys()) names.push_back(option.name);
  return invalid_argument(source.prefix, "unknown option '", key, "' (known: ", join(names, ", "),
                          ")");
}

// Keys may sit at the top level or inside sections named after the toolkit's calls.
bool is_section(const std::string& key) {
  const std::string name = lower(key);
  return name == "config" || name == "load_onnx" || name == "build" || name == "export_rknn" ||
         name == "hybrid_quantization_step2" || name == "accuracy_analysis";
}

Status apply_document(const YAML::Node& document, const ValueSource& base,
                      const std::string& section, ConvertOptions* options) {
  if (document.IsNull()) return ok_status();
  if (!document.IsMap()) {
    return invalid_argument(base.prefix, "expected a mapping of option names to values");
  }
  for (const auto& entry : document) {
    const std::string key = entry.first.as<std::string>();
    if (is_section(key)) {
      ORKNN_RETURN_IF_ERROR(apply_document(entry.second, base, lower(key), options));
      continue;
    }
    ValueSource source = base;
    source.key = section.empty() ? key : section + "." + key;
    // The toolkit's accuracy_analysis(inputs=...) names the analysed files, not graph inputs.
    const bool analysis_files = section == "accuracy_analysis" && lower(key) == "inputs";
    ORKNN_RETURN_IF_ERROR(
        apply_key(source, analysis_files ? "analysis_inputs" : key, entry.second, options));
  }
  return ok_status();
}

}  // namespace

Status apply_config_text(const std::string& text, const std::string& base_directory,
                         const std::string& source_name, ConvertOptions* options) {
  ValueSource source;
  source.prefix = "config file '" + source_name + "': ";
  source.base_directory = base_directory;
  YAML::Node document;
  try {
    document = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    return invalid_argument(source.prefix, "not valid YAML or JSON: ", error.what());
  }
  try {
    return apply_document(document, source, "", options);
  } catch (const YAML::Exception& error) {
    return invalid_argument(source.prefix, error.what());
  }
}

Status apply_config_file(const std::string& path, ConvertOptions* options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return invalid_argument("cannot open config file '", path, "'");
  std::stringstream buffer;
  buffer << file.rdbuf();
  std::string directory = fs::path(path).parent_path().string();
  if (directory.empty()) directory = ".";
  options->config_directory = directory;
  return apply_config_text(buffer.str(), directory, path, options);
}

Result<ParsedCommandLine> parse_command_line(const std::vector<std::string>& arguments) {
  ParsedCommandLine parsed;
  size_t position = 1;
  if (position < arguments.size()) {
    const std::string first = canonical_key(arguments[position]);
    if (first == "convert" || first == "build") {
      ++position;
    } else if (first == "hybrid_step1" || first == "hybrid_quantization_step1") {
      parsed.command = Command::kHybridStep1;
      ++position;
    } else if (first == "accuracy_analysis") {
      parsed.command = Command::kAccuracyAnalysis;
      ++position;
    }
  }

  // The config file first, wherever it appears, so the rest of the line overrides it.
  for (size_t i = position; i < arguments.size(); ++i) {
    if (arguments[i] == "--config" || arguments[i] == "-c") {
      if (i + 1 >= arguments.size()) return invalid_argument("--config needs a file name");
      ORKNN_RETURN_IF_ERROR(apply_config_file(arguments[i + 1], &parsed.options));
    }
  }

  std::vector<std::string> positional;
  for (size_t i = position; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    if (argument == "--help" || argument == "-h") {
      parsed.command = Command::kHelp;
      return parsed;
    }
    if (argument == "--version") {
      parsed.command = Command::kVersion;
      return parsed;
    }
    if (argument == "--list-ops" || argument == "--list_ops") {
      parsed.command = Command::kListOps;
      return parsed;
    }
    if (argument == "--quiet" || argument == "-q") {
      parsed.options.quiet = true;
      continue;
    }
    if (argument == "--no-verify" || argument == "--no_verify") {
      parsed.options.verify_with_runtime = false;
      continue;
    }
    if (argument == "--config" || argument == "-c") {
      ++i;
      continue;
    }
    if (argument.size() < 2 || argument[0] != '-') {
      positional.push_back(argument);
      continue;
    }
    std::string key = argument.substr(argument[1] == '-' ? 2 : 1);
    std::string value;
    const size_t equals = key.find('=');
    if (equals != std::string::npos) {
      value = key.substr(equals + 1);
      key = key.substr(0, equals);
    } else {
      if (i + 1 >= arguments.size()) return invalid_argument(argument, " needs a value");
      value = arguments[++i];
    }
    ValueSource source;
    source.key = "--" + key;
    source.from_command_line = true;
    YAML::Node node;
    try {
      // Values use YAML flow syntax ("[[1,2,3]]", "{a: cpu}"); anything else is a plain text
      // value, kept verbatim (file names may contain characters YAML would interpret).
      const bool structured = !value.empty() && (value[0] == '[' || value[0] == '{');
      node = structured ? YAML::Load(value) : YAML::Node(value);
    } catch (const YAML::Exception& error) {
      return invalid_argument(source.key, ": cannot parse '", value, "': ", error.what());
    }
    try {
      ORKNN_RETURN_IF_ERROR(apply_key(source, key, node, &parsed.options));
    } catch (const YAML::Exception& error) {
      return invalid_argument(source.key, ": ", error.what());
    }
  }

  if (parsed.command == Command::kAccuracyAnalysis) {
    // accuracy-analysis MODEL [INPUT...]: files after the model are the analysed sample.
    if (!positional.empty()) {
      parsed.options.model_path = positional[0];
      for (size_t i = 1; i < positional.size(); ++i) {
        parsed.options.analysis_inputs.push_back(positional[i]);
      }
    }
  } else if (positional.size() == 1) {
    parsed.options.model_path = positional[0];
  } else if (positional.size() > 1) {
    return invalid_argument("unexpected argument '", positional[1],
                            "' (give one model; options start with --)");
  }
  return parsed;
}

std::string usage_text() {
  return R"(usage:
  rknn-convert [convert] MODEL.onnx -o MODEL.rknn [options]
  rknn-convert hybrid-step1 MODEL.onnx --dataset FILE -o MODEL.quantization.yaml [options]
  rknn-convert accuracy-analysis MODEL.onnx INPUT... [--output-dir DIR] [options]
  rknn-convert --config FILE.yaml [options]      (a YAML or JSON file with the same keys)
  rknn-convert --list-ops | --version | --help

options (toolkit names; dashes or underscores; lists in YAML flow syntax or a,b;c,d):
  -o, --export-path FILE        where to write the model (written only on success)
  --inputs NAMES                graph inputs, in order (cuts the graph there)
  --input-size-list SHAPES      one shape per input, e.g. [[1,3,224,224]]
  --outputs NAMES               graph outputs (cuts the graph there)
  --mean-values LISTS           per input, per channel, e.g. [[123.675,116.28,103.53]]
  --std-values LISTS            per input, per channel, e.g. [[58.395,57.12,57.375]]
  --quant-img-RGB2BGR BOOLS     swap RGB to BGR when reading dataset images (not stored)
  --target-platform NAME        rk3562 rk3566 rk3568 rk3576 rk3588 rv1103 rv1106
  --custom-string TEXT          stored in the model (RKNN_QUERY_CUSTOM_STRING)
  --do-quantization BOOL        default true: int8 (w8a8); false: float (float_dtype)
  --dataset FILE                calibration samples, one line each (jpg/png/npy paths)
  --quantized-dtype w8a8        the only quantized type
  --quantized-algorithm NAME    normal (min/max), kl_divergence, mmse
  --quantized-method NAME       channel (per output channel weights) or layer
  --float-dtype NAME            float16 (default) or float32
  --optimization-level N        0..3 (default 3), see docs/rknn-convert.md
  --op-target MAP               output tensor name -> cpu/npu/gpu/auto, e.g. {conv1: cpu}
  --dynamic-input SETS          e.g. [[[1,3,224,224]],[[1,3,160,160]]]
  --rknn-batch-size N           batch several frames per inference
  --quantization-config FILE    hybrid quantization overrides (see hybrid-step1)
  --calibration-threads N       0 (default): one per core
  --weight-rounding NAME        error_compensated (default: weights chosen so their errors
                                cancel on the calibration inputs) or nearest
  --bias-correction BOOL        default true: biases absorb the weights' mean output error
  --sequential-calibration BOOL default false: both of the above layer by layer, from the
                                quantized model's own inputs (docs/rknn-convert.md)
  --auto-hybrid-layers N        keep the N int8 layers that lose the most (accuracy analysis
                                on the first dataset sample) in float16 (default 0)
  --weight-rounding-rows N      calibration input rows kept per layer for both (default 4096)
  --analysis-inputs FILES       accuracy-analysis sample, one file per input
  --output-dir DIR              accuracy-analysis output directory (default ./snapshot)
  -q, --quiet                   no progress bar or summary
  --no-verify                   skip loading the written model in the runtime
)";
}

}  // namespace orknn::convert
