// rknn_server's gRPC server reflection, as grpcurl or Postman use it: the service list names the
// daemon's own service, the health service and reflection itself; the descriptor of the
// daemon's service can be fetched by symbol; an unknown symbol is answered with NOT_FOUND.
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"

#include "server_test_util.h"

namespace {

using namespace orknn::server_testing;
namespace reflection = grpc::reflection::v1alpha;

constexpr char kDaemonService[] = "openrknn.server.v1.RknnServer";

// Sends the requests on one reflection stream and returns the answers in order.
std::vector<reflection::ServerReflectionResponse> ask(
    const std::string& address, const std::vector<reflection::ServerReflectionRequest>& requests) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = reflection::ServerReflection::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto stream = stub->ServerReflectionInfo(&context);
  std::vector<reflection::ServerReflectionResponse> responses;
  for (const auto& request : requests) {
    assert_true(stream->Write(request));
    reflection::ServerReflectionResponse response;
    assert_true(stream->Read(&response));
    responses.push_back(response);
  }
  stream->WritesDone();
  const grpc::Status status = stream->Finish();
  if (!status.ok()) fail_msg("reflection stream: %s", status.error_message().c_str());
  return responses;
}

void test_reflection_lists_services_and_describes_them(void** state) {
  (void)state;
  Fixture fixture;
  reflection::ServerReflectionRequest list;
  list.set_list_services("*");
  reflection::ServerReflectionRequest describe;
  describe.set_file_containing_symbol(kDaemonService);
  reflection::ServerReflectionRequest unknown;
  unknown.set_file_containing_symbol("openrknn.server.v1.NoSuchService");
  const auto responses = ask(fixture.daemon.address(), {list, describe, unknown});

  assert_true(responses[0].has_list_services_response());
  std::vector<std::string> names;
  for (const auto& service : responses[0].list_services_response().service()) {
    names.push_back(service.name());
    std::printf("listed: %s\n", service.name().c_str());
  }
  for (const char* expected :
       {kDaemonService, "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"}) {
    if (std::find(names.begin(), names.end(), expected) == names.end()) {
      fail_msg("reflection does not list %s", expected);
    }
  }

  assert_true(responses[1].has_file_descriptor_response());
  bool described = false;
  for (const std::string& bytes : responses[1].file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto file;
    assert_true(file.ParseFromString(bytes));
    for (const auto& service : file.service()) {
      if (file.package() + "." + service.name() == kDaemonService) {
        described = service.method_size() > 0;
      }
    }
  }
  assert_true(described);

  assert_true(responses[2].has_error_response());
  assert_int_equal(responses[2].error_response().error_code(), grpc::StatusCode::NOT_FOUND);
  fixture.stop_and_check();
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reflection_lists_services_and_describes_them),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
