#include "quantize/quantization_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace orknn::convert {
namespace {

// One number or a one-element list ("min: -1.0" or "min: [-1.0]").
Result<double> read_single(const YAML::Node& node, const std::string& what) {
  try {
    if (node.IsSequence()) {
      if (node.size() != 1) return invalid_argument(what, ": expected one value (per-tensor)");
      return node[0].as<double>();
    }
    return node.as<double>();
  } catch (const YAML::Exception&) {
    return invalid_argument(what, ": expected a number");
  }
}

}  // namespace

Result<QuantizationOverrides> read_quantization_config(const std::string& path) {
  QuantizationOverrides overrides;
  YAML::Node document;
  try {
    document = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return invalid_argument("quantization config '", path, "': cannot open the file");
  } catch (const YAML::Exception& error) {
    return invalid_argument("quantization config '", path, "': not valid YAML: ", error.what());
  }
  const std::string prefix = "quantization config '" + path + "'";
  if (!document.IsMap()) return invalid_argument(prefix, ": expected a mapping");
  for (const auto& entry : document) {
    const std::string key = entry.first.as<std::string>();
    if (key != "custom_quantize_layers" && key != "quantize_parameters") {
      return invalid_argument(prefix, ": unknown key '", key,
                              "' (expected custom_quantize_layers, quantize_parameters)");
    }
  }
  const YAML::Node layers = document["custom_quantize_layers"];
  if (layers && !layers.IsNull()) {
    if (!layers.IsMap())
      return invalid_argument(prefix, ": custom_quantize_layers must be a mapping");
    for (const auto& entry : layers) {
      const std::string name = entry.first.as<std::string>();
      const std::string dtype = entry.second.IsScalar() ? entry.second.Scalar() : "";
      if (dtype == "float16") {
        overrides.float16_tensors.insert(name);
      } else {
        return invalid_argument(prefix, ": custom_quantize_layers: '", name, "': '", dtype,
                                "' is not supported (float16 only)");
      }
    }
  }
  const YAML::Node parameters = document["quantize_parameters"];
  if (parameters && !parameters.IsNull()) {
    if (!parameters.IsMap())
      return invalid_argument(prefix, ": quantize_parameters must be a mapping");
    for (const auto& entry : parameters) {
      const std::string name = entry.first.as<std::string>();
      const std::string what = prefix + ": quantize_parameters: '" + name + "'";
      const YAML::Node& values = entry.second;
      if (!values.IsMap()) return invalid_argument(what, ": expected a mapping");
      const std::string dtype = values["dtype"] ? values["dtype"].as<std::string>() : "int8";
      if (dtype == "float16") {
        overrides.float16_tensors.insert(name);
        continue;
      }
      if (dtype != "int8") {
        return invalid_argument(what, ": dtype '", dtype, "' is not supported (int8 or float16)");
      }
      if (values["min"] || values["max"]) {
        if (!values["min"] || !values["max"])
          return invalid_argument(what, ": give both min and max");
        ORKNN_ASSIGN_OR_RETURN(double minimum, read_single(values["min"], what + ": min"));
        ORKNN_ASSIGN_OR_RETURN(double maximum, read_single(values["max"], what + ": max"));
        if (!(minimum <= maximum))
          return invalid_argument(what, ": min ", minimum, " > max ", maximum);
        overrides.ranges[name] = {static_cast<float>(minimum), static_cast<float>(maximum)};
      } else if (values["scale"] && values["zero_point"]) {
        ORKNN_ASSIGN_OR_RETURN(double scale, read_single(values["scale"], what + ": scale"));
        ORKNN_ASSIGN_OR_RETURN(double zero_point,
                               read_single(values["zero_point"], what + ": zero_point"));
        if (!(scale > 0)) return invalid_argument(what, ": scale must be positive");
        overrides.ranges[name] = {static_cast<float>((-128 - zero_point) * scale),
                                  static_cast<float>((127 - zero_point) * scale)};
      }
    }
  }
  return overrides;
}

Status check_overrides_against(const QuantizationOverrides& overrides, const ir::Graph& graph,
                               const std::string& path) {
  auto check = [&](const std::string& name) -> Status {
    if (graph.has_tensor(name) && !graph.tensor(name).is_constant()) return ok_status();
    std::string similar;
    int listed = 0;
    for (const auto& [candidate, tensor] : graph.tensors) {
      if (tensor.is_constant() || listed >= 5) continue;
      const std::string tail = name.substr(name.size() > 6 ? name.size() - 6 : 0);
      if (candidate.find(tail) != std::string::npos) {
        similar += (listed++ ? ", '" : " (similar: '") + candidate + "'";
      }
    }
    if (listed) similar += ")";
    return invalid_argument("quantization config '", path, "': '", name,
                            "' is not an activation tensor of the converted model", similar,
                            "; hybrid-step1 lists the valid names");
  };
  for (const std::string& name : overrides.float16_tensors) ORKNN_RETURN_IF_ERROR(check(name));
  for (const auto& [name, range] : overrides.ranges) ORKNN_RETURN_IF_ERROR(check(name));
  return ok_status();
}

Status write_quantization_config_file(const std::string& path, const ir::Graph& quantized,
                                      const std::vector<std::string>& activations,
                                      const CalibrationResult& calibration,
                                      const std::map<std::string, TensorRange>& ranges,
                                      const std::set<std::string>& float16_tensors) {
  YAML::Emitter out;
  out << YAML::Comment(
      "rknn-convert quantization config. To keep a layer in float16, add its output tensor\n"
      "to custom_quantize_layers with the value float16. To change a tensor's range, edit\n"
      "its min/max. Then convert with --quantization-config this_file.");
  out << YAML::BeginMap;
  out << YAML::Key << "custom_quantize_layers" << YAML::Value;
  if (float16_tensors.empty()) out << YAML::Flow;  // "{}" on the key's line
  out << YAML::BeginMap;
  for (const std::string& name : float16_tensors)
    out << YAML::Key << name << YAML::Value << "float16";
  out << YAML::EndMap;
  out << YAML::Key << "quantize_parameters" << YAML::Value << YAML::BeginMap;
  auto list = [&](double value) { out << YAML::Flow << YAML::BeginSeq << value << YAML::EndSeq; };
  for (const std::string& name : activations) {
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    const bool exists = quantized.has_tensor(name);
    const bool int8 = exists && quantized.tensor(name).type == DataType::kInt8 &&
                      quantized.tensor(name).is_quantized();
    out << YAML::Key << "dtype" << YAML::Value << (int8 ? "int8" : "float16");
    out << YAML::Key << "qmethod" << YAML::Value << "layer";
    auto range = ranges.find(name);
    if (range != ranges.end()) {
      out << YAML::Key << "min" << YAML::Value;
      list(range->second.min);
      out << YAML::Key << "max" << YAML::Value;
      list(range->second.max);
    }
    if (int8) {
      const model::Quantization& quantization = quantized.tensor(name).quantization;
      out << YAML::Key << "scale" << YAML::Value;
      list(quantization.scales[0]);
      out << YAML::Key << "zero_point" << YAML::Value;
      list(quantization.zero_points[0]);
    }
    auto observed = calibration.observed.find(name);
    if (observed != calibration.observed.end()) {
      out << YAML::Key << "ori_min" << YAML::Value;
      list(observed->second.min);
      out << YAML::Key << "ori_max" << YAML::Value;
      list(observed->second.max);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
  if (!out.good())
    return internal_failure("cannot format the quantization config: ", out.GetLastError());

  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary);
    if (!file) return invalid_argument("cannot write '", path, "'");
    file << out.c_str() << "\n";
    if (!file) return invalid_argument("cannot write '", path, "'");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return invalid_argument("cannot write '", path, "'");
  }
  return ok_status();
}

}  // namespace orknn::convert
