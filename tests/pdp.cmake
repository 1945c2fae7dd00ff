# PDP tests: store and config unit tests (cmocka), and the integration
# suite that starts the real `intentgate serve` on loopback and drives it
# over HTTP (Python standard library only).
foreach(name store config)
  add_executable(test_${name} unit/test_${name}.c unit/testutil.c)
  target_include_directories(test_${name} PRIVATE unit)
  target_compile_definitions(test_${name} PRIVATE
    IG_VECTORS_DIR="${IG_VECTORS_DIR}")
  target_link_libraries(test_${name} PRIVATE igpdp PkgConfig::CMOCKA)
  add_test(NAME pdp.${name} COMMAND test_${name})
endforeach()

find_program(PYTHON3 python3 REQUIRED)
add_test(NAME pdp.integration
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_pdp.py)
set_tests_properties(pdp.integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  TIMEOUT 900)
