// The daemon's settings: defaults, then the config file (--config), then command-line flags.
// The file has one "key = value" per line ('#' starts a comment); each key is also a flag
// (--key=value or --key value). docs/server-protocol.md lists them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orknn::server {

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";  // host:port; empty with unix_socket set: none
  std::string unix_socket;                 // path of a Unix socket to listen on as well
  bool allow_remote = false;               // required to bind a non-loopback address
  std::string token;                       // required in "authorization: Bearer <token>"
  std::string token_file;                  // the token, read from a file (first line)
  std::string tls_cert;                    // PEM certificate chain and key for TLS
  std::string tls_key;
  std::string port_file;  // written with the bound TCP port once serving

  uint64_t max_model_bytes = 512ull << 20;
  uint32_t max_message_bytes = 64u << 20;
  uint32_t max_sessions = 64;
  uint32_t max_models_per_session = 8;
  uint32_t max_contexts_per_session = 16;
  uint32_t max_contexts = 64;       // over all sessions
  uint32_t max_perf_loops = 10000;  // EvalPerf loops per call
  uint32_t idle_timeout_seconds = 300;
  uint32_t drain_timeout_seconds = 10;  // SIGTERM: running calls get this long to finish
  std::string sysfs_root = "/";         // where /sys, /proc and /dev are (tests use a fake tree)
};

// Applies the flags in argv (argv[0] is skipped) over `config`, reading --config files as they
// come. Returns false with `error` naming the bad flag, key or value.
bool parse_server_arguments(int argc, const char* const* argv, ServerConfig* config,
                            std::string* error);

// Applies one "key = value" file.
bool load_config_file(const std::string& path, ServerConfig* config, std::string* error);

// The security rule: loopback and Unix sockets are open; any other address needs allow_remote
// and then a token or TLS certificates. Also reads token_file. Returns false with `error`.
bool validate_server_config(ServerConfig* config, std::string* error);

// True for 127.0.0.0/8, [::1], localhost and unix: addresses.
bool is_loopback_address(const std::string& host_port);

std::string server_usage();

}  // namespace orknn::server
