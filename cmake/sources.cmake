# cmake/sources.cmake: the library's files for the CMake build. Bazel's BUILD
# files list the same ones; tests/cmake/check_sources.sh (run_tests.sh's
# "cmake" stage) fails when the two lists differ.

set(GRAPHGC_SOURCES
    util/cpu_count.cc
    util/file.cc
    util/fixed_size_pool.cc
    util/huge_pages.cc
    util/mutex.cc
    util/os_error.cc
    gc/collector.cc
    gc/handle.cc
    gc/heap.cc
    gc/heap_verifier.cc
    gc/marker.cc
    gc/roots.cc
    gc/sweeper.cc
    runtime/algorithm.cc
    runtime/node_traits.cc
    runtime/attr_value.cc
    runtime/executor.cc
    runtime/gradient_walk.cc
    runtime/graph.cc
    runtime/intra_op_threads.cc
    runtime/name_index.cc
    runtime/node.cc
    runtime/node_view.cc
    runtime/op_def.cc
    runtime/plan.cc
    runtime/plan_builder.cc
    runtime/session.cc
    runtime/tensor.cc
    ops/array_ops.cc
    ops/concat_ops.cc
    ops/conv_ops.cc
    ops/core_ops.cc
    ops/gather_ops.cc
    ops/elementwise.cc
    ops/gradients.cc
    ops/math_binary_kernels.cc
    ops/math_compare_kernels.cc
    ops/math_ops.cc
    ops/math_reduce_kernels.cc
    ops/math_unary_kernels.cc
    ops/nn_ops.cc
    ops/op_util.cc
    ops/ops.cc
    ops/parallel.cc
    ops/random_ops.cc
    ops/registry.cc
    ops/resources.cc
    ops/fused_kernels.cc
    ops/fused_training_kernels.cc
    ops/small_gemm.cc
    ops/state_ops.cc
    models/batches.cc
    models/callbacks/callback.cc
    models/callbacks/checkpoint.cc
    models/callbacks/control.cc
    models/callbacks/logging.cc
    models/callbacks/monitor.cc
    models/compile_config.cc
    models/engine.cc
    models/epoch_steps.cc
    models/fit.cc
    models/functional.cc
    models/functional_config.cc
    models/keras_json.cc
    models/layer_registry.cc
    models/layers.cc
    models/learning_rate_schedule.cc
    models/learning_rate_schedule_config.cc
    models/loss_registry.cc
    models/metric_registry.cc
    models/load_budget.cc
    models/load_weights.cc
    models/model_config.cc
    models/model_data.cc
    models/model_graph.cc
    models/model_weights.cc
    models/optimizer_base.cc
    models/optimizer_registry.cc
    models/optimizer_state.cc
    models/orthogonal.cc
    models/random_seed.cc
    models/sample_weights.cc
    models/saving.cc
    models/scheduled_learning_rate.cc
    models/sequential.cc
    models/sequential_callback_access.cc
    models/signature.cc
    models/summary.cc
    models/training.cc
    serialize/attr_codec.cc
    serialize/crc32c.cc
    serialize/event_file.cc
    serialize/frozen_graph.cc
    serialize/graph_export.cc
    serialize/graph_import.cc
    serialize/hdf5_image_driver.cc
    serialize/hparams_summary.cc
    serialize/keras_weights.cc
    serialize/parse_budget.cc
    serialize/scope_renaming.cc
    serialize/tfrecord.cc
)

set(GRAPHGC_HEADERS
    util/cpu_count.h
    util/file.h
    util/fixed_size_pool.h
    util/huge_pages.h
    util/float_mode.h
    util/mutex.h
    util/os_error.h
    util/pool_cache.h
    util/registration.h
    util/status_macros.h
    gc/collector.h
    gc/edge_list.h
    gc/handle.h
    gc/heap.h
    gc/marker.h
    gc/node_id.h
    gc/pin.h
    gc/root_count.h
    gc/roots.h
    gc/stats.h
    gc/sweeper.h
    runtime/algorithm.h
    runtime/node_traits.h
    runtime/attr_value.h
    runtime/executor.h
    runtime/fusion.h
    runtime/gradient_walk.h
    runtime/graph.h
    runtime/intra_op_threads.h
    runtime/name_index.h
    runtime/name_table.h
    runtime/node.h
    runtime/node_input.h
    runtime/node_resource.h
    runtime/node_view.h
    runtime/op_def.h
    runtime/plan.h
    runtime/plan_builder.h
    runtime/session.h
    runtime/tensor.h
    ops/array_ops.h
    ops/concat_ops.h
    ops/conv_ops.h
    ops/elementwise.h
    ops/gather_ops.h
    ops/gradients.h
    ops/math_kernels.h
    ops/math_ops.h
    ops/nn_ops.h
    ops/op_util.h
    ops/ops.h
    ops/parallel.h
    ops/random_ops.h
    ops/registry.h
    ops/resources.h
    ops/fused_kernels.h
    ops/fused_training_kernels.h
    ops/small_gemm.h
    ops/state_ops.h
    models/batches.h
    models/callbacks.h
    models/callbacks/callback.h
    models/callbacks/checkpoint.h
    models/callbacks/control.h
    models/callbacks/logging.h
    models/callbacks/model_access.h
    models/callbacks/monitor.h
    models/compile_config.h
    models/engine.h
    models/epoch_steps.h
    models/fit.h
    models/functional.h
    models/functional_config.h
    models/keras_json.h
    models/kind_registry.h
    models/layer.h
    models/layer_registry.h
    models/layer_state.h
    models/layers.h
    models/layers/conv_config.h
    models/layers/padding_cropping.h
    models/layers/recurrent.h
    models/layers/window_pooling.h
    models/learning_rate_schedule.h
    models/learning_rate_schedule_config.h
    models/loss_registry.h
    models/metric_registry.h
    models/metrics.h
    models/metrics/confusion_ratio.h
    models/load_budget.h
    models/load_weights.h
    models/losses.h
    models/model_config.h
    models/model_graph.h
    models/model_options.h
    models/model_data.h
    models/model_from_json.h
    models/model_state.h
    models/model_weights.h
    models/out_of_memory.h
    models/optimizer_registry.h
    models/optimizer_state.h
    models/optimizer_base.h
    models/optimizers.h
    models/optimizers/adam.h
    models/orthogonal.h
    models/random_seed.h
    models/recurrent_layers.h
    models/saving.h
    models/saving_access.h
    models/saving_types.h
    models/scheduled_learning_rate.h
    models/sample_weights.h
    models/sequential.h
    models/spatial_layers.h
    models/signature.h
    models/summary.h
    models/training.h
    serialize/attr_codec.h
    serialize/crc32c.h
    serialize/event_file.h
    serialize/frozen_graph.h
    serialize/graph_def.h
    serialize/hdf5_handles.h
    serialize/hdf5_image_driver.h
    serialize/hparams_summary.h
    serialize/keras_weights.h
    serialize/parse_budget.h
    serialize/scope_renaming.h
    serialize/tfrecord.h
)

set(GRAPHGC_PROTOS
    serialize/attr_value.proto
    serialize/event.proto
    serialize/graph.proto
    serialize/hparams_api.proto
    serialize/hparams_plugin_data.proto
    serialize/node_def.proto
    serialize/summary.proto
    serialize/tensor.proto
    serialize/tensor_shape.proto
    serialize/types.proto
    serialize/versions.proto
)

# One file per layer kind (models/layers/, globbed as Bazel does), and the
# registry's list of them that models/gen_builtin_kinds.sh writes.
file(GLOB GRAPHGC_LAYER_KIND_SOURCES CONFIGURE_DEPENDS
     "${CMAKE_CURRENT_SOURCE_DIR}/models/layers/*.cc")
list(SORT GRAPHGC_LAYER_KIND_SOURCES)
list(APPEND GRAPHGC_SOURCES ${GRAPHGC_LAYER_KIND_SOURCES})

# One file per optimizer (models/optimizers/), listed by hand in the table
# of models/optimizer_registry.cc.
file(GLOB GRAPHGC_OPTIMIZER_SOURCES CONFIGURE_DEPENDS
     "${CMAKE_CURRENT_SOURCE_DIR}/models/optimizers/*.cc")
list(SORT GRAPHGC_OPTIMIZER_SOURCES)
list(APPEND GRAPHGC_SOURCES ${GRAPHGC_OPTIMIZER_SOURCES})

# One file per loss (models/losses/, globbed as Bazel does), and the
# registry's list of them that models/gen_builtin_kinds.sh writes.
file(GLOB GRAPHGC_LOSS_KIND_SOURCES CONFIGURE_DEPENDS
     "${CMAKE_CURRENT_SOURCE_DIR}/models/losses/*.cc")
list(SORT GRAPHGC_LOSS_KIND_SOURCES)
list(APPEND GRAPHGC_SOURCES ${GRAPHGC_LOSS_KIND_SOURCES})

# One file per metric (models/metrics/, globbed as Bazel does), and the
# registry's list of them that models/gen_builtin_kinds.sh writes.
file(GLOB GRAPHGC_METRIC_KIND_SOURCES CONFIGURE_DEPENDS
     "${CMAKE_CURRENT_SOURCE_DIR}/models/metrics/*.cc")
list(SORT GRAPHGC_METRIC_KIND_SOURCES)
list(APPEND GRAPHGC_SOURCES ${GRAPHGC_METRIC_KIND_SOURCES})
