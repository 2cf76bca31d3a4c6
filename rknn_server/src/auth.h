// The call-metadata token check ("authorization: Bearer <token>"), applied by every handler
// when the server has a token.
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

namespace orknn::server {

// OK when `token` is empty or the call carries it; UNAUTHENTICATED otherwise.
grpc::Status check_token(const grpc::ServerContextBase& context, const std::string& token);

// Comparison whose time does not depend on where the strings differ.
bool constant_time_equal(const std::string& a, const std::string& b);

}  // namespace orknn::server
