"""graphgc_deps(): every repository graphgc's BUILD files refer to.

Bazel 4.2.3 from Debian cannot download anything here, so each implicit
repository points at a local copy: Debian's rules_java and platforms, an
offline rules_cc shim, an empty remote_coverage_tools, and /usr for the
system libraries. A repository the calling WORKSPACE already declared is
left alone.
"""

def _shim_impl(ctx):
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    for path, content in ctx.attr.files.items():
        ctx.file(path, content)
    for path, label in ctx.attr.copies.items():
        ctx.file(path, ctx.read(ctx.path(Label(label))))

_shim_repository = repository_rule(
    implementation = _shim_impl,
    attrs = {
        "files": attr.string_dict(),
        "copies": attr.string_dict(),
    },
    local = True,
)

_COVERAGE_BUILD = """package(default_visibility = ["//visibility:public"])
filegroup(name = "coverage_report_generator", srcs = [])
filegroup(name = "lcov_merger", srcs = [])
"""

def _maybe(rule, name, **kwargs):
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def graphgc_deps():
    _maybe(
        _shim_repository,
        "rules_cc",
        files = {"BUILD": "", "cc/BUILD": ""},
        copies = {"cc/defs.bzl": str(Label("//third_party/rules_cc:defs.bzl"))},
    )
    _maybe(
        _shim_repository,
        "remote_coverage_tools",
        files = {"BUILD": _COVERAGE_BUILD},
    )
    _maybe(native.local_repository, "rules_java", path = "/usr/share/bazel/rules/java")
    _maybe(native.local_repository, "platforms", path = "/usr/share/bazel/platforms")
    _maybe(
        native.new_local_repository,
        "graphgc_system",
        path = "/usr",
        build_file = str(Label("//third_party:system.BUILD")),
    )
