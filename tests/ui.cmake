# The approval web pages (included from tests/CMakeLists.txt): cmocka tests
# of the form decoder and the HTML renderers, the integration suite that
# signs in, reads and votes through /ui on the real `intentgate serve
# --dev`, and the form decoder's fuzz target.
if(NOT IG_FUZZ)
  ig_test(approval form LIBS igapproval)
  ig_test(approval html LIBS igapproval)

  find_program(PYTHON3 python3 REQUIRED)
  add_test(NAME ui.integration
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_ui.py)
  set_tests_properties(ui.integration PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    TIMEOUT 900)
endif()

if(IG_FUZZ)
  # The strict urlencoded decoder on untrusted POST bodies.
  add_executable(fuzz_form fuzz/fuzz_form.c)
  target_link_libraries(fuzz_form PRIVATE igapproval)
  target_link_options(fuzz_form PRIVATE -fsanitize=fuzzer)
endif()
