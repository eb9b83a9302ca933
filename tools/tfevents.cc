// tfevents: summarise TensorBoard events files.
//
//   bazel run //tools:tfevents -- PATH...   (--help: usage)
//
// PATH is an events file or a directory searched recursively for
// events.out.tfevents.* files. Prints, per file: size, event count, graph
// bytes, node count and op histogram of the last graph, scalar tags with
// counts and last values, and any corrupt record or torn tail.
// Exit code: 0 all files clean (a torn tail is not an error), 1 some file
// is corrupt or has a record over the memory budget (an event or graph that
// could take more than 2 GiB once parsed), 2 a path cannot be read or no
// path was given.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/tfevents_lib.h"

namespace {

constexpr char kUsage[] =
    "Summarises TensorBoard events files.\n"
    "\n"
    "Usage: tfevents PATH...\n"
    "\n"
    "PATH is an events file or a directory searched recursively for\n"
    "events.out.tfevents.* files. Prints, per file: size, event count, graph\n"
    "bytes, node count and op histogram of the last graph, scalar tags with\n"
    "counts and last values, and any corrupt record or torn tail.\n"
    "Files that could make tfevents take more memory than a budget (an\n"
    "event or graph over 2 GiB once parsed) are refused, not parsed.\n"
    "Exit code: 0 all files clean, 1 some file is corrupt or over the\n"
    "memory budget, 2 a path cannot be read or no path was given.";

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::fprintf(stderr, "%s\n", kUsage);
    return 2;
  }
  // Under `bazel run`, resolve relative paths against the caller's directory.
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (::chdir(wd) != 0) std::perror("tfevents: chdir");
  }
  bool corrupt = false;
  bool unreadable = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const char* path = args[i];
    auto files = graphgc::tfevents::FindEventFiles(path);
    if (!files.ok()) {
      std::fprintf(stderr, "tfevents: %s\n",
                   std::string(files.status().message()).c_str());
      unreadable = true;
      continue;
    }
    if (files->empty()) {
      std::fprintf(stderr, "tfevents: no events files under %s\n", path);
      unreadable = true;
      continue;
    }
    for (const std::string& f : *files) {
      auto summary = graphgc::tfevents::SummarizeEventFile(f);
      if (!summary.ok()) {
        std::fprintf(stderr, "tfevents: %s\n",
                     std::string(summary.status().message()).c_str());
        unreadable = true;
        continue;
      }
      std::fputs(graphgc::tfevents::FormatSummary(*summary).c_str(), stdout);
      if (!summary->corruption.ok()) corrupt = true;
    }
  }
  if (corrupt) return 1;
  return unreadable ? 2 : 0;
}
