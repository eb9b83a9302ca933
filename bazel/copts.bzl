"""Compiler flags for graphgc's own code (not for generated or system code)."""

# -Wmissing-field-initializers is off: g++ 12 raises it on the designated-
# initializer idiom of the public option structs ({.activation = "relu"}).
GG_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-missing-field-initializers",
]

# Generated protobuf code: warnings on, but not fatal.
GG_PROTO_COPTS = ["-Wno-unused-parameter"]
