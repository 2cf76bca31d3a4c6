// Starts rknn_server as a child process on a free loopback port (the daemon writes the port it
// bound to --port_file) and stops it with SIGTERM. Also reads its RSS and open descriptors.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace orknn::server_testing {

class DaemonProcess {
 public:
  DaemonProcess() = default;
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // Runs the daemon with --listen 127.0.0.1:0 --port_file <tmp> plus `extra_arguments` (which
  // may override --listen). False when it exits or does not report a port within 30 s; then
  // exit_status() and log_text() tell why.
  bool start(const std::vector<std::string>& extra_arguments, bool expect_port = true);
  // SIGTERM and wait; returns the exit status as waitpid encodes it (0: clean exit 0).
  int stop();
  // Waits for an exit that is expected without a signal (a refused configuration).
  int wait_exit(int timeout_seconds);

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log_text() const;  // what the daemon wrote to stderr

  long resident_kilobytes() const;
  int open_descriptor_count() const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int status_ = -1;
  std::string directory_;
};

// Path of the built daemon (from the build system).
std::string daemon_binary();

// A fresh empty directory under $TMPDIR, removed by the caller (or left for inspection).
std::string make_temporary_directory(const std::string& tag);

}  // namespace orknn::server_testing
