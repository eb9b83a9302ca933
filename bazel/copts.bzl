"""Compiler flags for graphgc's own code (not for generated or system code).

These travel with graphgc's targets into every workspace that builds them,
so they hold no -Werror: a consumer's compiler or flags (a newer g++, or
-fsanitize=thread, where g++ 12 warns -Wtsan on atomic_thread_fence) must
not break its build. Warnings are errors in graphgc's own workspace only,
through --per_file_copt in its .bazelrc.
"""

# -Wmissing-field-initializers is off: g++ 12 raises it on the designated-
# initializer idiom of the public option structs ({.activation = "relu"}).
#
# -fvect-cost-model=dynamic: at -O2, g++ 12 vectorises a loop only when no
# scalar epilogue is needed ("very-cheap"), i.e. almost never for kernels
# over a runtime length. Eigen's expressions without packet support (select,
# comparisons, casts) and our own elementwise loops then run one float at a
# time; with the dynamic model they get AVX (ReluGrad over 2,048 floats:
# 2,014 ns -> 117 ns on this machine). It is -O3's cost model, without -O3's
# other code growth.
GG_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-missing-field-initializers",
    "-fvect-cost-model=dynamic",
]

# Generated protobuf code: warnings on, but not fatal.
GG_PROTO_COPTS = ["-Wno-unused-parameter"]
