#include "auth.h"

namespace orknn::server {

bool constant_time_equal(const std::string& a, const std::string& b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    difference |= x ^ y;
  }
  return difference == 0;
}

grpc::Status check_token(const grpc::ServerContextBase& context, const std::string& token) {
  if (token.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  if (found == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "this server needs a token: send 'authorization: Bearer <token>' metadata");
  }
  const std::string value(found->second.data(), found->second.size());
  const std::string prefix = "Bearer ";
  if (value.rfind(prefix, 0) != 0 || !constant_time_equal(value.substr(prefix.size()), token)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the token in 'authorization' is wrong");
  }
  return grpc::Status::OK;
}

}  // namespace orknn::server
