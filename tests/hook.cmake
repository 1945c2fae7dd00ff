# tests/hook.cmake - `intentgate hook claude-code` (included from
# tests/CMakeLists.txt): cmocka tests of the Bash command reader and of the
# tool mappings, the integration suite feeding the recorded Claude Code
# events in tests/hook/ to the real binary against a dev-mode PDP (and
# fake PDPs that answer garbage or hang), and the libFuzzer target.
if(NOT IG_FUZZ)
  ig_test(cli hook_shell LIBS igcli)
  ig_test(cli hook_map LIBS igcli)
  # The CLI's plain http transport (cli/cli_http_int.h).
  ig_test(cli cli_http LIBS igcli)
  target_compile_definitions(test_hook_map PRIVATE
    IG_HOOK_INPUTS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/hook")

  find_program(PYTHON3 python3 REQUIRED)
  ig_store_test(hook.integration
    ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_hook.py)
  set_tests_properties(hook.integration PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    TIMEOUT 600)
endif()

if(IG_FUZZ)
  # A PreToolUse event on stdin, mapped to an intent body (no network),
  # with the built-in mappings and with a fixed mapping file; the same
  # bytes also read as a mapping file.
  add_executable(fuzz_hook fuzz/fuzz_hook.c)
  target_link_libraries(fuzz_hook PRIVATE igcli)
  target_link_options(fuzz_hook PRIVATE -fsanitize=fuzzer)
  # An answer on the PDP's port, read by the CLI's plain http transport.
  add_executable(fuzz_http_answer fuzz/fuzz_http_answer.c)
  target_link_libraries(fuzz_http_answer PRIVATE igcli)
  target_link_options(fuzz_http_answer PRIVATE -fsanitize=fuzzer)
endif()

if(IG_BENCH AND NOT IG_FUZZ)
  # One short-lived command timed N times (tests/bench/bench_hook.sh).
  add_executable(bench_hook bench/bench_hook.c)
endif()
