// Shared helpers of the rknn_server tests: sample models, a running daemon with a connection,
// and status checks. Include after every standard header (cmocka's fail() macro collides with
// std::basic_ios::fail()).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "daemon_process.h"
#include "sample_models.h"
#include "server_client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace orknn::server_testing {

namespace v1 = openrknn::server::v1;
using orknn::sample_models::Precision;
using orknn::sample_models::SampleNetwork;

// Sample models are built once per process (the int8 ones need a calibration run).
inline const std::vector<uint8_t>& sample_model(SampleNetwork network, Precision precision) {
  static std::map<std::pair<int, int>, std::vector<uint8_t>> cache;
  const auto key = std::make_pair(static_cast<int>(network), static_cast<int>(precision));
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  orknn::Result<std::vector<uint8_t>> bytes =
      orknn::sample_models::build_sample_model(network, precision);
  if (!bytes.ok()) fail_msg("building a sample model: %s", bytes.status().message().c_str());
  return cache.emplace(key, std::move(bytes).value()).first->second;
}

// A daemon and one connection to it.
struct Fixture {
  DaemonProcess daemon;
  std::unique_ptr<orknn::client::ServerConnection> connection;

  explicit Fixture(const std::vector<std::string>& arguments = {},
                   const std::string& token = std::string()) {
    if (!daemon.start(arguments)) {
      fail_msg("rknn_server did not start: %s", daemon.log_text().c_str());
    }
    orknn::client::ConnectOptions options;
    options.address = daemon.address();
    options.token = token;
    options.timeout_seconds = 120;
    connection = std::make_unique<orknn::client::ServerConnection>(options);
    if (!connection->wait_connected(30)) fail_msg("cannot connect to %s", options.address.c_str());
  }
  // Stops the daemon and checks that it exited cleanly (exit 0: no crash, no leak report).
  void stop_and_check() {
    connection.reset();
    const int status = daemon.stop();
    if (status != 0) {
      fail_msg("rknn_server exited with status 0x%x; its log:\n%s", status,
               daemon.log_text().c_str());
    }
  }
};

inline std::unique_ptr<orknn::client::RemoteSession> open_session(
    orknn::client::ServerConnection& connection, const std::string& name = "test") {
  std::unique_ptr<orknn::client::RemoteSession> session;
  const grpc::Status status = orknn::client::RemoteSession::open(connection, name, &session);
  if (!status.ok()) fail_msg("OpenSession: %s", orknn::client::status_text(status).c_str());
  return session;
}

#define EXPECT_GRPC_OK(expression)                                                           \
  do {                                                                                       \
    const grpc::Status expect_ok_status = (expression);                                      \
    if (!expect_ok_status.ok()) {                                                            \
      fail_msg("%s: %s", #expression, orknn::client::status_text(expect_ok_status).c_str()); \
    }                                                                                        \
  } while (0)

// Checks the code and that the message mentions `fragment`.
#define EXPECT_GRPC_CODE(expression, code, fragment)                                           \
  do {                                                                                         \
    const grpc::Status expect_code_status = (expression);                                      \
    if (expect_code_status.error_code() != (code) ||                                           \
        expect_code_status.error_message().find(fragment) == std::string::npos) {              \
      fail_msg("%s: got %s, wanted code %d mentioning '%s'", #expression,                      \
               orknn::client::status_text(expect_code_status).c_str(), static_cast<int>(code), \
               fragment);                                                                      \
    }                                                                                          \
  } while (0)

// Uploads and inits; fails the test on error.
inline uint64_t upload_and_init(orknn::client::RemoteSession& session,
                                const std::vector<uint8_t>& model,
                                const v1::InitContextRequest& options = {}) {
  uint64_t model_id = 0, context_id = 0;
  EXPECT_GRPC_OK(session.upload_model(model, "model.rknn", &model_id, 4096));
  EXPECT_GRPC_OK(session.init_context(model_id, options, &context_id));
  return context_id;
}

// One client of its own: a connection, a session and a context over `model`.
struct ClientContext {
  std::unique_ptr<orknn::client::ServerConnection> connection;
  std::unique_ptr<orknn::client::RemoteSession> session;
  uint64_t context_id = 0;
};

inline grpc::Status open_client_context(const std::string& address,
                                        const std::vector<uint8_t>& model, ClientContext* out) {
  orknn::client::ConnectOptions options;
  options.address = address;
  options.timeout_seconds = 120;
  out->connection = std::make_unique<orknn::client::ServerConnection>(options);
  uint64_t model_id = 0;
  grpc::Status status =
      orknn::client::RemoteSession::open(*out->connection, "client", &out->session);
  if (status.ok()) status = out->session->upload_model(model, "model.rknn", &model_id);
  if (status.ok()) status = out->session->init_context(model_id, {}, &out->context_id);
  return status;
}

// A Run of the tiny sample model (input 1x32x32x3 uint8 NHWC) with every pixel `value`.
inline v1::RunRequest tiny_run_request(uint64_t session_id, uint64_t context_id,
                                       char value = '\x40') {
  v1::RunRequest request;
  request.set_session_id(session_id);
  request.set_context_id(context_id);
  request.set_want_float(true);
  v1::Tensor* input = request.add_inputs();
  input->set_dtype(v1::DATA_TYPE_UINT8);
  input->set_layout(v1::LAYOUT_NHWC);
  for (uint32_t d : {1, 32, 32, 3}) input->add_shape(d);
  input->set_data(std::string(32 * 32 * 3, value));
  return request;
}

}  // namespace orknn::server_testing
