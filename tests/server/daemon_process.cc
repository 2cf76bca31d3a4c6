#include "daemon_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

namespace orknn::server_testing {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

}  // namespace

std::string daemon_binary() {
  return ORKNN_SERVER_BINARY;
}

std::string make_temporary_directory(const std::string& tag) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base ? base : "/tmp") + "/orknn_" + tag + "_XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  const char* made = mkdtemp(buffer.data());
  return made ? made : std::string();
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) stop();
  if (!directory_.empty()) {
    unlink((directory_ + "/port").c_str());
    unlink((directory_ + "/port.tmp").c_str());
    unlink((directory_ + "/stderr").c_str());
    rmdir(directory_.c_str());
  }
}

bool DaemonProcess::start(const std::vector<std::string>& extra_arguments, bool expect_port) {
  directory_ = make_temporary_directory("daemon");
  const std::string port_file = directory_ + "/port";
  std::vector<std::string> arguments = {daemon_binary(), "--listen", "127.0.0.1:0", "--port_file",
                                        port_file};
  arguments.insert(arguments.end(), extra_arguments.begin(), extra_arguments.end());
  const std::string log_path = directory_ + "/stderr";
  pid_ = fork();
  if (pid_ == 0) {
    const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log_fd >= 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
    }
    // A test that fails leaves by longjmp, without destructors: the daemon must not outlive it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::vector<char*> argv;
    for (std::string& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (pid_ < 0) return false;
  if (!expect_port) return true;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    const std::string text = read_all(port_file);
    if (!text.empty()) {
      port_ = std::atoi(text.c_str());
      return port_ > 0;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = status;
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int DaemonProcess::wait_exit(int timeout_seconds) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  while (pid_ > 0 && std::chrono::steady_clock::now() < give_up) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = status;
      pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status_;
}

int DaemonProcess::stop() {
  if (pid_ <= 0) return status_;
  kill(pid_, SIGTERM);
  const int status = wait_exit(60);
  if (pid_ > 0) {  // did not drain in time: make sure no process is left behind
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    pid_ = -1;
    return -1;
  }
  return status;
}

std::string DaemonProcess::log_text() const {
  return read_all(directory_ + "/stderr");
}

long DaemonProcess::resident_kilobytes() const {
  const std::string status = read_all("/proc/" + std::to_string(pid_) + "/status");
  const size_t at = status.find("VmRSS:");
  return at == std::string::npos ? -1 : std::atol(status.c_str() + at + 6);
}

int DaemonProcess::open_descriptor_count() const {
  DIR* directory = opendir(("/proc/" + std::to_string(pid_) + "/fd").c_str());
  if (!directory) return -1;
  int count = 0;
  while (dirent* entry = readdir(directory)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(directory);
  return count;
}

}  // namespace orknn::server_testing
