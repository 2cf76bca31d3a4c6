// Security rules: a non-loopback bind without --allow-remote, or with it but without a token or
// TLS, is refused at start; with a token, calls without it (or with a wrong one) are refused
// with UNAUTHENTICATED; the Unix socket listener works; the config file is read.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>

#include <grpcpp/generic/generic_stub.h>

#include "server_test_util.h"

namespace {

using namespace orknn::server_testing;

void expect_refused_at_start(const std::vector<std::string>& arguments, const char* fragment) {
  DaemonProcess daemon;
  assert_false(daemon.start(arguments));
  const int status = daemon.wait_exit(30);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 2) {
    fail_msg("expected exit 2, got status 0x%x", status);
  }
  if (daemon.log_text().find(fragment) == std::string::npos) {
    fail_msg("the refusal does not mention '%s':\n%s", fragment, daemon.log_text().c_str());
  }
}

void test_remote_bind_needs_flag_and_credentials(void**) {
  expect_refused_at_start({"--listen", "0.0.0.0:0"}, "--allow-remote");
  expect_refused_at_start({"--listen", "0.0.0.0:0", "--allow-remote"}, "token");
  expect_refused_at_start({"--listen", "[::]:0", "--allow-remote"}, "token");
  expect_refused_at_start({"--listen", "0.0.0.0:0", "--allow-remote", "--tls_cert", "x.pem"},
                          "tls_cert and tls_key");
  expect_refused_at_start({"--max_sessions", "0"}, "max_sessions");
  expect_refused_at_start({"--no_such_flag", "1"}, "unknown setting 'no_such_flag'");
  expect_refused_at_start({"--token_file", "/nonexistent/token"}, "token_file");
}

void test_token_is_required(void**) {
  const std::string directory = make_temporary_directory("security");
  const std::string token_file = directory + "/token";
  std::ofstream(token_file) << "s3cret-token\n";
  // Bound to every interface (allowed with a token); the test talks to it over loopback only.
  Fixture fixture({"--listen", "0.0.0.0:0", "--allow-remote", "--token_file", token_file},
                  "s3cret-token");
  v1::DeviceInfo info;
  EXPECT_GRPC_OK(fixture.connection->stub().GetDeviceInfo(fixture.connection->call_context().get(),
                                                          v1::GetDeviceInfoRequest(), &info));
  auto session = open_session(*fixture.connection);
  EXPECT_GRPC_OK(session->close());

  orknn::client::ConnectOptions options;
  options.address = fixture.daemon.address();
  orknn::client::ServerConnection no_token(options);
  EXPECT_GRPC_CODE(no_token.stub().GetDeviceInfo(no_token.call_context().get(),
                                                 v1::GetDeviceInfoRequest(), &info),
                   grpc::StatusCode::UNAUTHENTICATED, "token");
  std::unique_ptr<orknn::client::RemoteSession> refused;
  EXPECT_GRPC_CODE(orknn::client::RemoteSession::open(no_token, "intruder", &refused),
                   grpc::StatusCode::UNAUTHENTICATED, "token");
  options.token = "s3cret-tokeN";
  orknn::client::ServerConnection wrong_token(options);
  EXPECT_GRPC_CODE(wrong_token.stub().GetDeviceInfo(wrong_token.call_context().get(),
                                                    v1::GetDeviceInfoRequest(), &info),
                   grpc::StatusCode::UNAUTHENTICATED, "wrong");
  fixture.stop_and_check();
  unlink(token_file.c_str());
  rmdir(directory.c_str());
}

void test_unix_socket_and_config_file(void**) {
  const std::string directory = make_temporary_directory("unix");
  const std::string socket = directory + "/rknn.sock";
  const std::string config = directory + "/server.conf";
  std::ofstream(config) << "# rknn_server test config\nunix_socket = " << socket
                        << "\nmax_sessions = 1   # one at a time\n";
  DaemonProcess daemon;
  assert_true(daemon.start({"--config", config}));
  orknn::client::ConnectOptions options;
  options.address = "unix:" + socket;
  options.timeout_seconds = 60;
  orknn::client::ServerConnection connection(options);
  assert_true(connection.wait_connected(30));
  auto session = open_session(connection);
  std::unique_ptr<orknn::client::RemoteSession> second;
  EXPECT_GRPC_CODE(orknn::client::RemoteSession::open(connection, "second", &second),
                   grpc::StatusCode::RESOURCE_EXHAUSTED, "max_sessions 1");
  EXPECT_GRPC_OK(session->close());
  assert_int_equal(daemon.stop(), 0);
  unlink(config.c_str());
  unlink(socket.c_str());
  rmdir(directory.c_str());
}

std::string read_whole_file(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// TLS instead of a token: a self-signed certificate for localhost made with openssl at test
// time; a client that trusts it gets through, a plaintext client does not.
void test_tls(void**) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) skip();
  const std::string directory = make_temporary_directory("tls");
  const std::string cert = directory + "/cert.pem", key = directory + "/key.pem";
  const std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
      "-addext subjectAltName=DNS:localhost -keyout '" +
      key + "' -out '" + cert + "' >/dev/null 2>&1";
  assert_int_equal(std::system(command.c_str()), 0);
  DaemonProcess daemon;
  if (!daemon.start(
          {"--listen", "0.0.0.0:0", "--allow-remote", "--tls_cert", cert, "--tls_key", key})) {
    fail_msg("TLS daemon did not start: %s", daemon.log_text().c_str());
  }
  orknn::client::ConnectOptions options;
  options.address = "localhost:" + std::to_string(daemon.port());
  options.tls_ca = read_whole_file(cert);
  options.timeout_seconds = 30;
  orknn::client::ServerConnection secure(options);
  v1::DeviceInfo info;
  EXPECT_GRPC_OK(
      secure.stub().GetDeviceInfo(secure.call_context().get(), v1::GetDeviceInfoRequest(), &info));
  options.tls_ca.clear();
  options.timeout_seconds = 2;
  orknn::client::ServerConnection plaintext(options);
  const grpc::Status refused = plaintext.stub().GetDeviceInfo(plaintext.call_context().get(),
                                                              v1::GetDeviceInfoRequest(), &info);
  assert_false(refused.ok());
  assert_int_equal(daemon.stop(), 0);
  std::system(("rm -rf '" + directory + "'").c_str());
}

// grpc.health.v1.Health/Check answers SERVING (HealthCheckResponse{status: 1} is 08 01) and
// needs no token.
void test_health_check(void**) {
  Fixture fixture({"--token", "t0ken"}, "t0ken");
  auto channel = grpc::CreateChannel(fixture.daemon.address(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  grpc::Slice nothing(std::string{});  // HealthCheckRequest{service: ""} encodes to no bytes
  const grpc::ByteBuffer request(&nothing, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  EXPECT_GRPC_OK(done.get_future().get());
  std::vector<grpc::Slice> slices;
  assert_true(response.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  assert_true(bytes == std::string("\x08\x01", 2));
  fixture.stop_and_check();
}

}  // namespace

int main() {
  // "localhost" (the TLS test) would go through c-ares, whose resolver leaks a few bytes that
  // LeakSanitizer reports; the system resolver does not.
  setenv("GRPC_DNS_RESOLVER", "native", 1);
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_remote_bind_needs_flag_and_credentials),
      cmocka_unit_test(test_token_is_required),
      cmocka_unit_test(test_unix_socket_and_config_file),
      cmocka_unit_test(test_health_check),
      cmocka_unit_test(test_tls),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
