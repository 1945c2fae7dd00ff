# tests/approvals_cli.cmake - the approver's command line (`intentgate
# approver add`, `intentgate approvals ...`) against a real dev-mode PDP on
# loopback. The agent's side of the test uses curl; python3 reads JSON.
# Always registered: without curl the test fails naming it.
add_test(NAME cli.approvals
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_approvals.sh
          $<TARGET_FILE:intentgate>)
set_tests_properties(cli.approvals PROPERTIES TIMEOUT 180)
