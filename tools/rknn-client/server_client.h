// The host side of the rknn_server protocol: a channel with the token attached to every call,
// a session held open by its OpenSession stream, and the chunked, checksummed model upload.
// Shared by rknn-client, the server tests and (through the same proto) any other client.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "openrknn/server/v1/rknn_server.grpc.pb.h"

namespace orknn::client {

namespace v1 = openrknn::server::v1;

struct ConnectOptions {
  std::string address;      // "host:port" or "unix:/path"
  std::string token;        // sent as "authorization: Bearer <token>" when not empty
  std::string tls_ca;       // PEM root certificates: use TLS when set
  int timeout_seconds = 0;  // per-call deadline; 0: none
};

// Cheap to copy: copies share the channel.
class ServerConnection {
 public:
  explicit ServerConnection(const ConnectOptions& options);

  v1::RknnServer::Stub& stub() { return *stub_; }
  // A fresh context for one call: token metadata and (unless told not to) the deadline.
  std::unique_ptr<grpc::ClientContext> call_context(bool with_deadline = true) const;
  // Waits up to `seconds` for the channel to connect.
  bool wait_connected(int seconds);

 private:
  ConnectOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<v1::RknnServer::Stub> stub_;
};

// An open session; closing it (or destroying the object) ends the stream, which frees
// everything the session owns on the server.
class RemoteSession {
 public:
  static grpc::Status open(ServerConnection& connection, const std::string& client_name,
                           std::unique_ptr<RemoteSession>* out);
  ~RemoteSession();
  RemoteSession(const RemoteSession&) = delete;
  RemoteSession& operator=(const RemoteSession&) = delete;

  uint64_t id() const { return id_; }
  // CloseSession, then the stream's final status.
  grpc::Status close();
  // Cancels the stream without CloseSession, as a client that goes away does; returns the
  // stream's final status.
  grpc::Status abandon();
  // Waits for the server to end the stream (idle timeout, shutdown) and returns its status.
  grpc::Status wait_closed_by_server();

  grpc::Status upload_model(const std::vector<uint8_t>& bytes, const std::string& name,
                            uint64_t* out_model_id, size_t chunk_bytes = 1 << 20);
  grpc::Status init_context(uint64_t model_id, const v1::InitContextRequest& options,
                            uint64_t* out_context_id);

 private:
  explicit RemoteSession(const ServerConnection& connection) : connection_(connection) {}
  ServerConnection connection_;  // a copy: the session may outlive the caller's connection
  std::unique_ptr<grpc::ClientContext> stream_context_;
  std::unique_ptr<grpc::ClientReader<v1::SessionEvent>> stream_;
  uint64_t id_ = 0;
  bool closed_ = false;
};

uint32_t model_crc32(const std::vector<uint8_t>& bytes);

// "NOT_FOUND: session 3 is not open".
std::string status_text(const grpc::Status& status);

bool read_binary_file(const std::string& path, std::vector<uint8_t>* out);

}  // namespace orknn::client
