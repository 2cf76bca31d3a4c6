// Load: 16 concurrent clients x 200 runs each on the tiny model, each client with its own
// connection, session and context. Every run must succeed and return the same bytes as the
// first; p50/p99 latency and throughput are printed (not asserted: tests never assert on time).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "rknn_api.h"

#include "server_test_util.h"

namespace {

using namespace orknn::server_testing;
using orknn::client::RemoteSession;
using orknn::client::ServerConnection;

constexpr int kClients = 16;
constexpr int kRunsPerClient = 200;

void test_sixteen_clients(void**) {
  Fixture fixture;
  const std::vector<uint8_t>& model = sample_model(SampleNetwork::kTiny, Precision::kFloat32);
  std::vector<std::vector<double>> latencies(kClients);
  std::atomic<int> failures{0};
  std::mutex first_failure_mutex;
  std::string first_failure;
  auto record_failure = [&](const std::string& what) {
    ++failures;
    std::lock_guard<std::mutex> lock(first_failure_mutex);
    if (first_failure.empty()) first_failure = what;
  };
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      ClientContext client;
      grpc::Status status = open_client_context(fixture.daemon.address(), model, &client);
      ++ready;
      if (!status.ok()) {
        record_failure("setup: " + orknn::client::status_text(status));
        return;
      }
      while (!go) std::this_thread::yield();
      const v1::RunRequest request =
          tiny_run_request(client.session->id(), client.context_id, static_cast<char>(c * 7));
      std::string first_output;
      for (int r = 0; r < kRunsPerClient; ++r) {
        v1::RunResponse response;
        const auto start = std::chrono::steady_clock::now();
        status = client.connection->stub().Run(client.connection->call_context().get(), request,
                                               &response);
        latencies[c].push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
        if (!status.ok()) {
          record_failure(orknn::client::status_text(status));
          continue;
        }
        if (r == 0) first_output = response.outputs(0).data();
        if (response.outputs(0).data() != first_output)
          record_failure("outputs changed between runs");
      }
      status = client.session->close();
      if (!status.ok()) record_failure("close: " + orknn::client::status_text(status));
    });
  }
  while (ready < kClients) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto start = std::chrono::steady_clock::now();
  go = true;
  for (std::thread& client : clients) client.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (const auto& one : latencies) all.insert(all.end(), one.begin(), one.end());
  std::sort(all.begin(), all.end());
  if (!all.empty()) {
    print_message("load: %d clients x %d runs: p50 %.2f ms, p99 %.2f ms, %.0f runs/s (%.2f s)\n",
                  kClients, kRunsPerClient, all[all.size() / 2], all[all.size() * 99 / 100],
                  static_cast<double>(all.size()) / seconds, seconds);
  }
  if (failures != 0) fail_msg("%d failures; first: %s", failures.load(), first_failure.c_str());
  assert_int_equal(all.size(), kClients * kRunsPerClient);
  fixture.stop_and_check();
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {cmocka_unit_test(test_sixteen_clients)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
