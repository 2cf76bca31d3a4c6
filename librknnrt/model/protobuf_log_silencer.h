// Before version 22, protobuf writes its own line to stderr when a string field is not UTF-8
// (while parsing or serializing). The model code reports such failures itself, in the runtime's
// log format and with context, so it silences protobuf's line for the duration of the call.
// Protobuf's silencer is process-wide: other threads' protobuf messages are dropped meanwhile,
// which is acceptable for the short parse or serialize of a model.
#pragma once

#include <google/protobuf/stubs/common.h>  // GOOGLE_PROTOBUF_VERSION

#if GOOGLE_PROTOBUF_VERSION < 4022000
#include <google/protobuf/stubs/logging.h>
#endif

namespace orknn::model {

#if GOOGLE_PROTOBUF_VERSION < 4022000
using ProtobufLogSilencer = google::protobuf::LogSilencer;
#else
// Newer versions report through Abseil logging instead; nothing to silence.
struct ProtobufLogSilencer {
  ProtobufLogSilencer() {}
};
#endif

}  // namespace orknn::model
