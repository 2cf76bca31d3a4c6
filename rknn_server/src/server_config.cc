#include "server_config.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>

namespace orknn::server {
namespace {

using Setter = std::function<bool(ServerConfig&, const std::string&, std::string*)>;

bool parse_unsigned(const std::string& text, uint64_t max, uint64_t* out) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value > max) return false;
  *out = value;
  return true;
}

template <typename Field>
Setter number_setter(Field ServerConfig::*field, uint64_t min, uint64_t max) {
  return [field, min, max](ServerConfig& config, const std::string& value, std::string* error) {
    uint64_t parsed = 0;
    if (!parse_unsigned(value, max, &parsed) || parsed < min) {
      *error = "'" + value + "' is not a whole number in [" + std::to_string(min) + ", " +
               std::to_string(max) + "]";
      return false;
    }
    config.*field = static_cast<Field>(parsed);
    return true;
  };
}

Setter string_setter(std::string ServerConfig::*field) {
  return [field](ServerConfig& config, const std::string& value, std::string*) {
    config.*field = value;
    return true;
  };
}

Setter bool_setter(bool ServerConfig::*field) {
  return [field](ServerConfig& config, const std::string& value, std::string* error) {
    if (value == "1" || value == "true" || value == "yes" || value == "on") {
      config.*field = true;
    } else if (value == "0" || value == "false" || value == "no" || value == "off") {
      config.*field = false;
    } else {
      *error = "'" + value + "' is not a boolean (true/false)";
      return false;
    }
    return true;
  };
}

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table = {
      {"listen", string_setter(&ServerConfig::listen)},
      {"unix_socket", string_setter(&ServerConfig::unix_socket)},
      {"allow_remote", bool_setter(&ServerConfig::allow_remote)},
      {"token", string_setter(&ServerConfig::token)},
      {"token_file", string_setter(&ServerConfig::token_file)},
      {"tls_cert", string_setter(&ServerConfig::tls_cert)},
      {"tls_key", string_setter(&ServerConfig::tls_key)},
      {"port_file", string_setter(&ServerConfig::port_file)},
      {"sysfs_root", string_setter(&ServerConfig::sysfs_root)},
      {"max_model_bytes", number_setter(&ServerConfig::max_model_bytes, 1, 1ull << 40)},
      {"max_message_bytes", number_setter(&ServerConfig::max_message_bytes, 1024, 1u << 30)},
      {"max_sessions", number_setter(&ServerConfig::max_sessions, 1, 100000)},
      {"max_models_per_session", number_setter(&ServerConfig::max_models_per_session, 1, 1024)},
      {"max_contexts_per_session", number_setter(&ServerConfig::max_contexts_per_session, 1, 1024)},
      {"max_contexts", number_setter(&ServerConfig::max_contexts, 1, 100000)},
      {"max_perf_loops", number_setter(&ServerConfig::max_perf_loops, 1, 1000000)},
      {"idle_timeout_seconds", number_setter(&ServerConfig::idle_timeout_seconds, 1, 86400 * 7)},
      {"drain_timeout_seconds", number_setter(&ServerConfig::drain_timeout_seconds, 0, 3600)},
  };
  return table;
}

bool apply(ServerConfig* config, const std::string& key, const std::string& value,
           std::string* error) {
  if (key == "config") return load_config_file(value, config, error);
  const auto found = setters().find(key);
  if (found == setters().end()) {
    *error = "unknown setting '" + key + "'";
    return false;
  }
  std::string why;
  if (!found->second(*config, value, &why)) {
    *error = key + ": " + why;
    return false;
  }
  return true;
}

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return std::string();
  const size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

bool load_config_file(const std::string& path, ServerConfig* config, std::string* error) {
  std::ifstream file(path);
  if (!file) {
    *error = "cannot read config file '" + path + "'";
    return false;
  }
  std::string line;
  int number = 0;
  while (std::getline(file, line)) {
    ++number;
    const size_t comment = line.find('#');
    if (comment != std::string::npos) line.resize(comment);
    line = trim(line);
    if (line.empty()) continue;
    const size_t equals = line.find('=');
    if (equals == std::string::npos) {
      *error = path + ":" + std::to_string(number) + ": expected 'key = value'";
      return false;
    }
    std::string why;
    if (!apply(config, trim(line.substr(0, equals)), trim(line.substr(equals + 1)), &why)) {
      *error = path + ":" + std::to_string(number) + ": " + why;
      return false;
    }
  }
  return true;
}

bool parse_server_arguments(int argc, const char* const* argv, ServerConfig* config,
                            std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (argument.rfind("--", 0) != 0) {
      *error = "unexpected argument '" + argument + "' (flags look like --key=value)";
      return false;
    }
    argument = argument.substr(2);
    std::string key = argument, value;
    const size_t equals = argument.find('=');
    if (equals != std::string::npos) {
      key = argument.substr(0, equals);
      value = argument.substr(equals + 1);
    } else if (key == "allow_remote" || key == "allow-remote") {
      value = "true";
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      *error = "--" + key + " needs a value";
      return false;
    }
    for (char& c : key) {
      if (c == '-') c = '_';
    }
    if (!apply(config, key, value, error)) return false;
  }
  return true;
}

bool is_loopback_address(const std::string& host_port) {
  if (host_port.rfind("unix:", 0) == 0 || host_port.rfind("unix-abstract:", 0) == 0) return true;
  std::string host = host_port;
  if (!host.empty() && host[0] == '[') {
    host = host.substr(1, host.find(']') == std::string::npos ? 0 : host.find(']') - 1);
  } else {
    const size_t colon = host.rfind(':');
    if (colon != std::string::npos) host.resize(colon);
  }
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool validate_server_config(ServerConfig* config, std::string* error) {
  if (!config->token_file.empty()) {
    std::ifstream file(config->token_file);
    std::string token;
    if (!file || !std::getline(file, token) || trim(token).empty()) {
      *error = "token_file '" + config->token_file + "' is unreadable or empty";
      return false;
    }
    config->token = trim(token);
  }
  if (config->tls_cert.empty() != config->tls_key.empty()) {
    *error = "tls_cert and tls_key go together (got only one)";
    return false;
  }
  if (config->listen.empty() && config->unix_socket.empty()) {
    *error = "nothing to listen on: set listen or unix_socket";
    return false;
  }
  if (!config->listen.empty() && !is_loopback_address(config->listen)) {
    if (!config->allow_remote) {
      *error = "listen address '" + config->listen +
               "' is not loopback; pass --allow-remote (and a token or TLS) to expose the NPU "
               "to the network";
      return false;
    }
    if (config->token.empty() && config->tls_cert.empty()) {
      *error = "listen address '" + config->listen +
               "' is not loopback: a token (--token/--token-file) or TLS (--tls-cert, "
               "--tls-key) is required";
      return false;
    }
  }
  return true;
}

std::string server_usage() {
  std::string text =
      "usage: rknn_server [--config FILE] [--key=value ...]\n"
      "Serves the NPU runtime over gRPC (openrknn.server.v1). Settings (also config keys):\n";
  for (const auto& [key, setter] : setters()) text += "  --" + key + "\n";
  text += "  --config FILE   read 'key = value' lines\n";
  return text;
}

}  // namespace orknn::server
