// rknn_server: serves the NPU runtime to host tools over gRPC (openrknn.server.v1).
// Settings: docs/server-protocol.md. SIGTERM/SIGINT: refuse new sessions, close the open ones,
// let running calls finish (up to drain_timeout_seconds), exit 0.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "logging.h"
#include "server_config.h"
#include "service.h"
#include "version.h"

namespace {

using orknn::server::log;
using orknn::server::LogLevel;

bool read_text_file(const std::string& path, std::string* out) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  out->assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  return true;
}

std::shared_ptr<grpc::ServerCredentials> make_credentials(const orknn::server::ServerConfig& config,
                                                          std::string* error) {
  if (config.tls_cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  if (!read_text_file(config.tls_key, &pair.private_key) ||
      !read_text_file(config.tls_cert, &pair.cert_chain)) {
    *error = "cannot read tls_cert '" + config.tls_cert + "' or tls_key '" + config.tls_key + "'";
    return nullptr;
  }
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(pair);
  return grpc::SslServerCredentials(options);
}

int run_server(orknn::server::ServerConfig config) {
  // Block the stop signals in every thread; the main thread waits for them with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::string error;
  std::shared_ptr<grpc::ServerCredentials> credentials = make_credentials(config, &error);
  if (!credentials) {
    log(LogLevel::kError, error);
    return 2;
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  orknn::server::RknnService service(config);
  grpc::ServerBuilder builder;
  int tcp_port = 0;
  if (!config.listen.empty()) builder.AddListeningPort(config.listen, credentials, &tcp_port);
  if (!config.unix_socket.empty()) {
    builder.AddListeningPort("unix:" + config.unix_socket, credentials);
  }
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config.max_message_bytes));
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || (!config.listen.empty() && tcp_port == 0)) {
    log(LogLevel::kError, "cannot listen on '", config.listen, "'",
        config.unix_socket.empty() ? "" : " / unix:" + config.unix_socket,
        " (address in use or not allowed)");
    return 2;
  }
  server->GetHealthCheckService()->SetServingStatus(true);
  log(LogLevel::kInfo, "start rknn server, version: ", orknn::server::server_version());
  log(LogLevel::kInfo, "listening on ", config.listen.empty() ? "-" : config.listen,
      tcp_port ? " (port " + std::to_string(tcp_port) + ")" : "",
      config.unix_socket.empty() ? "" : ", unix:" + config.unix_socket,
      config.token.empty() ? "" : ", token required", config.tls_cert.empty() ? "" : ", TLS");
  if (!config.port_file.empty()) {
    // Written to a temporary name first so a reader never sees half a number.
    const std::string temporary = config.port_file + ".tmp";
    std::ofstream(temporary) << tcp_port << "\n";
    std::rename(temporary.c_str(), config.port_file.c_str());
  }

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  log(LogLevel::kInfo, "signal ", signal_number, ": draining running calls (up to ",
      config.drain_timeout_seconds, " s) and exiting");
  server->GetHealthCheckService()->SetServingStatus(false);
  service.registry().close_all(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down"));
  server->Shutdown(std::chrono::system_clock::now() +
                   std::chrono::seconds(config.drain_timeout_seconds));
  server->Wait();
  log(LogLevel::kInfo, "stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  orknn::server::ServerConfig config;
  std::string error;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--help" || argument == "-h") {
      std::fputs(orknn::server::server_usage().c_str(), stdout);
      return 0;
    }
    if (argument == "--version") {
      std::printf("rknn_server version: %s\n", orknn::server::server_version().c_str());
      return 0;
    }
  }
  if (!orknn::server::parse_server_arguments(argc, argv, &config, &error) ||
      !orknn::server::validate_server_config(&config, &error)) {
    log(LogLevel::kError, error);
    return 2;
  }
  return run_server(config);
}
