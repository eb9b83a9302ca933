"""gg_cc_proto: C++ code for .proto files via the system protoc.

proto_library/cc_proto_library need the protobuf source repository, which
cannot be fetched offline, so a genrule runs Debian's protoc and a
cc_library compiles the generated .pb.h/.pb.cc against -lprotobuf.

Path trick: the repository root is found by stripping the package-relative
path from $(location src) ("." at home, "external/graphgc" when graphgc is
consumed as @graphgc) and passed as both --proto_path and the --cpp_out
subdirectory, so generated code includes "serialize/x.pb.h" either way.
"""

load("//bazel:copts.bzl", "GG_PROTO_COPTS")

def gg_cc_proto(name, srcs, deps = [], visibility = None):
    """One cc_library `name` over the protoc output of `srcs`.

    Args:
      name: name of the cc_library (the genrule is name + "_gen", the
        sources filegroup name + "_srcs").
      srcs: .proto files of this package; they import one another as
        "<package>/<file>.proto".
      deps: other gg_cc_proto targets whose .proto files srcs import.
      visibility: of the cc_library and the sources filegroup.
    """
    pkg = native.package_name()
    native.filegroup(
        name = name + "_srcs",
        srcs = srcs + [d + "_srcs" for d in deps],
        visibility = visibility,
    )
    hdrs = [s[:-len(".proto")] + ".pb.h" for s in srcs]
    ccs = [s[:-len(".proto")] + ".pb.cc" for s in srcs]
    first = srcs[0]
    cmd = " && ".join([
        "loc=$(location %s)" % first,
        "root=$${loc%%/%s/%s}" % (pkg, first),
        "if [ \"$$root\" = \"$$loc\" ]; then root=.; fi",
        "mkdir -p $(GENDIR)/$$root",
        "$(location @graphgc_system//:protoc) --proto_path=$$root " +
        "--cpp_out=$(GENDIR)/$$root " +
        " ".join(["$(location %s)" % s for s in srcs]),
    ])
    native.genrule(
        name = name + "_gen",
        srcs = srcs + [d + "_srcs" for d in deps],
        outs = hdrs + ccs,
        cmd = cmd,
        tools = ["@graphgc_system//:protoc"],
    )
    native.cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        copts = GG_PROTO_COPTS,
        visibility = visibility,
        deps = deps + ["@graphgc_system//:protobuf"],
    )
