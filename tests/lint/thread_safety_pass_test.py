#!/usr/bin/python3
"""Tests of tests/lint/thread_safety_pass.py's cache, with a stand-in
compiler: it logs each run, fails on a source containing "WARN" and lists
the source and its `#include "..."` files (one level) as its -MD
dependencies."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PASS = os.path.join(HERE, "thread_safety_pass.py")

FAKE_COMPILER = textwrap.dedent("""\
    #!/usr/bin/python3
    import os, re, sys
    args = sys.argv[1:]
    with open(os.environ["FAKE_LOG"], "a") as log:
        log.write(" ".join(args) + "\\n")
    depfile = args[args.index("-MF") + 1] if "-MF" in args else None
    src = [a for a in args if a.endswith(".cc")][-1]
    text = open(src).read()
    if "WARN" in text:
        print(src + ":1: warning: mutex not held [-Wthread-safety]")
        sys.exit(1)
    if depfile:
        deps = [src] + re.findall(r'#include "([^"]+)"', text)
        with open(depfile, "w") as f:
            f.write("x.o: " + " \\\\\\n  ".join(deps) + "\\n")
    """)


class ThreadSafetyPassTest(unittest.TestCase):

  def setUp(self):
    self.dir = tempfile.mkdtemp()
    self.compiler = os.path.join(self.dir, "fake-clang")
    with open(self.compiler, "w") as f:
      f.write(FAKE_COMPILER)
    os.chmod(self.compiler, 0o755)
    self.log = os.path.join(self.dir, "log")
    self.cache = os.path.join(self.dir, "cache")
    self.write("a.h", "int a();\n")
    self.write("a.cc", '#include "a.h"\n')
    self.write("b.cc", "int b();\n")

  def write(self, name, text):
    with open(os.path.join(self.dir, name), "w") as f:
      f.write(text)

  def run_pass(self, files, *extra):
    with open(self.log, "w"):
      pass
    proc = subprocess.run(
        ["/usr/bin/python3", PASS, "--compiler", self.compiler, "--cache",
         self.cache, "--jobs", "2", "--key-prefix", "fake 1", *extra, "--",
         "-fsyntax-only", "-I."],
        input="\n".join(files) + "\n", cwd=self.dir, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=dict(os.environ, FAKE_LOG=self.log), check=False)
    return proc.returncode, proc.stdout

  def compiled(self):
    with open(self.log) as f:
      return sorted(l.split()[l.split().index("-I.") + 1] for l in f
                    if l.strip())

  def test_a_clean_file_is_not_compiled_again(self):
    rc, out = self.run_pass(["a.cc", "b.cc"])
    self.assertEqual(rc, 0, out)
    self.assertEqual(self.compiled(), ["a.cc", "b.cc"])
    rc, out = self.run_pass(["a.cc", "b.cc"])
    self.assertEqual(rc, 0, out)
    self.assertEqual(self.compiled(), [])
    self.assertIn("  CACHED a.cc", out)

  def test_a_changed_header_compiles_its_includers_only(self):
    self.run_pass(["a.cc", "b.cc"])
    self.write("a.h", "int a(int);\n")
    rc, out = self.run_pass(["a.cc", "b.cc"])
    self.assertEqual(rc, 0, out)
    self.assertEqual(self.compiled(), ["a.cc"])

  def test_a_changed_source_is_compiled_again(self):
    self.run_pass(["a.cc", "b.cc"])
    self.write("b.cc", "int b(int);\n")
    self.run_pass(["a.cc", "b.cc"])
    self.assertEqual(self.compiled(), ["b.cc"])

  def test_a_deleted_header_is_a_miss(self):
    self.run_pass(["a.cc"])
    os.remove(os.path.join(self.dir, "a.h"))
    self.run_pass(["a.cc"])
    self.assertEqual(self.compiled(), ["a.cc"])

  def test_a_warning_fails_and_is_never_cached(self):
    self.write("b.cc", "WARN\n")
    for _ in range(2):
      rc, out = self.run_pass(["a.cc", "b.cc"])
      self.assertNotEqual(rc, 0)
      self.assertIn("b.cc:1: warning: mutex not held", out)
      self.assertIn("b.cc", self.compiled())

  def test_other_flags_are_another_key(self):
    self.run_pass(["b.cc"])
    self.run_pass(["b.cc"], "--key-prefix", "fake 2")
    self.assertEqual(self.compiled(), ["b.cc"])

  def test_no_cache_compiles_every_file(self):
    self.run_pass(["a.cc", "b.cc"])
    self.run_pass(["a.cc", "b.cc"], "--no-cache")
    self.assertEqual(self.compiled(), ["a.cc", "b.cc"])


if __name__ == "__main__":
  unittest.main()
