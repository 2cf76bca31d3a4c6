// ADB through a small interface: a CommandRunner runs `adb` (the real one execs it from PATH;
// tests put a fake script first on PATH or use a fake runner). AdbForward sets up
// `adb -s SERIAL forward tcp:0 tcp:PORT` to the board's daemon and removes it when destroyed.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace orknn::client {

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv (argv[0] found on PATH); stdout into `output`. Returns the exit status, or -1
  // when the program cannot be started.
  virtual int run(const std::vector<std::string>& argv, std::string* output) = 0;
};

// fork + execvp, stdout through a pipe, stderr passed on.
class ProcessRunner final : public CommandRunner {
 public:
  int run(const std::vector<std::string>& argv, std::string* output) override;
};

struct AdbDevice {
  std::string serial;
  std::string state;  // "device", "unauthorized", "offline", ...
};

class AdbClient {
 public:
  explicit AdbClient(CommandRunner& runner) : runner_(runner) {}
  // `adb devices`; false with `error` when adb cannot run.
  bool list_devices(std::vector<AdbDevice>* out, std::string* error);
  // `adb -s SERIAL forward tcp:0 tcp:REMOTE_PORT`; the local port adb picked.
  bool forward(const std::string& serial, int remote_port, int* out_local_port, std::string* error);
  bool remove_forward(const std::string& serial, int local_port);

 private:
  CommandRunner& runner_;
};

class AdbForward {
 public:
  static std::unique_ptr<AdbForward> create(AdbClient& adb, const std::string& serial,
                                            int remote_port, std::string* error);
  ~AdbForward();
  AdbForward(const AdbForward&) = delete;
  AdbForward& operator=(const AdbForward&) = delete;
  int local_port() const { return local_port_; }

 private:
  AdbForward(AdbClient& adb, std::string serial, int local_port)
      : adb_(adb), serial_(std::move(serial)), local_port_(local_port) {}
  AdbClient& adb_;
  std::string serial_;
  int local_port_;
};

}  // namespace orknn::client
