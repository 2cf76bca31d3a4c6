#include "adb.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace orknn::client {

int ProcessRunner::run(const std::vector<std::string>& argv, std::string* output) {
  int pipe_fds[2];
  if (argv.empty() || pipe(pipe_fds) != 0) return -1;
  const pid_t child = fork();
  if (child < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return -1;
  }
  if (child == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  char buffer[4096];
  ssize_t got;
  while ((got = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) output->append(buffer, got);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
}

bool AdbClient::list_devices(std::vector<AdbDevice>* out, std::string* error) {
  std::string text;
  if (runner_.run({"adb", "devices"}, &text) != 0) {
    *error = "'adb devices' failed (is adb installed and on PATH?)";
    return false;
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.rfind("List of devices", 0) == 0 || line[0] == '*') continue;
    std::istringstream fields(line);
    AdbDevice device;
    if (fields >> device.serial >> device.state) out->push_back(device);
  }
  return true;
}

bool AdbClient::forward(const std::string& serial, int remote_port, int* out_local_port,
                        std::string* error) {
  std::string text;
  const int status = runner_.run(
      {"adb", "-s", serial, "forward", "tcp:0", "tcp:" + std::to_string(remote_port)}, &text);
  const int port = std::atoi(text.c_str());
  if (status != 0 || port <= 0 || port > 65535) {
    *error = "'adb -s " + serial + " forward tcp:0 tcp:" + std::to_string(remote_port) +
             "' failed (status " + std::to_string(status) + ", output '" + text + "')";
    return false;
  }
  *out_local_port = port;
  return true;
}

bool AdbClient::remove_forward(const std::string& serial, int local_port) {
  std::string text;
  return runner_.run(
             {"adb", "-s", serial, "forward", "--remove", "tcp:" + std::to_string(local_port)},
             &text) == 0;
}

std::unique_ptr<AdbForward> AdbForward::create(AdbClient& adb, const std::string& serial,
                                               int remote_port, std::string* error) {
  int local_port = 0;
  if (!adb.forward(serial, remote_port, &local_port, error)) return nullptr;
  return std::unique_ptr<AdbForward>(new AdbForward(adb, serial, local_port));
}

AdbForward::~AdbForward() {
  adb_.remove_forward(serial_, local_port_);
}

}  // namespace orknn::client
