#include "server_client.h"

#include <chrono>
#include <fstream>
#include <iterator>

#include "crc32.h"

namespace orknn::client {

ServerConnection::ServerConnection(const ConnectOptions& options) : options_(options) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options.tls_ca.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_ca;
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(-1);
  arguments.SetMaxSendMessageSize(-1);
  channel_ = grpc::CreateCustomChannel(options.address, credentials, arguments);
  stub_ = std::shared_ptr<v1::RknnServer::Stub>(v1::RknnServer::NewStub(channel_));
}

std::unique_ptr<grpc::ClientContext> ServerConnection::call_context(bool with_deadline) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (!options_.token.empty()) context->AddMetadata("authorization", "Bearer " + options_.token);
  if (with_deadline && options_.timeout_seconds > 0) {
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(options_.timeout_seconds));
  }
  return context;
}

bool ServerConnection::wait_connected(int seconds) {
  return channel_->WaitForConnected(std::chrono::system_clock::now() +
                                    std::chrono::seconds(seconds));
}

grpc::Status RemoteSession::open(ServerConnection& connection, const std::string& client_name,
                                 std::unique_ptr<RemoteSession>* out) {
  std::unique_ptr<RemoteSession> session(new RemoteSession(connection));
  // The session stream has no deadline: it lives as long as the session.
  session->stream_context_ = connection.call_context(/*with_deadline=*/false);
  v1::OpenSessionRequest request;
  request.set_protocol_version(v1::PROTOCOL_VERSION_V1);
  request.set_client_name(client_name);
  session->stream_ = connection.stub().OpenSession(session->stream_context_.get(), request);
  v1::SessionEvent event;
  if (!session->stream_->Read(&event)) {
    session->closed_ = true;
    return session->stream_->Finish();
  }
  session->id_ = event.session_id();
  *out = std::move(session);
  return grpc::Status::OK;
}

RemoteSession::~RemoteSession() {
  if (!closed_) close();
}

grpc::Status RemoteSession::close() {
  if (closed_) return grpc::Status::OK;
  closed_ = true;
  v1::CloseSessionRequest request;
  request.set_session_id(id_);
  v1::CloseSessionResponse response;
  const grpc::Status closed =
      connection_.stub().CloseSession(connection_.call_context().get(), request, &response);
  if (!closed.ok()) stream_context_->TryCancel();
  v1::SessionEvent event;
  while (stream_->Read(&event)) {
  }
  const grpc::Status finished = stream_->Finish();
  return closed.ok() ? finished : closed;
}

grpc::Status RemoteSession::abandon() {
  if (closed_) return grpc::Status::OK;
  closed_ = true;
  stream_context_->TryCancel();
  v1::SessionEvent event;
  while (stream_->Read(&event)) {
  }
  return stream_->Finish();
}

grpc::Status RemoteSession::wait_closed_by_server() {
  if (closed_) return grpc::Status::OK;
  closed_ = true;
  v1::SessionEvent event;
  while (stream_->Read(&event)) {
  }
  return stream_->Finish();
}

grpc::Status RemoteSession::upload_model(const std::vector<uint8_t>& bytes, const std::string& name,
                                         uint64_t* out_model_id, size_t chunk_bytes) {
  std::unique_ptr<grpc::ClientContext> context = connection_.call_context();
  v1::UploadModelResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::UploadModelChunk>> writer =
      connection_.stub().UploadModel(context.get(), &response);
  size_t offset = 0;
  do {
    v1::UploadModelChunk chunk;
    if (offset == 0) {
      v1::UploadModelChunk::Header* header = chunk.mutable_header();
      header->set_protocol_version(v1::PROTOCOL_VERSION_V1);
      header->set_session_id(id_);
      header->set_total_size(bytes.size());
      header->set_crc32(model_crc32(bytes));
      header->set_name(name);
    }
    const size_t take = std::min(chunk_bytes, bytes.size() - offset);
    chunk.set_data(bytes.data() + offset, take);
    offset += take;
    if (!writer->Write(chunk)) break;  // the server answered early; Finish has its status
  } while (offset < bytes.size());
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  if (status.ok()) *out_model_id = response.model_id();
  return status;
}

grpc::Status RemoteSession::init_context(uint64_t model_id, const v1::InitContextRequest& options,
                                         uint64_t* out_context_id) {
  v1::InitContextRequest request = options;
  request.set_protocol_version(v1::PROTOCOL_VERSION_V1);
  request.set_session_id(id_);
  request.set_model_id(model_id);
  v1::InitContextResponse response;
  const grpc::Status status =
      connection_.stub().InitContext(connection_.call_context().get(), request, &response);
  if (status.ok()) *out_context_id = response.context_id();
  return status;
}

uint32_t model_crc32(const std::vector<uint8_t>& bytes) {
  return orknn::server::crc32_update(0, bytes.data(), bytes.size());
}

std::string status_text(const grpc::Status& status) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  const int code = static_cast<int>(status.error_code());
  const std::string name = code >= 0 && code <= 16 ? kNames[code] : std::to_string(code);
  return status.ok() ? name : name + ": " + status.error_message();
}

bool read_binary_file(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  out->assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace orknn::client
