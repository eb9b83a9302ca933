# cmake/dependencies.cmake: graphgc's dependencies (Debian 12's packages),
# found the same way when graphgc is built and when graphgcConfig.cmake is
# loaded by a consumer. Sets GRAPHGC_DEPENDENCIES, the targets to link.
include(CMakeFindDependencyMacro)
find_dependency(absl)
find_dependency(Eigen3 3.4 NO_MODULE)
find_dependency(Protobuf)
find_dependency(nlohmann_json)
find_dependency(Threads)
find_dependency(PkgConfig)
if(NOT TARGET PkgConfig::graphgc_hdf5)
  # Debian's serial HDF5: headers in include/hdf5/serial, -lhdf5_serial.
  pkg_check_modules(graphgc_hdf5 REQUIRED IMPORTED_TARGET GLOBAL hdf5-serial)
endif()
set(GRAPHGC_DEPENDENCIES
  absl::status absl::statusor absl::strings absl::str_format absl::cord
  absl::flat_hash_map absl::flat_hash_set absl::btree absl::inlined_vector
  absl::fixed_array absl::hash absl::span absl::time absl::synchronization
  Eigen3::Eigen protobuf::libprotobuf nlohmann_json::nlohmann_json
  PkgConfig::graphgc_hdf5 Threads::Threads)
