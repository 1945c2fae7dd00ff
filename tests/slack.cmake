# tests/slack.cmake - Slack notifications and clicks: the cmocka tests of
# approval/appr_slack.c (signatures against Slack's published example,
# click payloads, messages), the integration test that runs a fake Slack
# API on loopback next to `intentgate serve --dev`, and the libFuzzer
# target for what reads a click (signature check and payload parse).
if(NOT IG_FUZZ)
  ig_test(approval slack LIBS igapproval)

  find_program(PYTHON3 python3 REQUIRED)
  add_test(NAME slack.integration
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_slack.py)
  set_tests_properties(slack.integration PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    TIMEOUT 900)
endif()

if(IG_FUZZ)
  add_executable(fuzz_slack fuzz/fuzz_slack.c)
  target_link_libraries(fuzz_slack PRIVATE igapproval)
  target_link_options(fuzz_slack PRIVATE -fsanitize=fuzzer)
endif()
