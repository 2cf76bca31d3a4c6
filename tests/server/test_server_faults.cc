// rknn_server under bad clients and bad input: clients killed mid-upload and mid-run; corrupt,
// truncated and oversize models; tensors of the wrong dtype, shape or size; unknown ids;
// 1,000 sessions opened and abandoned (descriptors and RSS back to baseline, every session
// slot free again); idle timeout; deadlines; SIGTERM during runs. The daemon must never crash,
// each call gets the right status with a useful message, and the daemon exits cleanly (which
// under ASan also means no leak).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "rknn_api.h"
#include "tensor_inputs.h"

#include "server_test_util.h"

namespace {

using namespace orknn::server_testing;
using orknn::client::RemoteSession;
using orknn::client::ServerConnection;

std::string self_path;

// ---- the misbehaving client, run as a child process of the test (gRPC and fork don't mix,
// so the child execs this program again) ----------------------------------------------------

[[noreturn]] void die_now() {
  raise(SIGKILL);
  _exit(1);
}

int run_killed_client(const std::string& mode, const std::string& address) {
  orknn::client::ConnectOptions options;
  options.address = address;
  ServerConnection connection(options);
  std::unique_ptr<RemoteSession> session;
  if (!RemoteSession::open(connection, "doomed", &session).ok()) return 3;
  if (mode == "upload") {
    // Declares 8 MiB, sends half, dies with the stream open.
    grpc::ClientContext context;
    v1::UploadModelResponse response;
    auto writer = connection.stub().UploadModel(&context, &response);
    v1::UploadModelChunk chunk;
    chunk.mutable_header()->set_session_id(session->id());
    chunk.mutable_header()->set_total_size(8 << 20);
    chunk.set_data(std::string(1 << 20, 'x'));
    for (int i = 0; i < 4; ++i) {
      writer->Write(chunk);
      chunk.clear_header();
    }
    die_now();
  }
  // "run": keeps runs in flight from two threads and dies among them.
  const std::vector<uint8_t>& model = sample_model(SampleNetwork::kTiny, Precision::kFloat32);
  uint64_t model_id = 0, context_id = 0;
  if (!session->upload_model(model, "tiny", &model_id).ok()) return 4;
  if (!session->init_context(model_id, {}, &context_id).ok()) return 5;
  const v1::RunRequest request = tiny_run_request(session->id(), context_id);
  std::atomic<int> runs{0};
  auto loop = [&] {
    for (;;) {
      grpc::ClientContext context;
      v1::RunResponse response;
      connection.stub().Run(&context, request, &response);
      ++runs;
    }
  };
  std::thread a(loop), b(loop);
  while (runs < 20) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  die_now();
}

void run_child_and_wait(const std::string& mode, const std::string& address) {
  const pid_t child = fork();
  if (child == 0) {
    execl(self_path.c_str(), self_path.c_str(), "--killed-client", mode.c_str(), address.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    fail_msg("the %s client did not die as planned (status 0x%x)", mode.c_str(), status);
  }
}

// Opens `count` sessions at once, retrying while the server is still freeing older ones.
void expect_session_slots_free(ServerConnection& connection, int count) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    std::vector<std::unique_ptr<RemoteSession>> sessions;
    grpc::Status status;
    for (int i = 0; i < count && status.ok(); ++i) {
      std::unique_ptr<RemoteSession> session;
      status = RemoteSession::open(connection, "slot", &session);
      if (status.ok()) sessions.push_back(std::move(session));
    }
    if (status.ok()) return;
    if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED ||
        std::chrono::steady_clock::now() > give_up) {
      fail_msg("sessions were not freed: %s", orknn::client::status_text(status).c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// ---- tests ------------------------------------------------------------------------------------

void test_killed_clients(void**) {
  Fixture fixture({"--max_sessions", "2"});
  run_child_and_wait("upload", fixture.daemon.address());
  run_child_and_wait("run", fixture.daemon.address());
  // Both dead clients' sessions are freed: two new ones fit in max_sessions 2.
  expect_session_slots_free(*fixture.connection, 2);
  fixture.stop_and_check();
}

grpc::Status upload_raw(ServerConnection& connection, uint64_t session_id, const std::string& bytes,
                        uint64_t declared_size, uint32_t crc, uint64_t* model_id) {
  auto context = connection.call_context();
  v1::UploadModelResponse response;
  auto writer = connection.stub().UploadModel(context.get(), &response);
  v1::UploadModelChunk chunk;
  chunk.mutable_header()->set_session_id(session_id);
  chunk.mutable_header()->set_total_size(declared_size);
  chunk.mutable_header()->set_crc32(crc);
  chunk.set_data(bytes);
  writer->Write(chunk);
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  *model_id = response.model_id();
  return status;
}

void test_bad_models(void**) {
  Fixture fixture({"--max_model_bytes", "200000"});
  auto session = open_session(*fixture.connection);
  const std::vector<uint8_t>& good = sample_model(SampleNetwork::kTiny, Precision::kFloat32);
  uint64_t model_id = 0, context_id = 0;

  // Oversize: refused from the header, before any byte is kept.
  std::vector<uint8_t> big(300000, 7);
  EXPECT_GRPC_CODE(session->upload_model(big, "big", &model_id),
                   grpc::StatusCode::RESOURCE_EXHAUSTED, "max_model_bytes");
  // Declared larger than sent: truncated upload.
  const std::string half(good.begin(), good.begin() + good.size() / 2);
  EXPECT_GRPC_CODE(upload_raw(*fixture.connection, session->id(), half, good.size(), 0, &model_id),
                   grpc::StatusCode::INVALID_ARGUMENT, "truncated");
  // Checksum mismatch.
  const std::string whole(good.begin(), good.end());
  EXPECT_GRPC_CODE(upload_raw(*fixture.connection, session->id(), whole, whole.size(),
                              orknn::client::model_crc32(good) ^ 1, &model_id),
                   grpc::StatusCode::DATA_LOSS, "checksum");
  // An empty model, and a session id that does not exist.
  EXPECT_GRPC_CODE(upload_raw(*fixture.connection, session->id(), "", 0, 0, &model_id),
                   grpc::StatusCode::INVALID_ARGUMENT, "total_size");
  EXPECT_GRPC_CODE(upload_raw(*fixture.connection, 4242, whole, whole.size(),
                              orknn::client::model_crc32(good), &model_id),
                   grpc::StatusCode::NOT_FOUND, "session 4242");

  // Truncated and corrupt files that arrive intact: rknn_init refuses them.
  std::vector<uint8_t> truncated(good.begin(), good.begin() + good.size() / 2);
  EXPECT_GRPC_OK(session->upload_model(truncated, "truncated", &model_id));
  EXPECT_GRPC_CODE(session->init_context(model_id, {}, &context_id),
                   grpc::StatusCode::INVALID_ARGUMENT, "rknn_init");
  std::vector<uint8_t> corrupt = good;
  for (size_t i = 0; i < corrupt.size(); i += 97) corrupt[i] ^= 0x5A;
  EXPECT_GRPC_OK(session->upload_model(corrupt, "corrupt", &model_id));
  EXPECT_GRPC_CODE(session->init_context(model_id, {}, &context_id),
                   grpc::StatusCode::INVALID_ARGUMENT, "RKNN_ERR_MODEL_INVALID");
  std::vector<uint8_t> garbage(5000, 0xEE);
  EXPECT_GRPC_OK(session->upload_model(garbage, "garbage", &model_id));
  EXPECT_GRPC_CODE(session->init_context(model_id, {}, &context_id),
                   grpc::StatusCode::INVALID_ARGUMENT, "rknn_init");
  // Unknown model id.
  EXPECT_GRPC_CODE(session->init_context(777, {}, &context_id), grpc::StatusCode::NOT_FOUND,
                   "model 777");
  // The good model still works afterwards.
  context_id = upload_and_init(*session, good);
  v1::RunResponse response;
  EXPECT_GRPC_OK(fixture.connection->stub().Run(fixture.connection->call_context().get(),
                                                tiny_run_request(session->id(), context_id),
                                                &response));
  fixture.stop_and_check();
}

void test_bad_tensors_and_ids(void**) {
  Fixture fixture({"--max_contexts_per_session", "2", "--max_models_per_session", "2"});
  auto session = open_session(*fixture.connection);
  const std::vector<uint8_t>& model = sample_model(SampleNetwork::kTiny, Precision::kFloat32);
  const uint64_t context_id = upload_and_init(*session, model);
  auto& stub = fixture.connection->stub();
  auto run = [&](const v1::RunRequest& request) {
    v1::RunResponse response;
    return stub.Run(fixture.connection->call_context().get(), request, &response);
  };
  const v1::RunRequest good = tiny_run_request(session->id(), context_id);
  EXPECT_GRPC_OK(run(good));

  v1::RunRequest request = good;
  request.mutable_inputs(0)->set_dtype(static_cast<v1::DataType>(99));
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "dtype 99");
  request = good;
  request.mutable_inputs(0)->set_layout(static_cast<v1::Layout>(9));
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "layout 9");
  request = good;  // right size, wrong shape
  request.mutable_inputs(0)->clear_shape();
  for (uint32_t d : {1, 3, 32, 32}) request.mutable_inputs(0)->add_shape(d);
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "should be 1x32x32x3");
  request = good;  // elements differ from the model's
  request.mutable_inputs(0)->set_shape(1, 16);
  request.mutable_inputs(0)->set_data(std::string(16 * 32 * 3, 'a'));
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "elements");
  request = good;  // data shorter than the shape says
  request.mutable_inputs(0)->set_data(std::string(100, 'a'));
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "needs 3072");
  request = good;  // float32 claimed, uint8-sized data
  request.mutable_inputs(0)->set_dtype(v1::DATA_TYPE_FLOAT32);
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "FP32 needs 12288");
  request = good;
  request.mutable_inputs(0)->set_pass_through(true);
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "pass-through");
  request = good;
  *request.add_inputs() = good.inputs(0);
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "2 input tensors");
  request = good;
  request.mutable_inputs(0)->set_index(5);
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "input index 5");
  request = good;
  request.clear_inputs();
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::INVALID_ARGUMENT, "got none");

  // Unknown ids.
  request = good;
  request.set_context_id(999);
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::NOT_FOUND, "context 999");
  request = good;
  request.set_session_id(12345);
  EXPECT_GRPC_CODE(run(request), grpc::StatusCode::NOT_FOUND, "session 12345");
  v1::CloseSessionRequest close;
  close.set_session_id(12345);
  v1::CloseSessionResponse closed;
  EXPECT_GRPC_CODE(stub.CloseSession(fixture.connection->call_context().get(), close, &closed),
                   grpc::StatusCode::NOT_FOUND, "session 12345");
  // Protocol version from the future.
  v1::DeviceInfo info;
  v1::GetDeviceInfoRequest future;
  future.set_protocol_version(static_cast<v1::ProtocolVersion>(7));
  EXPECT_GRPC_CODE(stub.GetDeviceInfo(fixture.connection->call_context().get(), future, &info),
                   grpc::StatusCode::FAILED_PRECONDITION, "protocol version 7");
  // Limits: two contexts and two models per session here.
  upload_and_init(*session, model);
  uint64_t model_id = 0, extra_context = 0;
  EXPECT_GRPC_CODE(session->upload_model(model, "third", &model_id),
                   grpc::StatusCode::RESOURCE_EXHAUSTED, "max_models_per_session");
  v1::ReleaseModelRequest release;
  release.set_session_id(session->id());
  release.set_model_id(1);
  v1::ReleaseModelResponse released;
  EXPECT_GRPC_OK(stub.ReleaseModel(fixture.connection->call_context().get(), release, &released));
  EXPECT_GRPC_OK(session->upload_model(model, "third", &model_id));
  EXPECT_GRPC_CODE(session->init_context(model_id, {}, &extra_context),
                   grpc::StatusCode::RESOURCE_EXHAUSTED, "max_contexts_per_session");
  // The context made from the released model still runs (it holds the bytes it needs).
  EXPECT_GRPC_OK(run(good));
  // A deadline shorter than the work: the client sees DEADLINE_EXCEEDED and the server moves on.
  v1::EvalPerfRequest perf;
  perf.set_session_id(session->id());
  perf.set_context_id(context_id);
  perf.set_loops(10000);
  grpc::ClientContext short_context;
  short_context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  v1::EvalPerfResponse perf_response;
  EXPECT_GRPC_CODE(stub.EvalPerf(&short_context, perf, &perf_response),
                   grpc::StatusCode::DEADLINE_EXCEEDED, "");
  EXPECT_GRPC_OK(run(good));
  fixture.stop_and_check();
}

void test_abandoned_sessions_are_freed(void**) {
  Fixture fixture({"--max_sessions", "4", "--max_contexts", "4"});
  const std::vector<uint8_t>& model = sample_model(SampleNetwork::kTiny, Precision::kFloat32);
  auto abandon_some = [&](int count) {
    for (int i = 0; i < count; ++i) {
      std::unique_ptr<RemoteSession> session;
      grpc::Status status;
      // The previous abandoned session may still be being freed; retry while the server says so.
      for (int attempt = 0; attempt < 1000; ++attempt) {
        status = RemoteSession::open(*fixture.connection, "abandoned", &session);
        if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      EXPECT_GRPC_OK(status);
      uint64_t model_id = 0, context_id = 0;
      EXPECT_GRPC_OK(session->upload_model(model, "tiny", &model_id));
      if (i % 4 == 0) EXPECT_GRPC_OK(session->init_context(model_id, {}, &context_id));
      const grpc::Status ended = session->abandon();
      assert_int_equal(ended.error_code(), grpc::StatusCode::CANCELLED);
    }
  };
  abandon_some(50);  // warm-up: thread pools, allocator arenas, the runtime's first-use state
  expect_session_slots_free(*fixture.connection, 4);
  const long rss_before = fixture.daemon.resident_kilobytes();
  const int fds_before = fixture.daemon.open_descriptor_count();
  abandon_some(1000);
  expect_session_slots_free(*fixture.connection, 4);
  // Contexts were freed too: four fit again in max_contexts 4.
  {
    std::vector<std::unique_ptr<RemoteSession>> sessions;
    for (int i = 0; i < 4; ++i) {
      sessions.push_back(open_session(*fixture.connection));
      upload_and_init(*sessions.back(), model);
    }
  }
  expect_session_slots_free(*fixture.connection, 4);
  const long rss_after = fixture.daemon.resident_kilobytes();
  const int fds_after = fixture.daemon.open_descriptor_count();
  print_message("daemon after 1000 abandoned sessions: RSS %ld -> %ld KiB, fds %d -> %d\n",
                rss_before, rss_after, fds_before, fds_after);
  assert_true(fds_after <= fds_before + 2);  // connections the last calls may keep
#if !defined(ORKNN_SANITIZED)
  // ASan's quarantine holds freed memory, so RSS says nothing there.
  assert_true(rss_after < rss_before + 16 * 1024);
#endif
  fixture.stop_and_check();
}

void test_idle_sessions_time_out(void**) {
  Fixture fixture({"--idle_timeout_seconds", "1"});
  auto session = open_session(*fixture.connection);
  std::this_thread::sleep_for(std::chrono::milliseconds(2600));
  uint64_t model_id = 0;
  EXPECT_GRPC_CODE(session->upload_model(sample_model(SampleNetwork::kTiny, Precision::kFloat32),
                                         "m", &model_id),
                   grpc::StatusCode::NOT_FOUND, "session");
  EXPECT_GRPC_CODE(session->wait_closed_by_server(), grpc::StatusCode::DEADLINE_EXCEEDED, "idle");
  fixture.stop_and_check();
}

void test_sigterm_during_runs(void**) {
  Fixture fixture;
  const std::vector<uint8_t>& model = sample_model(SampleNetwork::kTiny, Precision::kInt8);
  constexpr int kClients = 4;
  std::atomic<int> ok_runs{0}, wrong{0};
  std::atomic<bool> started[kClients] = {};
  std::vector<std::thread> clients;
  std::string first_wrong;
  std::mutex wrong_mutex;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      ClientContext client;
      if (!open_client_context(fixture.daemon.address(), model, &client).ok()) {
        ++wrong;
        return;
      }
      const v1::RunRequest request = tiny_run_request(client.session->id(), client.context_id);
      for (;;) {
        v1::RunResponse response;
        const grpc::Status status = client.connection->stub().Run(
            client.connection->call_context().get(), request, &response);
        started[c] = true;
        if (status.ok()) {
          ++ok_runs;
          continue;
        }
        // Refused because the server is going away: the only acceptable failures.
        const auto code = status.error_code();
        if (code != grpc::StatusCode::UNAVAILABLE && code != grpc::StatusCode::NOT_FOUND &&
            code != grpc::StatusCode::CANCELLED) {
          std::lock_guard<std::mutex> lock(wrong_mutex);
          if (first_wrong.empty()) first_wrong = orknn::client::status_text(status);
          ++wrong;
        }
        break;
      }
      client.session->abandon();
    });
  }
  for (int c = 0; c < kClients; ++c) {
    while (!started[c]) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const int status = fixture.daemon.stop();
  for (std::thread& client : clients) client.join();
  print_message("%d runs completed before and during the drain\n", ok_runs.load());
  if (wrong != 0)
    fail_msg("%d calls failed with a wrong status, first: %s", wrong.load(), first_wrong.c_str());
  if (status != 0) {
    fail_msg("daemon exit status 0x%x after SIGTERM; log:\n%s", status,
             fixture.daemon.log_text().c_str());
  }
  assert_true(ok_runs > 0);
}

}  // namespace

int main(int argc, char** argv) {
  self_path = argv[0];
  if (argc == 4 && std::string(argv[1]) == "--killed-client") {
    return run_killed_client(argv[2], argv[3]);
  }
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_killed_clients),
      cmocka_unit_test(test_bad_models),
      cmocka_unit_test(test_bad_tensors_and_ids),
      cmocka_unit_test(test_abandoned_sessions_are_freed),
      cmocka_unit_test(test_idle_sessions_time_out),
      cmocka_unit_test(test_sigterm_during_runs),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
