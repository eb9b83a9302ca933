#!/usr/bin/python3
"""The syntax-only part of tests/lint/thread_safety.sh, with its cache.

Reads source files (one per line) on stdin and checks each with
`COMPILER FLAGS... FILE` (a -fsyntax-only run of clang with the
thread-safety warnings as errors), JOBS at a time. Prints one line per file,
"  CACHED file" or "  SYNTAX file" (then the compiler's own output), and
exits non-zero if any file failed.

The cache (CACHE_DIR, outside the clone) works as ccache's "direct mode":
  1. A file's key is a hash of the compiler's version line (KEY_PREFIX), the
     flags, the file's path as given (relative to the clone) and its
     content.
  2. A clean check writes a manifest under that key: every file the
     compiler read for it (its -MD dependency list: the source, project
     headers, generated headers, system headers), each with the hash of its
     content.
  3. A file is clean without running the compiler when its key has a
     manifest and every file listed there still has the content it had.
     Each header is hashed at most once per run, so a run where nothing
     changed reads the headers once and starts no compiler: cheaper than
     the preprocessor run per file that a key over the preprocessed text
     needs.
Only clean results are recorded; a warning is reported on every run until
it is fixed. Paths inside the clone are recorded relative to it (the flags
name the clone as -I. and the generated headers relatively), so the cache
hits from any clone. As with ccache, a new header that would shadow a
recorded one earlier in the include path is not noticed; the include path
is the clone first, then the generated headers, then the system's, so that
takes a project header named like a system one.

Usage: thread_safety_pass.py --compiler C --cache DIR [--no-cache]
           [--jobs N] [--key-prefix S] -- FLAGS...  < files
"""

import argparse
import concurrent.futures
import hashlib
import os
import subprocess
import sys
import tempfile
import threading

MANIFEST_VERSION = "thread-safety-manifest 1"


class HashCache:
  """Content hashes of files, each read at most once per run."""

  def __init__(self):
    self._lock = threading.Lock()
    self._hashes = {}

  def get(self, path):
    """The file's SHA-256 (hex), or None if it cannot be read."""
    with self._lock:
      if path in self._hashes:
        return self._hashes[path]
    try:
      with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    except OSError:
      digest = None
    with self._lock:
      self._hashes[path] = digest
    return digest


def parse_depfile(text):
  """The prerequisites of a Make rule as clang's -MD writes it."""
  text = text.replace("\\\n", " ")
  # Escaped spaces stay in their path; split on the others.
  text = text.replace("\\ ", "\0")
  words = text.split()
  if not words:
    return []
  # The first word is the target, "t.o:".
  deps = []
  for w in words[1:]:
    if w.endswith(":"):
      continue
    deps.append(w.replace("\0", " "))
  return deps


def direct_key(prefix, flags, src, hashes):
  content = hashes.get(src)
  if content is None:
    return None
  h = hashlib.sha256()
  for part in [MANIFEST_VERSION, prefix, "\x1f".join(flags), src, content]:
    h.update(part.encode())
    h.update(b"\x1e")
  return h.hexdigest()[:40]


def manifest_matches(path, hashes):
  """Whether every file the manifest at `path` lists is unchanged."""
  try:
    with open(path, encoding="utf-8") as f:
      lines = f.read().splitlines()
  except OSError:
    return False
  if not lines or lines[0] != MANIFEST_VERSION:
    return False
  for line in lines[1:]:
    digest, _, dep = line.partition(" ")
    if not dep or hashes.get(dep) != digest:
      return False
  return True


def write_manifest(path, deps, hashes):
  """Writes the manifest atomically; False if a dependency vanished."""
  lines = [MANIFEST_VERSION]
  for dep in sorted(set(deps)):
    digest = hashes.get(dep)
    if digest is None:
      return False
    lines.append(f"{digest} {dep}")
  fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
  with os.fdopen(fd, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
  os.replace(tmp, path)
  return True


def check(src, args, hashes):
  """(ok, report) for one file."""
  key = None
  if args.cache:
    key = direct_key(args.key_prefix, args.flags, src, hashes)
    if key is not None and manifest_matches(
        os.path.join(args.cache, key), hashes):
      return True, f"  CACHED {src}\n"
  with tempfile.TemporaryDirectory(prefix="thread-safety-") as tmp:
    depfile = os.path.join(tmp, "deps.d")
    cmd = [args.compiler, *args.flags, src]
    if key is not None:
      cmd += ["-MD", "-MF", depfile]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False)
    report = f"  SYNTAX {src}\n{proc.stdout}"
    if proc.returncode != 0:
      return False, report
    if key is not None:
      try:
        with open(depfile, encoding="utf-8") as f:
          deps = parse_depfile(f.read())
      except OSError:
        deps = []
      # The content hashed for the key must be what was checked: hash the
      # source again and record it only if it did not change meanwhile.
      if deps and src in deps:
        write_manifest(os.path.join(args.cache, key), deps, HashCache())
    return True, report


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--compiler", required=True)
  parser.add_argument("--cache", default="")
  parser.add_argument("--no-cache", action="store_true")
  parser.add_argument("--jobs", type=int, default=2)
  parser.add_argument("--key-prefix", default="")
  parser.add_argument("flags", nargs="*")
  args = parser.parse_args()
  if args.no_cache:
    args.cache = ""
  if args.cache:
    os.makedirs(args.cache, exist_ok=True)
  files = [line.strip() for line in sys.stdin if line.strip()]
  hashes = HashCache()
  failed = 0
  with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
    for ok, report in pool.map(lambda f: check(f, args, hashes), files):
      sys.stdout.write(report)
      sys.stdout.flush()
      if not ok:
        failed += 1
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
