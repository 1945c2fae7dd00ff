# Executor tests: the secrets store and its CLI (cmocka).
add_executable(test_secrets unit/test_secrets.c unit/secrets_util.c
  unit/testutil.c)
target_include_directories(test_secrets PRIVATE unit)
target_compile_definitions(test_secrets PRIVATE
  IG_VECTORS_DIR="${IG_VECTORS_DIR}")
target_link_libraries(test_secrets PRIVATE igexec PkgConfig::CMOCKA)
add_test(NAME executor.secrets COMMAND test_secrets)

# The offline grant checks (every refusal code).
add_executable(test_verify unit/test_verify.c unit/testutil.c)
target_include_directories(test_verify PRIVATE unit)
target_compile_definitions(test_verify PRIVATE
  IG_VECTORS_DIR="${IG_VECTORS_DIR}")
target_link_libraries(test_verify PRIVATE igexec PkgConfig::CMOCKA)
add_test(NAME executor.verify COMMAND test_verify)

# The sealed action registry: loading errors and parameter checks.
add_executable(test_registry unit/test_registry.c unit/testutil.c)
target_include_directories(test_registry PRIVATE unit)
target_compile_definitions(test_registry PRIVATE
  IG_VECTORS_DIR="${IG_VECTORS_DIR}")
target_link_libraries(test_registry PRIVATE igexec PkgConfig::CMOCKA)
add_test(NAME executor.registry COMMAND test_registry)

# The http handler against an in-process upstream on loopback.
add_executable(test_http unit/test_http.c unit/testutil.c)
target_include_directories(test_http PRIVATE unit)
target_compile_definitions(test_http PRIVATE
  IG_VECTORS_DIR="${IG_VECTORS_DIR}")
target_link_libraries(test_http PRIVATE igexec PkgConfig::MHD PkgConfig::CMOCKA)
add_test(NAME executor.http COMMAND test_http)

# End to end: a dev PDP, the real executor, a fake upstream on loopback.
add_test(NAME executor.integration
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_executor.py)
set_tests_properties(executor.integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;INTENTGATE_EXECUTOR_BIN=$<TARGET_FILE:intentgate-executor>"
  TIMEOUT 600)

# The exec handler's argv templates, process runner and bwrap sandbox.
add_executable(test_sandbox unit/test_sandbox.c unit/testutil.c)
target_include_directories(test_sandbox PRIVATE unit)
target_compile_definitions(test_sandbox PRIVATE
  IG_VECTORS_DIR="${IG_VECTORS_DIR}")
target_link_libraries(test_sandbox PRIVATE igexec PkgConfig::CMOCKA)
add_test(NAME executor.sandbox COMMAND test_sandbox)
